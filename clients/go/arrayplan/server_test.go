package arrayplan_test

// The tests run against the real server: TestMain starts `arrayplan serve` (arrayplantest) from the repository's
// virtual environment (make setup) on a free 127.0.0.1 port with a temporary data directory,
// waits for its health, and stops it by PID (SIGTERM, then SIGKILL of its process group).

import (
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
