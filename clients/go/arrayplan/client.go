// Package arrayplan is the Go client of the arrayplan capacity planner's gRPC API
// (arrayplan.v1.PlannerService).
//
// A Client embeds the generated PlannerServiceClient, so every RPC of the API is a method of it,
// and adds what a provisioning tool needs around them: TLS (system roots, a CA file, mutual TLS),
// bearer tokens, retries of RESOURCE_EXHAUSTED and UNAVAILABLE after the server's RetryInfo delay,
// a default deadline per call, OpenTelemetry tracing through otelgrpc (the server's spans join the
// caller's trace), typed errors for INVALID_ARGUMENT, Plan (create a plan and follow it to the
// end) and PlanFromYAML (the server parses a plan file: one grammar for every client).
//
//	c, err := arrayplan.NewClient("127.0.0.1:50051", arrayplan.WithPlaintext())
//	if err != nil { ... }
//	defer c.Close()
//	spec, _, err := c.PlanFromYAML(ctx, planFileText)
//	plan, err := c.Plan(ctx, spec, arrayplan.WithProgress(func(p *arrayplanv1.PlanProgress) { ... }))
package arrayplan

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"

	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

// Client calls one arrayplan server. Every PlannerService RPC is a method (the embedded
// generated client); unary calls get the client's deadline, retries and typed errors.
// A Client is safe for concurrent use; Close it when done.
type Client struct {
	arrayplanv1.PlannerServiceClient

	conn *grpc.ClientConn
	cfg  *config
}

// NewClient returns a client of the server at endpoint ("host:port", or any target grpc.NewClient
// accepts). It does not connect: the first call does. By default it speaks TLS with the system's
// roots; WithPlaintext for a server without TLS (such as `make run` on 127.0.0.1).
func NewClient(endpoint string, opts ...Option) (*Client, error) {
	if endpoint == "" {
		return nil, errors.New("arrayplan: endpoint is required (host:port, e.g. 127.0.0.1:50051)")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(cfg); err != nil {
			return nil, err
		}
	}
	dialOpts, err := cfg.dialOptions()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(endpoint, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("arrayplan: %w", err)
	}
	return &Client{PlannerServiceClient: arrayplanv1.NewPlannerServiceClient(conn), conn: conn, cfg: cfg}, nil
}

// Conn is the client's connection, e.g. for the gRPC health service.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection; calls in flight end with CANCELED.
func (c *Client) Close() error { return c.conn.Close() }

func (cfg *config) dialOptions() ([]grpc.DialOption, error) {
	creds, err := cfg.transportCredentials()
	if err != nil {
		return nil, err
	}
	out := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if cfg.token != "" {
		out = append(out, grpc.WithPerRPCCredentials(bearerToken{token: cfg.token, secure: !cfg.plaintext}))
	}
	otelOpts := []otelgrpc.Option{otelgrpc.WithPropagators(cfg.propagators)}
	if cfg.tracerProvider != nil {
		otelOpts = append(otelOpts, otelgrpc.WithTracerProvider(cfg.tracerProvider))
	}
	out = append(out,
		grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelOpts...)),
		// Outermost first: the deadline covers every attempt, errors are typed once at the end.
		grpc.WithChainUnaryInterceptor(typedErrorsUnary, cfg.deadlineUnary, cfg.retryUnary),
		grpc.WithChainStreamInterceptor(typedErrorsStream),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(cfg.maxRecvBytes)),
	)
	return append(out, cfg.dialOpts...), nil
}

// bearerToken sends "authorization: Bearer TOKEN" with every call.
type bearerToken struct {
	token  string
	secure bool
}

func (b bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity: true unless the caller opted in to tokens over plaintext
// (WithTokenOverPlaintext), so gRPC itself refuses to send the token unencrypted.
func (b bearerToken) RequireTransportSecurity() bool { return b.secure }
