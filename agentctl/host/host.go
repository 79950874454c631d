package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/store"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/observability"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/client"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// Host is a running engine: gRPC server, shield, tools and the supervised
// sandboxed agent process.
type Host struct {
	cfg    Config
	engine *engine.Engine
	// server and lis serve ClientService to people and programs;
	// agentServer and agentLis serve only the agent services, and are all
	// the sandboxed processes can connect to, so an agent can never reach
	// ResolveApproval.
	server      *grpc.Server
	lis         net.Listener
	agentServer *grpc.Server
	agentLis    net.Listener
	agent       *procman.Supervisor
	tools       *tools.Registry
	executor    ExecutorSetup
	store       *store.Store // the session database (the crawbl door's memory too)
	closers     []func()
	log         *slog.Logger
	agentDone   chan error
	// releaseAgentToken closes this side of the last agent token's pipe.
	releaseAgentToken func()
}

// openShield is the engine's shield: the shieldd at cfg.ShieldAddr, or the
// shield in-process (shieldd/shield.Local, the same Judge a shieldd runs)
// with cfg's policy and, when asked, its own audit log. mode and addr are
// what status reports.
func (h *Host) openShield(cfg Config, log *slog.Logger) (judge engine.Shield, mode, addr string, err error) {
	if cfg.ShieldAddr != "" {
		c, err := client.Dial(cfg.ShieldAddr, client.Options{Token: cfg.ShieldToken})
		if err != nil {
			return nil, "", "", exitcode.Usagef("%v", err)
		}
		h.closers = append(h.closers, func() { c.Close() })
		return c, "remote", cfg.ShieldAddr, nil
	}
	pol, err := policy.Load(cfg.PolicyRef)
	if err != nil {
		return nil, "", "", exitcode.Usagef("%v", err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		return nil, "", "", exitcode.Usagef("shield: %v", err)
	}
	sh := &shield.Shield{Pipeline: p, Version: Version, Logger: log}
	mode = "embedded (policy " + pol.Source + ")"
	if cfg.AuditFile != "" {
		if sh.Audit, err = audit.Open(audit.Config{Path: cfg.AuditFile, Mode: audit.ModeAlways, Logger: log}); err != nil {
			return nil, "", "", exitcode.Usagef("--audit-file: %v", err)
		}
		h.closers = append(h.closers, func() {
			if err := sh.Audit.Close(); err != nil {
				log.Error("closing the audit log", "err", err)
			}
		})
		mode += ", audit " + cfg.AuditFile
	}
	return shield.NewLocal(sh), mode, "", nil
}

// Start builds the engine, serves it on 127.0.0.1:0 and starts the agent.
func Start(ctx context.Context, cfg Config, approver engine.Approver, log *slog.Logger, agentStderr io.Writer) (*Host, error) {
	h := &Host{cfg: cfg, log: log, agentDone: make(chan error, 1), releaseAgentToken: func() {}}
	// The engine holds every token: no other process of the user may read
	// its memory or environment.
	if err := HoldCredentials(); err != nil {
		return nil, exitcode.Errorf(exitcode.Failed, "%v", err)
	}
	ok := false
	defer func() {
		if !ok {
			h.Close()
		}
	}()

	canaryDir, err := makeCanaryDir(cfg)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Failed, "canary dir: %v", err)
	}
	h.cfg.canaryDir = canaryDir
	h.closers = append(h.closers, func() { os.RemoveAll(canaryDir) })

	// Spans per tool call; their context reaches a remote shieldd. Exported
	// only when OTEL_* asks for it.
	tracing, err := observability.NewTracing(ctx, "parapet-engine")
	if err != nil {
		return nil, exitcode.Usagef("tracing: %v", err)
	}
	h.closers = append(h.closers, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tracing.Shutdown(sctx)
	})

	judge, mode, addr, err := h.openShield(cfg, log)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	// Commands run confined; what they may never read even under a grant:
	// the session database, its directory and the workspace's state.
	h.executor = setupExecutor(self, cfg.AllowUnconfined, log)
	if x := h.executor.executor; x != nil {
		h.closers = append(h.closers, func() { x.Close() })
	}
	// Only the engine writes the session database: the agent's sandbox
	// leaves the workspace read-only.
	db, err := store.Open(cfg.DBPath)
	if err != nil {
		return nil, fmt.Errorf("session database: %w", err)
	}
	h.closers = append(h.closers, func() { db.Close() })
	h.store = db

	// The memory tools keep the agent's notes in the same database.
	home, _ := os.UserHomeDir()
	reg, err := tools.New(tools.Options{
		Workspace: cfg.Workspace, Executor: h.executor.executor, AllowUnconfined: h.executor.unconfined,
		Hidden: []string{cfg.DBPath, filepath.Dir(cfg.DBPath), cfg.StateDir()}, UserHome: home, Memory: db,
	})
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	h.tools = reg
	h.closers = append(h.closers, func() { reg.Close() })

	eng, err := engine.New(engine.Config{
		Workspace: cfg.Workspace, AgentName: cfg.AgentName, Shield: judge, ShieldMode: mode, ShieldAddress: addr,
		Tools: reg, Approver: approver, AllowUnsandboxed: cfg.AllowUnsandboxed, MaxTurns: cfg.MaxTurns,
		ExecutorStatus: h.executor.Status,
		Provider:       cfg.Provider, Model: cfg.Model, Version: Version, Logger: log, Store: db, ClientToken: cfg.ClientToken,
		SubAgentLLM: cfg.subAgentLLM,
		SpawnSubAgent: func(ctx context.Context, spec engine.SubAgentSpec) (func() error, func(), error) {
			return h.spawnSubAgent(ctx, spec, agentStderr)
		},
	})
	if err != nil {
		return nil, err
	}
	h.engine = eng
	h.lis, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("engine listen: %w", err)
	}
	h.server = grpc.NewServer(grpc.MaxRecvMsgSize(4 << 20))
	eng.RegisterClientService(h.server)
	go func() { _ = h.server.Serve(h.lis) }()
	h.agentLis, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("engine agent listen: %w", err)
	}
	h.agentServer = grpc.NewServer(grpc.MaxRecvMsgSize(4 << 20))
	eng.RegisterAgentServices(h.agentServer)
	go func() { _ = h.agentServer.Serve(h.agentLis) }()
	eng.SetAddresses(h.lis.Addr().String(), "")

	h.agent = procman.NewSupervisor(func() (*exec.Cmd, error) {
		return h.agentCommand(self, agentStderr)
	}, procman.Options{
		Name: "agent", Group: procman.SameGroup, ParentDeathSignal: syscall.SIGKILL, StopTimeout: 3 * time.Second,
		OnEvent: func(ev procman.Event) {
			switch ev.Kind {
			case procman.EventStarted:
				eng.SetAgentPID(ev.Pid)
				if cfg.OnAgentEvent != nil {
					cfg.OnAgentEvent(ev.Pid, "")
				}
			case procman.EventRestarting:
				eng.CountAgentRestart()
				log.Warn(ev.String())
			case procman.EventExited:
				eng.SetAgentPID(0)
				log.Debug(ev.String())
			case procman.EventGaveUp:
				log.Error(ev.String() + "; the engine keeps serving without an agent")
			}
		},
	})
	go func() { h.agentDone <- h.agent.Run(context.WithoutCancel(ctx)) }()
	if cfg.OnAgentEvent != nil {
		go h.reportAgentState(ctx)
	}
	ok = true
	return h, nil
}

// makeCanaryDir makes this engine's directory for the agent's sandbox
// canary: next to the session database (outside the workspace, the
// user's own), or in the temp dir when the database is in the workspace.
// It is named by the engine's pid, so that the next engine removes what
// a killed one left behind.
func makeCanaryDir(cfg Config) (string, error) {
	base := filepath.Dir(cfg.DBPath)
	if rel, err := filepath.Rel(cfg.Workspace, base); err != nil || rel == "." || !strings.HasPrefix(rel, "..") {
		base = os.TempDir()
	} else if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	stale, _ := filepath.Glob(filepath.Join(base, "parapet-canary-*"))
	for _, d := range stale {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "parapet-canary-"), "-")
		if pid, err := strconv.Atoi(pidText); err == nil && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH {
			os.RemoveAll(d)
		}
	}
	return os.MkdirTemp(base, fmt.Sprintf("parapet-canary-%d-", os.Getpid()))
}

// agentCommand is one spawn of the sandboxed agent with a fresh token. Its
// environment loses GODEBUG (which could weaken the runtime's defaults) and
// any engine-only OPENPARALLAX_ variable.
func (h *Host) agentCommand(self string, stderr io.Writer) (*exec.Cmd, error) {
	token := h.engine.NewAgentToken()
	args := []string{"internal-agent",
		"--grpc", h.agentLis.Addr().String(), "--name", h.cfg.AgentName, "--workspace", h.cfg.Workspace,
		"--provider", h.cfg.Provider, "--max-turns", strconv.Itoa(h.cfg.MaxTurns), "--log-level", h.cfg.LogLevel,
	}
	for flag, v := range map[string]string{"--model": h.cfg.Model, "--base-url": h.cfg.BaseURL, "--api-key-env": h.cfg.APIKeyEnv, "--script": h.cfg.ScriptPath} {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	if h.cfg.AllowUnsandboxed {
		args = append(args, "--allow-unsandboxed")
	}
	if h.cfg.canaryDir != "" {
		args = append(args, "--canary-dir", h.cfg.canaryDir)
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = h.cfg.Workspace
	cmd.Env = childEnv(os.Environ())
	cmd.Stderr = stderr
	// The previous spawn has started by now: its end of the token pipe can go.
	h.releaseAgentToken()
	release, err := PassToken(cmd, token)
	if err != nil {
		return nil, err
	}
	h.releaseAgentToken = release
	return cmd, nil
}

// childEnv is a sandboxed child's environment: the parent's without
// GODEBUG, OPENPARALLAX_ variables and the engine's shieldd token. Its own
// token comes on --token-fd.
func childEnv(parent []string) []string {
	env := make([]string, 0, len(parent))
	for _, kv := range parent {
		name, _, _ := strings.Cut(kv, "=")
		if name == "GODEBUG" || strings.HasPrefix(name, "OPENPARALLAX_") || name == "PARAPET_SHIELD_TOKEN" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// reportAgentState passes every agent connect and disconnect to onAgentEvent.
func (h *Host) reportAgentState(ctx context.Context) {
	for {
		st, changed := h.engine.AgentState()
		h.cfg.OnAgentEvent(int(h.engine.Status().GetAgentPid()), st.SandboxStatus)
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// Engine is the running engine.
func (h *Host) Engine() *engine.Engine { return h.engine }

// Tools is the engine's tool registry (the gateway's threads get ones
// like it in their own workspaces).
func (h *Host) Tools() *tools.Registry { return h.tools }

// Executor is what Start learnt about the confined executor.
func (h *Host) Executor() ExecutorSetup { return h.executor }

// Port is the engine's gRPC port.
func (h *Host) Port() int { return h.lis.Addr().(*net.TCPAddr).Port }

// Stop ends the agent (ShutdownDirective, then SIGTERM/SIGKILL) and the server.
func (h *Host) Stop() {
	if h.engine != nil {
		h.engine.StopAgent("engine stopping")
	}
	if h.agent != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = h.agent.Stop(ctx)
		cancel()
	}
	h.Close()
}

// Close stops serving and releases what Start took, without waiting for
// the agent (Stop does).
func (h *Host) Close() {
	if h.agentServer != nil {
		h.agentServer.Stop()
	}
	if h.server != nil {
		h.server.Stop()
	}
	h.releaseAgentToken()
	if h.engine != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 11*time.Second)
		h.engine.FlushReports(ctx) // before the shield and its audit log close
		cancel()
	}
	for i := len(h.closers) - 1; i >= 0; i-- {
		h.closers[i]()
	}
	h.closers = nil
}

// WaitAgent waits for the agent to connect, fails with its sandbox error,
// or gives up when the supervisor does.
func (h *Host) WaitAgent(ctx context.Context) (engine.AgentState, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type res struct {
		st  engine.AgentState
		err error
	}
	ch := make(chan res, 1)
	go func() {
		st, err := h.engine.WaitAgent(ctx)
		ch <- res{st, err}
	}()
	select {
	case r := <-ch:
		return r.st, r.err
	case err := <-h.agentDone:
		h.agentDone <- err
		if err == nil {
			err = errors.New("the agent exited before connecting")
		}
		return engine.AgentState{}, fmt.Errorf("agent: %w", err)
	}
}
