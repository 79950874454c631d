package child

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/agentctl/agent"
	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/llm"
	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/sandbox"
)

func internalAgentCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-agent",
		Usage:  "the sandboxed agent process (started by the engine, not by hand)",
		Hidden: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "grpc", Required: true, Usage: "engine `IP:PORT`"},
			&cli.StringFlag{Name: "name", Value: "parapet"},
			&cli.StringFlag{Name: "workspace", Required: true},
			&cli.StringFlag{Name: "provider", Value: "openai"},
			&cli.StringFlag{Name: "model"},
			&cli.StringFlag{Name: "base-url"},
			&cli.StringFlag{Name: "api-key-env"},
			&cli.StringFlag{Name: "script"},
			&cli.StringFlag{Name: "canary-dir", Usage: "writable `DIR` outside the workspace for the sandbox's canary file"},
			&cli.IntFlag{Name: "max-turns", Value: agent.DefaultMaxTurns},
			&cli.BoolFlag{Name: "allow-unsandboxed"},
			&cli.StringFlag{Name: "log-level", Value: "info"},
			tokenFDFlag(),
		},
		Action: runInternalAgent,
	}
}

// runInternalAgent follows the openparallax.v1 process model's order: load
// config, sandbox, canary
// probes, connect, AgentReady, directive loop.
func runInternalAgent(c *cli.Context) error {
	log := observability.TextLogger(c.App.ErrWriter, c.String("log-level")).With("process", "agent")
	token, err := readChildToken(c)
	if err != nil {
		return err
	}
	child, err := prepareSandboxedChild(c, log)
	if err != nil {
		return err
	}
	conn, err := dialEngineIP(c.String("grpc"))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if !child.acceptable {
		refuse(ctx, conn, c.String("name")+":"+token, child.reportJSON)
		return exitcode.Errorf(exitcode.Sandbox, "sandbox not verified: %s %s", child.report.Status, child.report.Error)
	}
	err = agent.Run(ctx, conn, agent.Config{
		Name: c.String("name"), Token: token, Provider: child.provider, SandboxReport: child.reportJSON,
		MaxTurns: c.Int("max-turns"), Logger: log,
	})
	switch {
	case errors.Is(err, agent.ErrShutdown), errors.Is(err, context.Canceled):
		log.Debug("agent stopping", "reason", err)
		return nil
	case err != nil:
		return exitcode.Errorf(1, "agent: %v", err)
	}
	return nil
}

// sandboxedChild is what the agent and sub-agent processes share: the LLM
// provider, prepared while files and DNS are still reachable, and the
// process's own sandbox with its canary report.
type sandboxedChild struct {
	llmConfig  llm.Config
	provider   llm.Provider
	report     sandbox.Report
	reportJSON []byte
	// acceptable: sandboxed, or unavailable with --allow-unsandboxed.
	acceptable bool
}

// prepareSandboxedChild follows the openparallax.v1 process model's order
// for a sandboxed process:
// configuration and everything that needs files or DNS (the LLM script,
// the LLM host's addresses) first, then the sandbox and its canary probes.
// It reads the flags both internal commands share.
func prepareSandboxedChild(c *cli.Context, log *slog.Logger) (*sandboxedChild, error) {
	// A sub-agent has no --grpc: its connection to the engine is inherited,
	// and its sandbox lets it connect to no engine port.
	var ports []uint16
	if addr := c.String("grpc"); addr != "" || c.Command.Name == "internal-agent" {
		enginePort, err := ipPort(addr)
		if err != nil {
			return nil, exitcode.Usagef("--grpc: %v", err)
		}
		ports = append(ports, enginePort)
	}
	cfg := llm.Config{Provider: c.String("provider"), Model: c.String("model"), BaseURL: c.String("base-url"),
		APIKeyEnv: c.String("api-key-env"), ScriptPath: c.String("script")}
	llmHost, llmPort, err := cfg.Endpoint()
	if err != nil {
		return nil, exitcode.Usagef("%v", err)
	}
	child := &sandboxedChild{llmConfig: cfg}
	if llmHost != "" {
		client, err := pinnedHTTPClient(c.Context, llmHost)
		if err != nil {
			return nil, exitcode.Errorf(1, "resolve the LLM endpoint: %v", err)
		}
		cfg.HTTPClient = client
	}
	child.provider, err = llm.New(cfg)
	if err != nil {
		return nil, exitcode.Usagef("%v", err)
	}

	if llmPort != 0 {
		ports = append(ports, llmPort)
	}
	child.report = applySandbox(sandbox.Config{ReadPaths: []string{c.String("workspace")}, ConnectTCP: ports}, c.String("canary-dir"))
	child.reportJSON, _ = json.Marshal(child.report)
	child.acceptable = child.report.Status == sandbox.StatusSandboxed ||
		(child.report.Status == sandbox.StatusUnavailable && c.Bool("allow-unsandboxed"))
	if !child.acceptable {
		log.Error("sandbox not verified; refusing to start", "status", child.report.Status, "error", child.report.Error)
	} else if child.report.Status != sandbox.StatusSandboxed {
		log.Warn("RUNNING UNSANDBOXED: " + child.report.Error)
	}
	return child, nil
}

// dialEngineIP connects to the engine's IP literal: DNS is gone.
func dialEngineIP(addr string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, exitcode.Errorf(1, "engine %s: %v", addr, err)
	}
	return conn, nil
}

// refuse tells the engine why this agent will not run, then hangs up.
func refuse(ctx context.Context, conn *grpc.ClientConn, agentID string, report []byte) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	stream, err := pb.NewAgentServiceClient(conn).RunSession(ctx)
	if err != nil {
		return
	}
	_ = stream.Send(&pb.AgentEvent{Event: &pb.AgentEvent_Ready{Ready: &pb.AgentReady{AgentId: agentID, SandboxResultJson: string(report)}}})
	_ = stream.CloseSend()
	_, _ = stream.Recv()
}

func ipPort(addr string) (uint16, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, err
	}
	if net.ParseIP(host) == nil {
		return 0, fmt.Errorf("%q is not an IP address (the sandboxed agent cannot resolve names)", host)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("bad port %q", port)
	}
	return uint16(n), nil
}

// pinnedHTTPClient resolves host now and dials only those addresses later,
// when the sandbox has taken DNS away. TLS still verifies the host name.
func pinnedHTTPClient(ctx context.Context, host string) (*http.Client, error) {
	var ips []string
	if ip := net.ParseIP(host); ip != nil {
		ips = []string{host}
	} else {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil {
			return nil, err
		}
		ips = addrs
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a proxy would need its own name resolved and port allowed
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		h, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if h != host {
			return nil, fmt.Errorf("the agent may only reach its LLM endpoint %s, not %s", host, h)
		}
		var last error
		for _, ip := range ips {
			c, err := dialer.DialContext(ctx, network, net.JoinHostPort(ip, port))
			if err == nil {
				return c, nil
			}
			last = err
		}
		return nil, last
	}
	return &http.Client{Transport: tr}, nil
}
