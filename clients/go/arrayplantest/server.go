// Package arrayplantest starts a real arrayplan server for tests, as net/http/httptest does for
// HTTP: `arrayplan serve` from a repository's virtual environment (make setup) on a free
// 127.0.0.1 port with a data directory of the test's, healthy when Start returns, stopped by PID.
package arrayplantest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// HealthName is the health service name only an arrayplan server answers SERVING for (a bare ""
// is also answered by other gRPC servers that may hold a port picked as free).
const HealthName = "arrayplan.v1.PlannerService"

// Server is a running `arrayplan serve`.
type Server struct {
	// Address is host:port on 127.0.0.1.
	Address string
	// DataDir is its run store directory.
	DataDir string
	// LogPath is the file its output goes to.
	LogPath string

	cmd    *exec.Cmd
	exited chan struct{}
}

// Options of Start.
type Options struct {
	// Repo is the repository whose .venv/bin/arrayplan runs (default $ARRAYPLAN_REPO).
	Repo string
	// DataDir is the run store directory (created).
	DataDir string
	// Global are flags before `serve` (e.g. --verbose); Args are serve's own flags.
	Global, Args []string
	// Creds are the health check's transport credentials (nil: plaintext).
	Creds credentials.TransportCredentials
	// Timeout bounds the wait for health (default 120 s).
	Timeout time.Duration
}

// Log is the server's output so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.LogPath)
	return string(b)
}

// Stop signals the server by PID (SIGTERM), waits up to 60 s (then SIGKILL), and kills what is
// left of its process group.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
}

// Start runs the server and returns once its planner health is SERVING. A port another process
// takes before the server binds it is picked again (twice).
func Start(o Options) (*Server, error) {
	if o.Repo == "" {
		o.Repo = os.Getenv("ARRAYPLAN_REPO")
	}
	if o.Timeout == 0 {
		o.Timeout = 120 * time.Second
	}
	exe := filepath.Join(o.Repo, ".venv", "bin", "arrayplan")
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("%s not found: run `make setup` in the repository (or set ARRAYPLAN_REPO)", exe)
	}
	if err := os.MkdirAll(o.DataDir, 0o700); err != nil {
		return nil, err
	}
	var lastErr error
	for try := 0; try < 3; try++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &Server{Address: fmt.Sprintf("127.0.0.1:%d", port), DataDir: o.DataDir,
			LogPath: filepath.Join(o.DataDir, fmt.Sprintf("server-%d.log", port))}
		logFile, err := os.Create(s.LogPath)
		if err != nil {
			return nil, err
		}
		args := append(append(append([]string{}, o.Global...), "serve", "--port", fmt.Sprint(port), "--data-dir", o.DataDir), o.Args...)
		s.cmd = exec.Command(exe, args...)
		s.cmd.Dir = o.Repo
		s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
		s.cmd.Env = append(os.Environ(), "RAY_DISABLE_USAGE_STATS=1")
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		err = s.cmd.Start()
		logFile.Close()
		if err != nil {
			return nil, err
		}
		s.exited = make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(s.exited) }()
		if lastErr = s.waitHealthy(o.Creds, o.Timeout); lastErr == nil {
			return s, nil
		}
		s.Stop()
		if !strings.Contains(s.Log(), "cannot listen on") {
			return nil, lastErr
		}
	}
	return nil, lastErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) waitHealthy(creds credentials.TransportCredentials, timeout time.Duration) error {
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(s.Address, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("server exited:\n%s", s.Log())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: HealthName})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("server on %s not healthy after %s:\n%s", s.Address, timeout, s.Log())
}
