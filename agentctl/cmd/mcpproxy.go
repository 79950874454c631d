package cmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/mcpproxy"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/client"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// mcpProxyCommand: agentctl mcp-proxy, the MCP gateway (docs/mcp-proxy.md).
func mcpProxyCommand() *cli.Command {
	return &cli.Command{
		Name:      "mcp-proxy",
		Usage:     "guard an MCP server: every tools/call is judged by the shield (docs/mcp-proxy.md)",
		ArgsUsage: "[-- COMMAND ARGS…]",
		Description: "stdio: put `agentctl mcp-proxy --name NAME -- COMMAND ARGS…` where the MCP client's config runs the server.\n" +
			"Streamable HTTP: agentctl mcp-proxy --name NAME --listen 127.0.0.1:PORT --upstream URL.\n" +
			"Logs and reports go to stderr; in stdio mode stdout carries only MCP messages.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "the server's `NAME` in actions (mcp:NAME/TOOL) and pins (default: the command's or the upstream host's name)"},
			&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the workspace `DIR` (default: the current directory)"},
			&cli.StringFlag{Name: "shield", EnvVars: []string{"PARAPET_SHIELD"}, Usage: "shieldd `ADDR`; default: the shield pipeline in-process"},
			&cli.StringFlag{Name: "shield-token", EnvVars: []string{"PARAPET_SHIELD_TOKEN"}, Usage: "bearer `TOKEN` for a shieldd that requires authentication"},
			&cli.StringFlag{Name: "policy", Usage: "policy `FILE` or embedded name for the in-process shield (default: default)"},
			&cli.StringFlag{Name: "audit-file", Usage: "the in-process shield's audit log `FILE` (hash-chained JSON lines, as shieldd's --audit-file; default none)"},
			&cli.StringFlag{Name: "listen", Usage: "serve Streamable HTTP on this loopback `ADDR` (with --upstream) instead of stdio"},
			&cli.StringFlag{Name: "upstream", Usage: "the upstream MCP server's Streamable HTTP endpoint `URL`"},
			&cli.StringSliceFlag{Name: "upstream-header", Usage: "add `'NAME: VALUE'` to every upstream request (e.g. the Authorization a remote server wants); repeatable"},
			&cli.BoolFlag{Name: "allow-changed", Usage: "accept tools whose definition changed since first seen, and pin the new one (default: withhold them)"},
			&cli.StringSliceFlag{Name: "trust-tool", Usage: "offer this `TOOL` even if its description looks poisoned (still reported); repeatable"},
			&cli.StringFlag{Name: "result-secrets", Value: mcpproxy.SecretsRedact, Usage: "tool results and resource contents carrying secrets: redact, block or report"},
			&cli.StringFlag{Name: "result-injection", Value: mcpproxy.InjectionWarn, Usage: "tool results and resource contents carrying prompt-injection wording: warn, block or report"},
			&cli.DurationFlag{Name: "ask-timeout", Usage: "how long to wait for the user's answer to an escalation (default 5m)"},
			&cli.StringFlag{Name: "state-dir", Usage: "where tool pins are kept (default: the workspace's state directory, $XDG_STATE_HOME/parapet/workspaces/<name>-<hash>)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
		},
		Action: runMCPProxy,
	}
}

func runMCPProxy(c *cli.Context) error {
	argv := c.Args().Slice()
	listen, upstream := c.String("listen"), c.String("upstream")
	httpMode := listen != "" || upstream != ""
	switch {
	case httpMode && (listen == "" || upstream == ""):
		return exitcode.Usagef("mcp-proxy: --listen and --upstream go together")
	case httpMode && len(argv) > 0:
		return exitcode.Usagef("mcp-proxy: give either a server command (stdio) or --listen/--upstream (HTTP), not both")
	case !httpMode && len(argv) == 0:
		return exitcode.Usagef("mcp-proxy: no MCP server command (agentctl mcp-proxy [flags] -- COMMAND ARGS…)")
	}
	name := c.String("name")
	if name == "" {
		name = defaultServerName(argv, upstream)
	}
	ws := c.String("workspace")
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		ws = wd
	}
	ws, err := host.AbsDir(ws)
	if err != nil {
		return exitcode.Usagef("workspace: %v", err)
	}
	stateDir := c.String("state-dir")
	if stateDir == "" {
		db, err := host.DefaultDBPath(ws)
		if err != nil {
			return exitcode.Usagef("%v; pass --state-dir DIR", err)
		}
		stateDir = filepath.Dir(db)
	}
	pins, err := mcpproxy.OpenPins(stateDir, name)
	if err != nil {
		return exitcode.Usagef("mcp-proxy: %v", err)
	}
	stderr := c.App.ErrWriter
	if stderr == nil {
		stderr = os.Stderr
	}
	log := observability.TextLogger(stderr, c.String("log-level"))
	judge, closeShield, err := mcpShield(c, log)
	if err != nil {
		return err
	}
	defer closeShield()
	home, _ := os.UserHomeDir()
	cfg := mcpproxy.Config{
		Server: name, Shield: judge, Workspace: ws, Home: home, Pins: pins,
		AllowChanged: c.Bool("allow-changed"), TrustedTools: c.StringSlice("trust-tool"),
		ResultSecrets: c.String("result-secrets"), ResultInjection: c.String("result-injection"),
		AskTimeout: c.Duration("ask-timeout"), Log: log,
		Broker: engineBroker{stateDir: host.StateDirOf(ws)},
	}
	if cfg.UpstreamHeaders, err = parseHeaders(c.StringSlice("upstream-header")); err != nil {
		return exitcode.Usagef("mcp-proxy: %v", err)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if httpMode {
		err = mcpproxy.ServeHTTP(ctx, cfg, listen, upstream, func(addr string) {
			fmt.Fprintf(stderr, "agentctl mcp-proxy: serving %s at http://%s/mcp\n", name, addr)
		})
	} else {
		in, out := c.App.Reader, c.App.Writer
		if in == nil {
			in = os.Stdin
		}
		if out == nil {
			out = os.Stdout
		}
		err = mcpproxy.RunStdio(ctx, cfg, argv, in, out, stderr)
	}
	var cfgErr *mcpproxy.ConfigError
	switch {
	case errors.As(err, &cfgErr):
		return exitcode.Usagef("mcp-proxy: %v", err)
	case err != nil && !errors.Is(err, context.Canceled):
		return exitcode.Errorf(exitcode.Failed, "mcp-proxy: %v", err)
	}
	return nil
}

// parseHeaders reads "Name: value" flags.
func parseHeaders(flags []string) (http.Header, error) {
	h := http.Header{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("--upstream-header %q: want 'Name: value'", f)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// defaultServerName names a server after its command ("npx -y
// @modelcontextprotocol/server-github" → server-github) or its host.
func defaultServerName(argv []string, upstream string) string {
	pick := ""
	if len(argv) > 0 {
		pick = filepath.Base(argv[0])
		// Launchers: the package or script they run names the server.
		switch strings.TrimSuffix(pick, filepath.Ext(pick)) {
		case "npx", "uvx", "node", "python", "python3", "deno", "bun", "bunx", "pipx", "docker":
			for _, a := range argv[1:] {
				if !strings.HasPrefix(a, "-") && a != "run" {
					pick = a
					break
				}
			}
		}
		if at := strings.LastIndex(pick, "@"); at > 0 { // pkg@host.Version, @scope/pkg@version
			pick = pick[:at]
		}
		pick = filepath.Base(pick)
	} else if u, err := url.Parse(upstream); err == nil {
		pick = u.Hostname()
	}
	var b strings.Builder
	for _, r := range pick {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	if s := strings.Trim(b.String(), "-."); s != "" {
		return s
	}
	return "mcp"
}

// mcpShield builds the shield as the engine does: a shieldd, or the
// shield in-process (shieldd/shield.Local) with the policy and, when
// asked, an audit log.
func mcpShield(c *cli.Context, log *slog.Logger) (mcpproxy.Shield, func(), error) {
	if addr := c.String("shield"); addr != "" {
		cl, err := client.Dial(addr, client.Options{Token: c.String("shield-token")})
		if err != nil {
			return nil, nil, exitcode.Usagef("%v", err)
		}
		return cl, func() { cl.Close() }, nil
	}
	pol, err := policy.Load(c.String("policy"))
	if err != nil {
		return nil, nil, exitcode.Usagef("%v", err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		return nil, nil, exitcode.Usagef("shield: %v", err)
	}
	sh := &shield.Shield{Pipeline: p, Version: host.Version, Logger: log}
	closeShield := func() {}
	if f := c.String("audit-file"); f != "" {
		if sh.Audit, err = audit.Open(audit.Config{Path: f, Mode: audit.ModeAlways, Logger: log}); err != nil {
			return nil, nil, exitcode.Usagef("--audit-file: %v", err)
		}
		closeShield = func() {
			if err := sh.Audit.Close(); err != nil {
				log.Error("closing the audit log", "err", err)
			}
		}
	}
	return shield.NewLocal(sh), closeShield, nil
}

// engineBroker puts the proxy's escalations to the approval broker of the
// engine that `agentctl start` runs for the workspace, found through its
// state file at each escalation (an engine started after the proxy
// counts), with the client token the state file holds.
type engineBroker struct{ stateDir string }

func (b engineBroker) RequestApproval(ctx context.Context, source, tool, argumentsJSON string, v *pb.Verdict) (bool, string, error) {
	st, running := procman.Running(b.stateDir)
	if !running || st.GRPCAddress == "" {
		return false, "", mcpproxy.ErrNoEngine
	}
	client, closeConn, err := dialEngine(st.GRPCAddress, st.ClientToken)
	if err != nil {
		return false, "", err
	}
	defer closeConn()
	resp, err := client.RequestApproval(ctx, &pb.ExternalApprovalRequest{
		Source: source, ToolName: tool, ArgumentsJson: argumentsJSON, Verdict: v})
	if err != nil {
		return false, "", err
	}
	return resp.GetApproved(), resp.GetOutcome() + " by " + resp.GetResolvedBy(), nil
}
