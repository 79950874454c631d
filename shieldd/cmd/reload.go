package cmd

import (
	"context"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/observability"
	"github.com/parapet-dev/parapet/shieldd/auth"
	"github.com/parapet-dev/parapet/shieldd/evaluator"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/reload"
)

// startReloads loads --tenant-policy-dir into p and starts reloading the
// policies on SIGHUP and, with --watch-policy, on file changes. Both run
// before the listeners exist: a SIGHUP is never fatal, and a watch that
// cannot be set up stops startup. stop ends them.
func startReloads(c *cli.Context, log *slog.Logger, p *pipeline.Pipeline, metrics *observability.Metrics, authn auth.Authenticator) (_ *reload.Reloader, stop func(), _ error) {
	cfg := reload.Config{Pipeline: p, TenantDir: c.String("tenant-policy-dir"), Logger: log}
	if st, ok := authn.(*auth.StaticTokens); ok {
		cfg.Tokens = st // a nil *StaticTokens must not become a non-nil interface
	}
	r, err := reload.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := r.Instrument(metrics.Meter("parapet/shieldd")); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(c.Context)
	r.HandleHangup(ctx)
	if c.Bool("watch-policy") {
		if err := r.Watch(ctx, reload.DefaultDebounce); err != nil {
			cancel()
			return nil, nil, err
		}
	}
	return r, cancel, nil
}

// evaluatorAvailable is the Tier 2 evaluator's Available, or nil (a
// configured evaluator of another kind counts as connected).
func evaluatorAvailable(ev pipeline.Evaluator) func() bool {
	if e, ok := ev.(*evaluator.Evaluator); ok {
		return e.Available
	}
	return nil
}
