package arrayplan_test

// The tests run against the real server: TestMain starts `arrayplan serve` (arrayplantest) from the repository's
// virtual environment (make setup) on a free 127.0.0.1 port with a temporary data directory,
// waits for its health, and stops it by PID (SIGTERM, then SIGKILL of its process group).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/arrayplan/arrayplan/clients/go/arrayplantest"
)

// Heavy-call admission of the test server: one heavy call per caller, so a second one is refused
// with RESOURCE_EXHAUSTED and a RetryInfo of max(1 s, 10 s x 1 / 16 running slots) = 1 s
// (services/arrayplan_services/server/heavy.py, HeavyAdmission._retry_s).
var serverArgs = []string{"--executor", "local", "--max-running-heavy", "16", "--max-queued-heavy", "0", "--max-heavy-per-caller", "1"}

// server is the plaintext server every test but the TLS one uses.
var server *arrayplantest.Server

func repoRoot() string {
	if r := os.Getenv("ARRAYPLAN_REPO"); r != "" {
		return r
	}
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

// startServer runs `arrayplan --verbose serve` (the heavy-call admission's lines are INFO: the
// retry test waits for one) with extra flags; creds are the health check's (nil: plaintext).
func startServer(dataDir string, creds credentials.TransportCredentials, extra ...string) (*arrayplantest.Server, error) {
	return arrayplantest.Start(arrayplantest.Options{Repo: repoRoot(), DataDir: dataDir, Global: []string{"--verbose"}, Args: extra, Creds: creds})
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "arrayplan-go-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	server, err = startServer(dir, nil, serverArgs...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the arrayplan server:", err)
		return 1
	}
	defer server.Stop()
	// The examples read the server's address as a program would: from $ARRAYPLAN_SERVER.
	os.Setenv("ARRAYPLAN_SERVER", server.Address)
	return m.Run()
}

// waitForLog waits until the server's log matches re (at most timeout).
func waitForLog(t *testing.T, s *arrayplantest.Server, re *regexp.Regexp, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !re.MatchString(s.Log()) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the server log after %s:\n%s", re, timeout, s.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
