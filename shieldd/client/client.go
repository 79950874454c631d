// Package client is the Go client of shieldd for engines and tools: it
// dials one address or a DNS name with several replicas, balances round
// robin, retries UNAVAILABLE, puts a deadline on every call and propagates
// trace context. Every error means the action must not run.
package client

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// ServiceConfig is the gRPC service config shipped for shieldd clients:
// round robin over every address the name resolves to, and up to four
// attempts on UNAVAILABLE (a replica stopping or unreachable). Evaluate is
// idempotent, so a retry can never run an action twice. See
// docs/shieldd-clients.md.
//
//go:embed service_config.json
var ServiceConfig string

// Options configure Dial. Zero values take the defaults.
type Options struct {
	// Timeout bounds each call, retries included (default 5 s).
	Timeout time.Duration
	// Token is sent as "authorization: Bearer <token>" on every call.
	Token string
	// TLS enables transport security (and mTLS when it has a client
	// certificate); nil means plaintext, for loopback and private networks.
	TLS *tls.Config
	// DialOptions are appended (tests, custom resolvers).
	DialOptions []grpc.DialOption
}

// Client calls ShieldService.
type Client struct {
	conn    *grpc.ClientConn
	shield  pb.ShieldServiceClient
	timeout time.Duration
	target  string
}

// Dial prepares a client for target: "host:port" or "dns:///name:port".
// Connections are made lazily; the first call reports an unreachable shieldd.
func Dial(target string, o Options) (*Client, error) {
	target = strings.TrimSpace(target)
	if target == "" {
		return nil, errors.New("shieldd address is empty")
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	creds := insecure.NewCredentials()
	if o.TLS != nil {
		creds = credentials.NewTLS(o.TLS)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultServiceConfig(ServiceConfig),
		grpc.WithStatsHandler(otelgrpc.NewClientHandler()),
	}
	if o.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{token: o.Token, secure: o.TLS != nil}))
	}
	opts = append(opts, o.DialOptions...)
	if !strings.Contains(target, "://") {
		// The dns resolver re-resolves on failure, so replicas behind one
		// name are all used and a replaced one is found again.
		target = "dns:///" + target
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("shieldd %s: %w", target, err)
	}
	return &Client{conn: conn, shield: pb.NewShieldServiceClient(conn), timeout: o.Timeout, target: target}, nil
}

// Target is the address the client dials.
func (c *Client) Target() string { return c.target }

// Evaluate asks shieldd for a verdict. A verdict without a decision is an
// error: an unset decision must never be read as ALLOW.
func (c *Client) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.shield.Evaluate(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("shieldd %s: %w", c.target, err)
	}
	v := resp.GetVerdict()
	if !v.GetDecision().Decided() {
		return nil, fmt.Errorf("shieldd %s answered without a decision", c.target)
	}
	return v, nil
}

// ReportOutcome tells shieldd what became of an escalated action.
func (c *Client) ReportOutcome(ctx context.Context, req *pb.ReportOutcomeRequest) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if _, err := c.shield.ReportOutcome(ctx, req); err != nil {
		return fmt.Errorf("shieldd %s: report outcome: %w", c.target, err)
	}
	return nil
}

// Health calls ShieldService.Health.
func (c *Client) Health(ctx context.Context) (*pb.HealthResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.shield.Health(ctx, &pb.HealthRequest{})
}

// Conn exposes the connection (streaming callers, benchmarks).
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close releases the connection.
func (c *Client) Close() error { return c.conn.Close() }

type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

// RequireTransportSecurity is false only for plaintext dials, which Dial
// allows for loopback and private networks where shieldd's auth=none or a
// bearer token over a trusted network is the operator's choice.
func (b bearer) RequireTransportSecurity() bool { return b.secure }
