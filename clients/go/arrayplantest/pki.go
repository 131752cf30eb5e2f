package arrayplantest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc/credentials"
)

// PKI is a certificate authority made for a test, a server certificate for 127.0.0.1 and
// localhost, and a client certificate, all as PEM files (the server's flags: --tls-cert
// ServerCert --tls-key ServerKey, and --tls-client-ca CA for mutual TLS).
type PKI struct{ CA, ServerCert, ServerKey, ClientCert, ClientKey string }

// NewPKI writes a fresh PKI (ECDSA P-256, valid for a day) into dir.
func NewPKI(dir string) (*PKI, error) {
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
	p := &PKI{CA: filepath.Join(dir, "ca.pem"), ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server.key"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client.key")}
	if err := writePEM(p.CA, "CERTIFICATE", caDER); err != nil {
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
	if err := leaf(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, p.ServerCert, p.ServerKey); err != nil {
		return nil, err
	}
	if err := leaf(3, "arrayplan test client", x509.ExtKeyUsageClientAuth, p.ClientCert, p.ClientKey); err != nil {
		return nil, err
	}
	return p, nil
}

// ClientCredentials trust the CA and present the client certificate (e.g. Options.Creds of a
// server with mutual TLS).
func (p *PKI) ClientCredentials() (credentials.TransportCredentials, error) {
	pair, err := tls.LoadX509KeyPair(p.ClientCert, p.ClientKey)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(p.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return credentials.NewTLS(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}), nil
}

// Secured is a server secured both ways for a test: a PKI for mutual TLS, a token file with one
// caller, and the client credentials that trust the CA and present the client certificate.
type Secured struct {
	*PKI
	Tokens string // the server's --auth-token-file
	Creds  credentials.TransportCredentials
}

// NewSecured writes a PKI and a token file naming caller with token into dir.
func NewSecured(dir, caller, token string) (*Secured, error) {
	p, err := NewPKI(dir)
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(caller+" "+token+"\n"), 0o600); err != nil {
		return nil, err
	}
	creds, err := p.ClientCredentials()
	if err != nil {
		return nil, err
	}
	return &Secured{PKI: p, Tokens: tokens, Creds: creds}, nil
}

// ServerArgs are the server's flags for mutual TLS with the token file.
func (s *Secured) ServerArgs() []string {
	return []string{"--tls-cert", s.ServerCert, "--tls-key", s.ServerKey, "--tls-client-ca", s.CA, "--auth-token-file", s.Tokens}
}

func writePEM(path, kind string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600)
}
