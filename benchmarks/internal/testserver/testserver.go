// Package testserver runs an in-process shieldd on loopback for tests and
// benchmarks: the production pipeline, metrics and gRPC server, bound to
// 127.0.0.1 on free ports.
package testserver

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/observability"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
	"github.com/parapet-dev/parapet/shieldd/shield"
	"github.com/parapet-dev/parapet/shieldd/tenant"
)

// Server is a running in-process shieldd.
type Server struct {
	GRPCAddr string
	// HTTPAddr is shieldd's HTTP mirror (/v1/evaluate, /metrics, …).
	HTTPAddr string
	Pipeline *pipeline.Pipeline
}

// Start serves a pipeline built from cfg until the test ends. Metrics are
// wired as in shieldd serve, so their cost is part of what is measured.
func Start(tb testing.TB, cfg pipeline.Config) *Server {
	tb.Helper()
	m, err := observability.NewMetrics()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := pipeline.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Instrument(m.Meter("parapet/shieldd"), m.Registry); err != nil {
		tb.Fatal(err)
	}
	// Logging as shieldd serve's default (info): what its interceptor
	// costs for calls it does not log is part of what is measured.
	log := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// Per-tenant decision counters, as shieldd serve keeps them
	// (--metrics-max-tenants 50).
	tm, err := tenant.NewMetrics(m.Registry, tenant.NewLabels(50, nil))
	if err != nil {
		tb.Fatal(err)
	}
	sh := &shield.Shield{Pipeline: p, Version: "bench", Logger: log, TenantMetrics: tm}
	d, err := server.Listen(server.NewService(sh), server.DaemonConfig{
		GRPCAddr: "127.0.0.1:0", HTTPAddr: "127.0.0.1:0", Metrics: m.Handler, DrainTimeout: 5 * time.Second, Logger: log,
	})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("shieldd: %v", err)
		}
	})
	return &Server{GRPCAddr: d.GRPCAddr(), HTTPAddr: d.HTTPAddr(), Pipeline: p}
}
