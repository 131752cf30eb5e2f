package arrayplan_test

// The tests run against the real server: TestMain starts `arrayplan serve` from the repository's
// virtual environment (make setup) on a free 127.0.0.1 port with a temporary data directory,
// waits for its health, and stops it by PID (SIGTERM, then SIGKILL of its process group).

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// plannerHealthName is the health service name only an arrayplan server answers SERVING for.
const plannerHealthName = "arrayplan.v1.PlannerService"

// Heavy-call admission of the test server: one heavy call per caller, so a second one is refused
// with RESOURCE_EXHAUSTED and a RetryInfo of max(1 s, 10 s x 1 / 16 running slots) = 1 s
// (services/arrayplan_services/server/heavy.py, HeavyAdmission._retry_s).
var serverArgs = []string{"--executor", "local", "--max-running-heavy", "16", "--max-queued-heavy", "0", "--max-heavy-per-caller", "1"}

// server is the plaintext server every test but the TLS one uses.
var server *serverProcess

type serverProcess struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has exited (the one cmd.Wait)
	address string
	dataDir string
	logPath string
}

func (s *serverProcess) log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

// stop signals the server by PID, waits up to 60 s, then kills what is left of its process group.
func (s *serverProcess) stop() {
	if s == nil || s.cmd.Process == nil {
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

func repoRoot() string {
	if r := os.Getenv("ARRAYPLAN_REPO"); r != "" {
		return r
	}
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", "..", ".."))
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServer runs `arrayplan serve` with extra flags; creds are the health check's transport
// credentials (nil: plaintext). It returns once the planner's health is SERVING.
func startServer(dataDir string, creds credentials.TransportCredentials, extra ...string) (*serverProcess, error) {
	exe := filepath.Join(repoRoot(), ".venv", "bin", "arrayplan")
	if _, err := os.Stat(exe); err != nil {
		return nil, fmt.Errorf("%s not found: run `make setup` in the repository first", exe)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	var lastErr error
	for try := 0; try < 3; try++ { // a port another process takes before the server binds it is picked again
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &serverProcess{address: fmt.Sprintf("127.0.0.1:%d", port), dataDir: dataDir,
			logPath: filepath.Join(dataDir, fmt.Sprintf("server-%d.log", port))}
		logFile, err := os.Create(s.logPath)
		if err != nil {
			return nil, err
		}
		// --verbose: the heavy-call admission's lines are INFO (the retry test waits for one).
		args := append([]string{"--verbose", "serve", "--port", fmt.Sprint(port), "--data-dir", dataDir}, extra...)
		s.cmd = exec.Command(exe, args...)
		s.cmd.Dir = repoRoot()
		s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
		s.cmd.Env = append(os.Environ(), "RAY_DISABLE_USAGE_STATS=1")
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := s.cmd.Start(); err != nil {
			logFile.Close()
			return nil, err
		}
		logFile.Close()
		s.exited = make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(s.exited) }()
		if lastErr = waitHealthy(s, creds, 120*time.Second); lastErr == nil {
			return s, nil
		}
		s.stop()
		if !strings.Contains(s.log(), "cannot listen on") {
			return nil, lastErr
		}
	}
	return nil, lastErr
}

func waitHealthy(s *serverProcess, creds credentials.TransportCredentials, timeout time.Duration) error {
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	conn, err := grpc.NewClient(s.address, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("server exited:\n%s", s.log())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: plannerHealthName})
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return nil
		}
		time.Sleep(300 * time.Millisecond)
	}
	return fmt.Errorf("server on %s not healthy after %s:\n%s", s.address, timeout, s.log())
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
	defer server.stop()
	// The examples read the server's address as a program would: from $ARRAYPLAN_SERVER.
	os.Setenv("ARRAYPLAN_SERVER", server.address)
	return m.Run()
}

// waitForLog waits until the server's log matches re (at most timeout).
func waitForLog(t *testing.T, s *serverProcess, re *regexp.Regexp, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !re.MatchString(s.log()) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the server log after %s:\n%s", re, timeout, s.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// pki is a certificate authority made by the test, a server certificate for 127.0.0.1 and a
// client certificate, all as PEM files in dir.
type pki struct{ ca, serverCert, serverKey, clientCert, clientKey string }

func makePKI(dir string) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "arrayplan test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p := &pki{ca: filepath.Join(dir, "ca.pem"), serverCert: filepath.Join(dir, "server.pem"), serverKey: filepath.Join(dir, "server.key"),
		clientCert: filepath.Join(dir, "client.pem"), clientKey: filepath.Join(dir, "client.key")}
	if err := writePEM(p.ca, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, certPath, keyPath string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(keyPath, "PRIVATE KEY", keyDER)
	}
	if err := leaf(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, p.serverCert, p.serverKey); err != nil {
		return nil, err
	}
	if err := leaf(3, "arrayplan test client", x509.ExtKeyUsageClientAuth, p.clientCert, p.clientKey); err != nil {
		return nil, err
	}
	return p, nil
}

// clientCredentials trust the test CA and present the client certificate (the health check of a
// server with mutual TLS).
func (p *pki) clientCredentials() (credentials.TransportCredentials, error) {
	pair, err := tls.LoadX509KeyPair(p.clientCert, p.clientKey)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(p.ca)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return credentials.NewTLS(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}), nil
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}
