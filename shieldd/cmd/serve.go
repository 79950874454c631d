package cmd

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"github.com/urfave/cli/v2/altsrc"

	"github.com/parapet-dev/parapet/observability"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
)

func serveFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Usage: "optional YAML `FILE` whose keys are these flag names", EnvVars: []string{"SHIELDD_CONFIG"}},
		altsrc.NewStringFlag(&cli.StringFlag{Name: "grpc-addr", Value: "127.0.0.1:7700", Usage: "gRPC listen `ADDR`", EnvVars: []string{"SHIELDD_GRPC_ADDR"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "http-addr", Value: "127.0.0.1:7701", Usage: "HTTP listen `ADDR` (\"off\" disables)", EnvVars: []string{"SHIELDD_HTTP_ADDR"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "policy", Value: "default", Usage: "policy `FILE`, or the name of an embedded policy (default, strict, permissive)", EnvVars: []string{"SHIELDD_POLICY"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "cache-size", Value: 100_000, Usage: "cached verdicts (0 disables the cache)", EnvVars: []string{"SHIELDD_CACHE_SIZE"}}),
		altsrc.NewDurationFlag(&cli.DurationFlag{Name: "cache-ttl", Value: 5 * time.Minute, Usage: "lifetime of a cached verdict", EnvVars: []string{"SHIELDD_CACHE_TTL"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "max-message-bytes", Value: server.DefaultMaxMessageBytes, Usage: "largest gRPC message or HTTP body", EnvVars: []string{"SHIELDD_MAX_MESSAGE_BYTES"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "max-payload-bytes", Value: action.DefaultLimits.MaxPayloadBytes, Usage: "largest action payload_json", EnvVars: []string{"SHIELDD_MAX_PAYLOAD_BYTES"}}),
		altsrc.NewDurationFlag(&cli.DurationFlag{Name: "drain-timeout", Value: 10 * time.Second, Usage: "graceful shutdown bound", EnvVars: []string{"SHIELDD_DRAIN_TIMEOUT"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"SHIELDD_LOG_LEVEL"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "log-format", Value: "text", Usage: "text or json", EnvVars: []string{"SHIELDD_LOG_FORMAT"}}),
	}
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
	pol, err := loadPolicy(c.String("policy"))
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
	p, err := pipeline.New(pipeline.Config{
		Policy:    pol,
		CacheSize: cacheSize,
		CacheTTL:  c.Duration("cache-ttl"),
		Limits:    action.Limits{MaxPayloadBytes: c.Int("max-payload-bytes")},
	})
	if err != nil {
		return exitf(2, "%v", err)
	}
	if err := p.Instrument(metrics.Meter("parapet/shieldd"), metrics.Registry); err != nil {
		return exitf(2, "metrics: %v", err)
	}
	httpAddr := c.String("http-addr")
	if httpAddr == "off" {
		httpAddr = ""
	}
	d, err := server.Listen(&server.ShieldService{Pipeline: p, Version: Version}, server.DaemonConfig{
		GRPCAddr: c.String("grpc-addr"), HTTPAddr: httpAddr, MaxMessageBytes: c.Int("max-message-bytes"),
		DrainTimeout: c.Duration("drain-timeout"), Metrics: metrics.Handler, Logger: log,
	})
	if err != nil {
		return exitf(2, "%v", err)
	}
	log.Info("shieldd serving", "grpc", d.GRPCAddr(), "http", d.HTTPAddr(),
		"policy", pol.Name, "policy_source", pol.Source, "policy_version", pol.Version, "version", Version)
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := d.Serve(ctx); err != nil {
		return exitf(1, "%v", err)
	}
	log.Info("shieldd stopped")
	return nil
}

// loadPolicy reads a policy file, or an embedded policy by name.
func loadPolicy(ref string) (*policy.Policy, error) {
	if ref == "" {
		ref = "default"
	}
	if _, err := os.Stat(ref); err == nil {
		return policy.LoadFile(ref)
	}
	for _, name := range policy.EmbeddedNames() {
		if ref == name || ref == "embedded:"+name {
			return policy.Embedded(name)
		}
	}
	return nil, fmt.Errorf("policy %q: no such file, and not an embedded policy (%v)", ref, policy.EmbeddedNames())
}
