package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/auth"
)

// DaemonConfig configures a running shieldd.
type DaemonConfig struct {
	GRPCAddr string
	// HTTPAddr may be empty to disable the HTTP mirror.
	HTTPAddr        string
	MaxMessageBytes int
	// DrainTimeout bounds graceful shutdown (default 10 s).
	DrainTimeout time.Duration
	Metrics      http.Handler
	Logger       *slog.Logger
	// Guard authenticates callers. Without an authenticator every listener
	// must be on a loopback address: Listen refuses anything else.
	Guard *auth.Guard
	// TLS serves gRPC and HTTP over TLS; nil is plaintext.
	TLS *tls.Config
}

// Daemon is shieldd's listeners and servers.
type Daemon struct {
	cfg      DaemonConfig
	svc      *ShieldService
	grpc     *grpc.Server
	health   *health.Server
	http     *http.Server
	grpcLis  net.Listener
	httpLis  net.Listener
	ready    atomic.Bool
	log      *slog.Logger
	serveErr chan error
}

// Listen binds the listeners. Serve starts answering.
func Listen(svc *ShieldService, cfg DaemonConfig) (*Daemon, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 10 * time.Second
	}
	d := &Daemon{cfg: cfg, svc: svc, log: cfg.Logger, serveErr: make(chan error, 2)}
	var err error
	if d.grpcLis, err = net.Listen("tcp", cfg.GRPCAddr); err != nil {
		return nil, fmt.Errorf("gRPC listen on %s: %w", cfg.GRPCAddr, err)
	}
	if cfg.HTTPAddr != "" {
		if d.httpLis, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			d.grpcLis.Close()
			return nil, fmt.Errorf("HTTP listen on %s: %w", cfg.HTTPAddr, err)
		}
	}
	if cfg.Guard == nil || cfg.Guard.Auth == nil {
		// Checked on the bound addresses: ":7700" binds every interface.
		for _, l := range []net.Listener{d.grpcLis, d.httpLis} {
			if l != nil && !auth.IsLoopback(l.Addr()) {
				d.closeListeners()
				return nil, fmt.Errorf("--auth none is only allowed when every listener is on a loopback address, "+
					"but %s is not; listen on 127.0.0.1 or choose --auth static, hmac or mtls", l.Addr())
			}
		}
	} else if cfg.TLS == nil {
		for _, l := range []net.Listener{d.grpcLis, d.httpLis} {
			if l != nil && !auth.IsLoopback(l.Addr()) && cfg.Guard.Auth.Mode() != auth.ModeMTLS {
				cfg.Logger.Warn("bearer tokens will cross the network in clear text; set --tls-cert and --tls-key", "listener", l.Addr().String())
				break
			}
		}
	}
	d.grpc, d.health = NewGRPC(svc, GRPCOptions{Logger: cfg.Logger, MaxMessageBytes: cfg.MaxMessageBytes, Guard: cfg.Guard, TLS: cfg.TLS})
	if d.httpLis != nil {
		if cfg.TLS != nil {
			d.httpLis = tls.NewListener(d.httpLis, httpTLS(cfg.TLS))
		}
		d.http = &http.Server{
			Handler: NewHTTP(svc, HTTPOptions{
				Metrics: cfg.Metrics, MaxMessageBytes: cfg.MaxMessageBytes, Ready: &d.ready, Guard: cfg.Guard,
			}),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
		}
	}
	return d, nil
}

func (d *Daemon) closeListeners() {
	d.grpcLis.Close()
	if d.httpLis != nil {
		d.httpLis.Close()
	}
}

// httpTLS is the server's TLS configuration for HTTP/1.1 and h2.
func httpTLS(c *tls.Config) *tls.Config {
	c = c.Clone()
	c.NextProtos = []string{"h2", "http/1.1"}
	return c
}

// GRPCAddr is the bound gRPC address.
func (d *Daemon) GRPCAddr() string { return d.grpcLis.Addr().String() }

// HTTPAddr is the bound HTTP address, or "" when disabled.
func (d *Daemon) HTTPAddr() string {
	if d.httpLis == nil {
		return ""
	}
	return d.httpLis.Addr().String()
}

// Serve answers requests until ctx is cancelled, then drains: readiness
// goes false and health NOT_SERVING, in-flight calls finish (bounded by
// DrainTimeout), and the listeners close.
func (d *Daemon) Serve(ctx context.Context) error {
	go func() { d.serveErr <- d.grpc.Serve(d.grpcLis) }()
	if d.http != nil {
		go func() {
			if err := d.http.Serve(d.httpLis); !errors.Is(err, http.ErrServerClosed) {
				d.serveErr <- err
			}
		}()
	}
	d.ready.Store(true)
	var err error
	select {
	case <-ctx.Done():
	case err = <-d.serveErr:
		d.log.Error("server stopped", "err", err)
	}
	d.shutdown()
	return err
}

func (d *Daemon) shutdown() {
	d.ready.Store(false)
	d.health.Shutdown() // every service NOT_SERVING: balancers stop sending
	d.svc.StopStreams() // streams would otherwise last as long as their clients
	drained := make(chan struct{})
	go func() {
		d.grpc.GracefulStop()
		close(drained)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.DrainTimeout)
	defer cancel()
	if d.http != nil {
		if err := d.http.Shutdown(ctx); err != nil {
			d.log.Warn("HTTP drain incomplete", "err", err)
		}
	}
	select {
	case <-drained:
	case <-ctx.Done():
		d.log.Warn("gRPC drain timed out; closing remaining calls")
		d.grpc.Stop()
	}
}

// SetServing marks the gRPC health status and HTTP readiness (used by
// tests, reloads, and when the audit log fails).
func (d *Daemon) SetServing(serving bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if serving {
		st = healthpb.HealthCheckResponse_SERVING
	}
	d.health.SetServingStatus("", st)
	d.health.SetServingStatus(pb.ShieldService_ServiceDesc.ServiceName, st)
	d.ready.Store(serving)
}
