package arrayplan

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Defaults of a Client's options.
const (
	// DefaultTimeout is the deadline of a unary call whose context has none (WithTimeout).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRetries is how often a call refused with RESOURCE_EXHAUSTED (with a RetryInfo) or
	// UNAVAILABLE is tried again (WithMaxRetries).
	DefaultMaxRetries = 5
	// DefaultMaxRetryDelay caps one wait between attempts, whatever the server's RetryInfo says
	// (WithMaxRetryDelay).
	DefaultMaxRetryDelay = 60 * time.Second
	// DefaultMaxRecvBytes is the largest response accepted: a plan with its result is well under it.
	DefaultMaxRecvBytes = 64 << 20
)

// Option configures NewClient. Options are applied in order; an option that cannot be applied
// (an unreadable CA file) makes NewClient return its error.
type Option func(*config) error

type config struct {
	plaintext         bool
	tokenOverPlain    bool
	tlsConfig         *tls.Config
	caFile            string
	certFile, keyFile string
	serverName        string
	token             string
	timeout           time.Duration
	maxRetries        int
	maxRetryDelay     time.Duration
	baseRetryDelay    time.Duration
	retryObserver     func(RetryEvent)
	tracerProvider    trace.TracerProvider
	propagators       propagation.TextMapPropagator
	maxRecvBytes      int
	dialOpts          []grpc.DialOption
}

func defaultConfig() *config {
	return &config{
		timeout:        DefaultTimeout,
		maxRetries:     DefaultMaxRetries,
		maxRetryDelay:  DefaultMaxRetryDelay,
		baseRetryDelay: 250 * time.Millisecond,
		propagators:    propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
		maxRecvBytes:   DefaultMaxRecvBytes,
	}
}

// WithPlaintext connects without TLS (a server started without --tls-cert, e.g. on 127.0.0.1).
// A bearer token is then refused unless WithTokenOverPlaintext is given too.
func WithPlaintext() Option {
	return func(c *config) error { c.plaintext = true; return nil }
}

// WithTLSCACert trusts the PEM CA certificate(s) in path instead of the system's roots (a server
// whose certificate a private CA signed).
func WithTLSCACert(path string) Option {
	return func(c *config) error { c.caFile = path; return nil }
}

// WithTLSClientCert presents this PEM certificate and key (mutual TLS: a server started with
// --tls-client-ca).
func WithTLSClientCert(certFile, keyFile string) Option {
	return func(c *config) error { c.certFile, c.keyFile = certFile, keyFile; return nil }
}

// WithTLSServerName checks the server's certificate for this name instead of the endpoint's host.
func WithTLSServerName(name string) Option {
	return func(c *config) error { c.serverName = name; return nil }
}

// WithTLSConfig uses this TLS configuration as the base (cloned); the CA, client certificate and
// server name options still apply on top of it.
func WithTLSConfig(cfg *tls.Config) Option {
	return func(c *config) error {
		if cfg == nil {
			return errors.New("arrayplan: WithTLSConfig: config is nil")
		}
		c.tlsConfig = cfg.Clone()
		return nil
	}
}

// WithToken sends a bearer token with every call (a server started with --auth-token-file).
// Over plaintext NewClient refuses it unless WithTokenOverPlaintext is given.
func WithToken(token string) Option {
	return func(c *config) error { c.token = token; return nil }
}

// WithTokenOverPlaintext allows a bearer token over a plaintext connection: anyone on the path
// can read it. Meant for a server on the loopback interface only.
func WithTokenOverPlaintext() Option {
	return func(c *config) error { c.tokenOverPlain = true; return nil }
}

// WithTimeout sets the deadline of a unary call whose context has none (default DefaultTimeout;
// 0: none). It covers every retry of the call. Streams (WatchPlan, Plan) get no default deadline:
// a plan runs as long as it needs; bound it with the context.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("arrayplan: WithTimeout: must be >= 0, got %s", d)
		}
		c.timeout = d
		return nil
	}
}

// WithMaxRetries sets how many times a unary call refused with UNAVAILABLE, or with
// RESOURCE_EXHAUSTED and a RetryInfo (a full run queue, busy heavy-call slots), is tried again
// (default DefaultMaxRetries; 0: never). RESOURCE_EXHAUSTED without a RetryInfo (a candidate space
// over the server's limit) is not retried: trying again gives the same answer.
func WithMaxRetries(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("arrayplan: WithMaxRetries: must be >= 0, got %d", n)
		}
		c.maxRetries = n
		return nil
	}
}

// WithMaxRetryDelay caps one wait between attempts (default DefaultMaxRetryDelay). The wait is
// the server's RetryInfo delay, or without one an exponential backoff from 250 ms.
func WithMaxRetryDelay(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("arrayplan: WithMaxRetryDelay: must be > 0, got %s", d)
		}
		c.maxRetryDelay = d
		return nil
	}
}

// WithRetryObserver calls fn before each wait between attempts (for logs and metrics).
func WithRetryObserver(fn func(RetryEvent)) Option {
	return func(c *config) error { c.retryObserver = fn; return nil }
}

// WithTracerProvider traces calls with tp instead of the global tracer provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) error { c.tracerProvider = tp; return nil }
}

// WithPropagators injects the call's trace context with p (default: W3C trace context and
// baggage, what the server reads).
func WithPropagators(p propagation.TextMapPropagator) Option {
	return func(c *config) error { c.propagators = p; return nil }
}

// WithDialOptions appends raw gRPC dial options (after the client's own).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *config) error { c.dialOpts = append(c.dialOpts, opts...); return nil }
}

func (c *config) transportCredentials() (credentials.TransportCredentials, error) {
	tlsAsked := c.caFile != "" || c.certFile != "" || c.keyFile != "" || c.tlsConfig != nil || c.serverName != ""
	if c.plaintext {
		if tlsAsked {
			return nil, errors.New("arrayplan: WithPlaintext cannot be combined with TLS options")
		}
		if c.token != "" && !c.tokenOverPlain {
			return nil, errors.New("arrayplan: refusing to send a bearer token over plaintext: use TLS, " +
				"or WithTokenOverPlaintext for a server on the loopback interface")
		}
		return insecure.NewCredentials(), nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.tlsConfig != nil {
		cfg = c.tlsConfig
	}
	if c.caFile != "" {
		pem, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, fmt.Errorf("arrayplan: WithTLSCACert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("arrayplan: WithTLSCACert: no PEM certificate in %s", c.caFile)
		}
		cfg.RootCAs = pool
	}
	if c.certFile != "" || c.keyFile != "" {
		if c.certFile == "" || c.keyFile == "" {
			return nil, errors.New("arrayplan: WithTLSClientCert: both the certificate and the key file are required")
		}
		pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return nil, fmt.Errorf("arrayplan: WithTLSClientCert: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if c.serverName != "" {
		cfg.ServerName = c.serverName
	}
	return credentials.NewTLS(cfg), nil
}
