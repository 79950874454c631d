package cmd

import (
	"context"
	"crypto/tls"
	"os"
	"os/signal"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/urfave/cli/v2/altsrc"

	"github.com/parapet-dev/parapet/observability"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/auth"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
	"github.com/parapet-dev/parapet/shieldd/shield"
	"github.com/parapet-dev/parapet/shieldd/tenant"
)

func serveFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "config", Usage: "optional YAML `FILE` whose keys are these flag names", EnvVars: []string{"SHIELDD_CONFIG"}},
		altsrc.NewStringFlag(&cli.StringFlag{Name: "grpc-addr", Value: "127.0.0.1:7700", Usage: "gRPC listen `ADDR`", EnvVars: []string{"SHIELDD_GRPC_ADDR"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "http-addr", Value: "127.0.0.1:7701", Usage: "HTTP listen `ADDR` (\"off\" disables)", EnvVars: []string{"SHIELDD_HTTP_ADDR"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "policy", Value: "default", Usage: "policy `FILE`, or the name of an embedded policy (default, strict, permissive)", EnvVars: []string{"SHIELDD_POLICY"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "cache-size", Value: 100_000, Usage: "cached verdicts (0 disables the cache); together they hold at most 512 bytes of their own per verdict of this size, so heavier verdicts fill it to fewer", EnvVars: []string{"SHIELDD_CACHE_SIZE"}}),
		altsrc.NewDurationFlag(&cli.DurationFlag{Name: "cache-ttl", Value: 5 * time.Minute, Usage: "lifetime of a cached verdict", EnvVars: []string{"SHIELDD_CACHE_TTL"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "memory-limit", Value: "auto", Usage: "soft limit on the Go runtime's memory (`SIZE` such as 256MiB, as GOMEMLIMIT): the collector works harder near it, nothing fails above it. auto: 24MiB plus 160 bytes per cached verdict, raised while the live heap needs more (24MiB plus 1.5 times the live heap), unless GOMEMLIMIT is set; while the live heap is under half of it, the collector runs only at the limit (GOGC off, unless GOGC is set); off: none", EnvVars: []string{"SHIELDD_MEMORY_LIMIT"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "max-message-bytes", Value: server.DefaultMaxMessageBytes, Usage: "largest gRPC message or HTTP body", EnvVars: []string{"SHIELDD_MAX_MESSAGE_BYTES"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "max-payload-bytes", Value: action.DefaultLimits.MaxPayloadBytes, Usage: "largest action payload_json", EnvVars: []string{"SHIELDD_MAX_PAYLOAD_BYTES"}}),
		altsrc.NewDurationFlag(&cli.DurationFlag{Name: "drain-timeout", Value: 10 * time.Second, Usage: "graceful shutdown bound", EnvVars: []string{"SHIELDD_DRAIN_TIMEOUT"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"SHIELDD_LOG_LEVEL"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json", EnvVars: []string{"SHIELDD_LOG_FORMAT"}}),

		altsrc.NewStringFlag(&cli.StringFlag{Name: "audit-file", Usage: "append every evaluation and outcome to this JSON-lines `FILE` (empty: no audit log)", EnvVars: []string{"SHIELDD_AUDIT_FILE"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "audit-mode", Value: "always", Usage: "always (no verdict before its record is fsynced) or batch (group commit; a crash can lose the last window)", EnvVars: []string{"SHIELDD_AUDIT_MODE"}}),
		altsrc.NewInt64Flag(&cli.Int64Flag{Name: "audit-max-bytes", Value: 100 << 20, Usage: "rotate the audit file at this size (0: never)", EnvVars: []string{"SHIELDD_AUDIT_MAX_BYTES"}}),
		altsrc.NewDurationFlag(&cli.DurationFlag{Name: "audit-batch-window", Value: 10 * time.Millisecond, Usage: "batch mode: longest a record waits for its fsync", EnvVars: []string{"SHIELDD_AUDIT_BATCH_WINDOW"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "audit-batch-max", Value: 512, Usage: "batch mode: fsync early once this many records wait", EnvVars: []string{"SHIELDD_AUDIT_BATCH_MAX"}}),

		altsrc.NewStringFlag(&cli.StringFlag{Name: "auth", Value: auth.ModeNone, Usage: "caller authentication: none (loopback listeners only), static, hmac or mtls", EnvVars: []string{"SHIELDD_AUTH"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "auth-tokens-file", Usage: "--auth static: YAML `FILE` of bearer tokens (reloaded on SIGHUP)", EnvVars: []string{"SHIELDD_AUTH_TOKENS_FILE"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "auth-hmac-key-file", Usage: "--auth hmac: `FILE` holding the shared key (or set $" + hmacKeyEnv + " to the key)", EnvVars: []string{"SHIELDD_AUTH_HMAC_KEY_FILE"}}),
		altsrc.NewDurationFlag(&cli.DurationFlag{Name: "auth-hmac-skew", Value: auth.DefaultHMACSkew, Usage: "--auth hmac: how far a token's time may be from the server's", EnvVars: []string{"SHIELDD_AUTH_HMAC_SKEW"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "tls-cert", Usage: "serve gRPC and HTTP over TLS with this certificate `FILE` (PEM)", EnvVars: []string{"SHIELDD_TLS_CERT"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "tls-key", Usage: "the TLS certificate's key `FILE` (PEM)", EnvVars: []string{"SHIELDD_TLS_KEY"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "tls-client-ca", Usage: "--auth mtls: CA bundle `FILE` (PEM) that issues client certificates", EnvVars: []string{"SHIELDD_TLS_CLIENT_CA"}}),

		altsrc.NewStringFlag(&cli.StringFlag{Name: "tenant-policy-dir", Usage: "`DIR` of <tenant>.yaml policies; other tenants get --policy (reloaded on SIGHUP)", EnvVars: []string{"SHIELDD_TENANT_POLICY_DIR"}}),
		altsrc.NewBoolFlag(&cli.BoolFlag{Name: "watch-policy", Value: true, Usage: "reload the --policy file and --tenant-policy-dir when they change, as on SIGHUP (--watch-policy=false: SIGHUP only)", EnvVars: []string{"SHIELDD_WATCH_POLICY"}}),
		altsrc.NewFloat64Flag(&cli.Float64Flag{Name: "rate-limit", Usage: "requests per second per tenant (0: unlimited)", EnvVars: []string{"SHIELDD_RATE_LIMIT"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "rate-burst", Usage: "requests a tenant may make at once (default: the rate, at least 1)", EnvVars: []string{"SHIELDD_RATE_BURST"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "metrics-max-tenants", Value: 50, Usage: "tenants with their own metric label; the rest are \"other\"", EnvVars: []string{"SHIELDD_METRICS_MAX_TENANTS"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "trace-sample-ratio", Usage: "share `R` (0 to 1) of traces starting at shieldd that are recorded; a caller's sampled trace is always followed, and 0 turns tracing off. Unset: OTEL_TRACES_SAMPLER decides, else every trace. Spans are exported only when OTEL_EXPORTER_OTLP_ENDPOINT is set (see docs/tracing.md)", EnvVars: []string{"SHIELDD_TRACE_SAMPLE_RATIO"}}),
	}, evaluatorFlags()...)
}

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:   "serve",
		Usage:  "serve the Shield over gRPC and HTTP (the default command)",
		Flags:  serveFlags(),
		Before: serveBefore,
		Action: runServe,
	}
}

// serveBefore loads the optional config file; flags and environment
// variables take precedence over it.
func serveBefore(c *cli.Context) error {
	if c.String("config") == "" {
		return nil
	}
	if _, err := os.Stat(c.String("config")); err != nil {
		return exitf(2, "config file: %v", err)
	}
	return altsrc.InitInputSourceWithContext(c.Command.Flags, altsrc.NewYamlSourceFromFlagFunc("config"))(c)
}

func runServe(c *cli.Context) error {
	log, err := observability.NewLogger(c.App.ErrWriter, c.String("log-level"), c.String("log-format"))
	if err != nil {
		return exitf(2, "%v", err)
	}
	pol, err := policy.Load(c.String("policy"))
	if err != nil {
		return exitf(2, "%v", err)
	}
	metrics, err := observability.NewMetrics()
	if err != nil {
		return exitf(2, "metrics: %v", err)
	}
	cacheSize := c.Int("cache-size")
	if cacheSize == 0 {
		cacheSize = -1 // the flag's 0 means off; the pipeline's 0 means default
	}
	memLimit, err := pipeline.MemoryLimit(c.String("memory-limit"), cacheSize, os.Getenv("GOMEMLIMIT") != "")
	if err != nil {
		return exitf(2, "%v", err)
	}
	if memLimit > 0 {
		debug.SetMemoryLimit(memLimit)
	}
	ev, err := buildEvaluator(c, log)
	if err != nil {
		return exitf(2, "%v", err)
	}
	p, err := pipeline.New(pipeline.Config{
		Policy:    pol,
		CacheSize: cacheSize,
		CacheTTL:  c.Duration("cache-ttl"),
		Limits:    action.Limits{MaxPayloadBytes: c.Int("max-payload-bytes")},
		Evaluator: ev,
	})
	if err != nil {
		return exitf(2, "%v", err)
	}
	if err := p.Instrument(metrics.Meter("parapet/shieldd"), metrics.Registry); err != nil {
		return exitf(2, "metrics: %v", err)
	}
	authn, tlsCfg, err := buildAuth(c)
	if err != nil {
		return exitf(2, "%v", err)
	}
	failures, err := auth.NewFailureCounter(metrics.Registry)
	if err != nil {
		return exitf(2, "metrics: %v", err)
	}
	reloader, stopReloads, err := startReloads(c, log, p, metrics, authn)
	if err != nil {
		return exitf(2, "%v", err)
	}
	defer stopReloads()
	tenantNames := reloader.Tenants()
	if st, ok := authn.(*auth.StaticTokens); ok {
		tenantNames = append(tenantNames, st.Tenants()...)
	}
	tenantMetrics, err := tenant.NewMetrics(metrics.Registry, tenant.NewLabels(c.Int("metrics-max-tenants"), tenantNames))
	if err != nil {
		return exitf(2, "metrics: %v", err)
	}
	sh := &shield.Shield{
		Pipeline: p, Version: Version, Logger: log, TenantMetrics: tenantMetrics,
		Limits:       tenant.NewLimiter(c.Float64("rate-limit"), c.Int("rate-burst")),
		PolicyErrors: reloader, EvaluatorAvailable: evaluatorAvailable(ev),
	}
	tracing, err := server.StartServeTracing(c.Context, c.String("trace-sample-ratio"))
	if err != nil {
		return exitf(2, "tracing: %v", err)
	}
	defer func() { // after the drain: the last spans are exported
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(ctx); err != nil {
			log.Warn("tracing: spans may be lost", "err", err)
		}
	}()
	sh.Tracing = tracing.Tracing

	// The daemon exists only after Listen; an audit failure before then
	// still fails every call, it just cannot flip health yet.
	var daemon atomic.Pointer[server.Daemon]
	if path := c.String("audit-file"); path != "" {
		mode, err := audit.ParseMode(c.String("audit-mode"))
		if err != nil {
			return exitf(2, "%v", err)
		}
		sh.Audit, err = audit.Open(audit.Config{
			Path: path, Mode: mode, MaxBytes: c.Int64("audit-max-bytes"),
			BatchWindow: c.Duration("audit-batch-window"), BatchMaxRecords: c.Int("audit-batch-max"), Logger: log,
			OnFailure: func(error) {
				if d := daemon.Load(); d != nil {
					d.SetServing(false)
				}
			},
		})
		if err != nil {
			return exitf(2, "%v", err)
		}
		defer func() {
			if err := sh.Audit.Close(); err != nil {
				log.Error("closing the audit log", "err", err)
			}
		}()
	}

	httpAddr := c.String("http-addr")
	if httpAddr == "off" {
		httpAddr = ""
	}
	d, err := server.Listen(server.NewService(sh), server.DaemonConfig{
		GRPCAddr: c.String("grpc-addr"), HTTPAddr: httpAddr, MaxMessageBytes: c.Int("max-message-bytes"),
		DrainTimeout: c.Duration("drain-timeout"), Metrics: metrics.Handler, Logger: log,
		Guard: &auth.Guard{Auth: authn, Logger: log, Failures: failures}, TLS: tlsCfg,
	})
	if err != nil {
		return exitf(2, "%v", err)
	}
	daemon.Store(d)
	log.Info("shieldd serving", "grpc", d.GRPCAddr(), "http", d.HTTPAddr(),
		"policy", pol.Name, "policy_source", pol.Source, "policy_version", pol.Version, "version", Version,
		"auth", c.String("auth"), "tls", tlsCfg != nil, "tenant_policies", p.TenantPolicies(),
		"audit", c.String("audit-file"), "audit_mode", c.String("audit-mode"), "tracing", tracing.Sampler)
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// The budget fits verdicts that share their shapes; verdicts with
	// evidence of their own need more, or the collector would run without
	// pause once they fill the cache. A small heap grows to the budget
	// before it is collected.
	go pipeline.TuneAutoGC(ctx, c.String("memory-limit"), memLimit, func(set pipeline.GCSetting) {
		log.Info("garbage collector tuned", "limit_mib", set.Limit>>20, "gc_percent", set.GCPercent,
			"live_heap_mib", set.Live>>20, "budget_mib", memLimit>>20)
	})
	if err := d.Serve(ctx); err != nil {
		return exitf(1, "%v", err)
	}
	log.Info("shieldd stopped")
	return nil
}

// buildAuth reads the --auth and --tls-* flags.
func buildAuth(c *cli.Context) (auth.Authenticator, *tls.Config, error) {
	cfg := auth.Config{
		Mode: c.String("auth"), TokensFile: c.String("auth-tokens-file"), HMACSkew: c.Duration("auth-hmac-skew"),
		ClientCAFile: c.String("tls-client-ca"), TLSCertFile: c.String("tls-cert"), TLSKeyFile: c.String("tls-key"),
	}
	if cfg.Mode == auth.ModeHMAC {
		key, err := auth.LoadHMACKey(c.String("auth-hmac-key-file"), hmacKeyEnv)
		if err != nil {
			return nil, nil, err
		}
		cfg.HMACKey = key
	}
	return auth.New(cfg)
}
