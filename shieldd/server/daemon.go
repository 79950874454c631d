package server

import (
	"context"
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
}

// Daemon is shieldd's listeners and servers.
type Daemon struct {
	cfg      DaemonConfig
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
	d := &Daemon{cfg: cfg, log: cfg.Logger, serveErr: make(chan error, 2)}
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
	d.grpc, d.health = NewGRPC(svc, GRPCOptions{Logger: cfg.Logger, MaxMessageBytes: cfg.MaxMessageBytes})
	if d.httpLis != nil {
		d.http = &http.Server{
			Handler: NewHTTP(svc, HTTPOptions{
				Metrics: cfg.Metrics, MaxMessageBytes: cfg.MaxMessageBytes, Ready: &d.ready,
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

// SetServing marks the gRPC health status (used by tests and reloads).
func (d *Daemon) SetServing(serving bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if serving {
		st = healthpb.HealthCheckResponse_SERVING
	}
	d.health.SetServingStatus("", st)
}
