package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"

	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/store"
	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/llm"
	"github.com/parapet-dev/parapet/observability"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/client"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

const (
	stateDirName   = tools.StateDirName // the file tools refuse it
	sessionsDBName = "sessions.db"
)

// engineFlags are shared by run, start and internal-engine: where to work,
// which shield, which model.
func engineFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the agent's workspace `DIR` (default: the current directory)"},
		&cli.StringFlag{Name: "shield", EnvVars: []string{"PARAPET_SHIELD"}, Usage: "shieldd `ADDR` (host:port or dns:///name:port); default: the shield pipeline in-process"},
		&cli.StringFlag{Name: "shield-token", EnvVars: []string{"PARAPET_SHIELD_TOKEN"}, Usage: "bearer `TOKEN` for a shieldd that requires authentication"},
		&cli.StringFlag{Name: "policy", Usage: "policy `FILE` or embedded name (default, strict, permissive) for the in-process shield"},
		&cli.StringFlag{Name: "audit-file", EnvVars: []string{"PARAPET_AUDIT_FILE"}, Usage: "the in-process shield's audit log `FILE`: every evaluation and escalation outcome as a hash-chained JSON line, as shieldd --audit-file writes (a remote shieldd keeps its own)"},
		&cli.StringFlag{Name: "provider", Value: "openai", Usage: "LLM provider: openai (any OpenAI-compatible endpoint), anthropic or scripted"},
		&cli.StringFlag{Name: "model", Usage: "model name (default: the provider's default)"},
		&cli.StringFlag{Name: "base-url", Usage: "LLM endpoint `URL` (default: $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL or the provider's)"},
		&cli.StringFlag{Name: "api-key-env", Usage: "name of the environment `VARIABLE` holding the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)"},
		&cli.StringFlag{Name: "script", Usage: "replies `FILE` (YAML) for --provider scripted"},
		&cli.IntFlag{Name: "max-turns", Value: 25, Usage: "LLM round trips allowed per message"},
		&cli.StringFlag{Name: "agent-name", Value: "parapet", Usage: "the agent's display name"},
		&cli.BoolFlag{Name: "allow-unsandboxed", Usage: "run the agent even where the kernel has no Landlock (loudly warned; partial sandboxes are never accepted)"},
		&cli.BoolFlag{Name: "allow-unconfined", Usage: "run commands with the engine's full rights where the kernel cannot confine them (loudly warned; a partial confinement is never used)"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error"},
		&cli.StringFlag{Name: "db", EnvVars: []string{"PARAPET_DB"}, Usage: "session database `FILE` (default $XDG_STATE_HOME/parapet/workspaces/<name>-<hash>/sessions.db, outside the workspace the agent can read)"},
	}
}

// hostConfig is what engineFlags resolve to.
type hostConfig struct {
	workspace, shieldAddr, shieldToken, policyRef   string
	auditFile                                       string // the in-process shield's audit log (absolute)
	provider, model, baseURL, apiKeyEnv, scriptPath string
	maxTurns                                        int
	agentName                                       string
	allowUnsandboxed                                bool
	allowUnconfined                                 bool
	logLevel                                        string
	dbPath                                          string // the session database (absolute)
	// canaryDir is a writable directory outside the workspace for the
	// agent's sandbox canary; startHost makes it and close removes it.
	canaryDir string
	// onAgentEvent, if set, hears the agent's pid and sandbox status.
	onAgentEvent func(pid int, sandboxStatus string)
	// webAddr is where internal-engine serves the web page and HTTP API
	// ("" or "off": nowhere); start passes it on.
	webAddr string
	// clientToken is ClientService's credential ("": a random one that
	// no client learns, as for run).
	clientToken string
	// doors are the other front doors internal-engine serves.
	doors doorConfig
}

func hostConfigFrom(c *cli.Context) (hostConfig, error) {
	h := hostConfig{
		workspace: c.String("workspace"), shieldAddr: c.String("shield"), shieldToken: c.String("shield-token"),
		policyRef: c.String("policy"), provider: c.String("provider"), model: c.String("model"),
		baseURL: c.String("base-url"), apiKeyEnv: c.String("api-key-env"), scriptPath: c.String("script"),
		maxTurns: c.Int("max-turns"), agentName: c.String("agent-name"), allowUnsandboxed: c.Bool("allow-unsandboxed"),
		allowUnconfined: c.Bool("allow-unconfined"), logLevel: c.String("log-level"), dbPath: c.String("db"),
		auditFile: c.String("audit-file"),
	}
	if h.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return h, err
		}
		h.workspace = wd
	}
	ws, err := absDir(h.workspace)
	if err != nil {
		return h, usageErrorf("workspace: %v", err)
	}
	h.workspace = ws
	if h.dbPath == "" {
		if h.dbPath, err = defaultDBPath(ws); err != nil {
			return h, usageErrorf("%v; pass --db FILE", err)
		}
	} else if h.dbPath, err = filepath.Abs(h.dbPath); err != nil {
		return h, usageErrorf("--db: %v", err)
	}
	switch h.provider {
	case "openai", "anthropic":
	case "scripted":
		if h.scriptPath == "" {
			return h, usageErrorf("--provider scripted needs --script FILE")
		}
	default:
		return h, usageErrorf("unknown --provider %q (openai, anthropic or scripted)", h.provider)
	}
	if h.scriptPath != "" {
		if h.scriptPath, err = filepath.Abs(h.scriptPath); err != nil {
			return h, usageErrorf("--script: %v", err)
		}
		if _, err := os.Stat(h.scriptPath); err != nil {
			return h, usageErrorf("--script: %v", err)
		}
	}
	// The agent validates the same configuration, but a mistake found there
	// would only show as an agent crash loop.
	if _, _, err := h.llmConfig().Endpoint(); err != nil {
		return h, usageErrorf("%v", err)
	}
	if h.shieldAddr != "" && h.policyRef != "" {
		return h, usageErrorf("--policy configures the in-process shield; a remote shieldd (--shield) uses its own policy")
	}
	if h.auditFile != "" {
		if h.shieldAddr != "" {
			return h, usageErrorf("--audit-file is the in-process shield's audit log; a remote shieldd (--shield) keeps its own (shieldd --audit-file)")
		}
		if h.auditFile, err = filepath.Abs(h.auditFile); err != nil {
			return h, usageErrorf("--audit-file: %v", err)
		}
	}
	if h.maxTurns <= 0 {
		return h, usageErrorf("--max-turns must be positive")
	}
	if strings.ContainsAny(h.agentName, ": \t\n") || h.agentName == "" {
		return h, usageErrorf("--agent-name must be a non-empty word without ':'")
	}
	h.webAddr = c.String("web-addr")
	if err := checkWebAddr(h.webAddr); err != nil {
		return h, err
	}
	if h.doors, err = doorConfigFrom(c); err != nil {
		return h, err
	}
	return h, nil
}

// llmConfig is the agent's LLM configuration; the API key stays in the
// environment, named by --api-key-env.
func (h hostConfig) llmConfig() llm.Config {
	return llm.Config{Provider: h.provider, Model: h.model, BaseURL: h.baseURL, APIKeyEnv: h.apiKeyEnv, ScriptPath: h.scriptPath}
}

// absDir resolves dir to an absolute path without symlinks and checks it is a directory.
func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", abs)
	}
	return abs, nil
}

// defaultDBPath keeps a workspace's sessions outside it: the sandboxed
// agent can read its workspace, and one session's agent has no business
// reading the others. The directory name keeps the workspace's base name
// for people and a hash of its path for uniqueness.
func defaultDBPath(workspace string) (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no place for the session database: neither $XDG_STATE_HOME nor a home directory is set")
		}
		base = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(workspace))
	dir := fmt.Sprintf("%s-%s", filepath.Base(workspace), hex.EncodeToString(sum[:6]))
	return filepath.Join(base, "parapet", "workspaces", dir, sessionsDBName), nil
}

func (h hostConfig) stateDir() string { return filepath.Join(h.workspace, stateDirName) }

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// host is a running engine: gRPC server, shield, tools and the supervised
// sandboxed agent process.
type host struct {
	cfg    hostConfig
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
	executor    executorSetup
	store       *store.Store // the session database (the crawbl door's memory too)
	closers     []func()
	log         *slog.Logger
	agentDone   chan error
	// releaseAgentToken closes this side of the last agent token's pipe.
	releaseAgentToken func()
}

// openShield is the engine's shield: the shieldd at cfg.shieldAddr, or the
// shield in-process (shieldd/shield.Local, the same Judge a shieldd runs)
// with cfg's policy and, when asked, its own audit log. mode and addr are
// what status reports.
func (h *host) openShield(cfg hostConfig, log *slog.Logger) (judge engine.Shield, mode, addr string, err error) {
	if cfg.shieldAddr != "" {
		c, err := client.Dial(cfg.shieldAddr, client.Options{Token: cfg.shieldToken})
		if err != nil {
			return nil, "", "", usageErrorf("%v", err)
		}
		h.closers = append(h.closers, func() { c.Close() })
		return c, "remote", cfg.shieldAddr, nil
	}
	pol, err := policy.Load(cfg.policyRef)
	if err != nil {
		return nil, "", "", usageErrorf("%v", err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		return nil, "", "", usageErrorf("shield: %v", err)
	}
	sh := &shield.Shield{Pipeline: p, Version: version, Logger: log}
	mode = "embedded (policy " + pol.Source + ")"
	if cfg.auditFile != "" {
		if sh.Audit, err = audit.Open(audit.Config{Path: cfg.auditFile, Mode: audit.ModeAlways, Logger: log}); err != nil {
			return nil, "", "", usageErrorf("--audit-file: %v", err)
		}
		h.closers = append(h.closers, func() {
			if err := sh.Audit.Close(); err != nil {
				log.Error("closing the audit log", "err", err)
			}
		})
		mode += ", audit " + cfg.auditFile
	}
	return shield.NewLocal(sh), mode, "", nil
}

// startHost builds the engine, serves it on 127.0.0.1:0 and starts the agent.
func startHost(ctx context.Context, cfg hostConfig, approver engine.Approver, log *slog.Logger, agentStderr io.Writer) (*host, error) {
	h := &host{cfg: cfg, log: log, agentDone: make(chan error, 1), releaseAgentToken: func() {}}
	// The engine holds every token: no other process of the user may read
	// its memory or environment.
	if err := holdCredentials(); err != nil {
		return nil, exitf(exitFailed, "%v", err)
	}
	ok := false
	defer func() {
		if !ok {
			h.close()
		}
	}()

	canaryDir, err := os.MkdirTemp("", "parapet-canary-")
	if err != nil {
		return nil, exitf(exitFailed, "canary dir: %v", err)
	}
	h.cfg.canaryDir = canaryDir
	h.closers = append(h.closers, func() { os.RemoveAll(canaryDir) })

	// Spans per tool call; their context reaches a remote shieldd. Exported
	// only when OTEL_* asks for it.
	tracing, err := observability.NewTracing(ctx, "parapet-engine")
	if err != nil {
		return nil, usageErrorf("tracing: %v", err)
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
	h.executor = setupExecutor(self, cfg.allowUnconfined, log)
	if x := h.executor.executor; x != nil {
		h.closers = append(h.closers, func() { x.Close() })
	}
	// Only the engine writes the session database: the agent's sandbox
	// leaves the workspace read-only.
	db, err := store.Open(cfg.dbPath)
	if err != nil {
		return nil, fmt.Errorf("session database: %w", err)
	}
	h.closers = append(h.closers, func() { db.Close() })
	h.store = db

	// The memory tools keep the agent's notes in the same database.
	home, _ := os.UserHomeDir()
	reg, err := tools.New(tools.Options{
		Workspace: cfg.workspace, Executor: h.executor.executor, AllowUnconfined: h.executor.unconfined,
		Hidden: []string{cfg.dbPath, filepath.Dir(cfg.dbPath), cfg.stateDir()}, UserHome: home, Memory: db,
	})
	if err != nil {
		return nil, fmt.Errorf("tools: %w", err)
	}
	h.tools = reg
	h.closers = append(h.closers, func() { reg.Close() })

	eng, err := engine.New(engine.Config{
		Workspace: cfg.workspace, AgentName: cfg.agentName, Shield: judge, ShieldMode: mode, ShieldAddress: addr,
		Tools: reg, Approver: approver, AllowUnsandboxed: cfg.allowUnsandboxed, MaxTurns: cfg.maxTurns,
		ExecutorStatus: h.executor.status,
		Provider:       cfg.provider, Model: cfg.model, Version: version, Logger: log, Store: db, ClientToken: cfg.clientToken,
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
				if cfg.onAgentEvent != nil {
					cfg.onAgentEvent(ev.Pid, "")
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
	if cfg.onAgentEvent != nil {
		go h.reportAgentState(ctx)
	}
	ok = true
	return h, nil
}

// agentCommand is one spawn of the sandboxed agent with a fresh token. Its
// environment loses GODEBUG (which could weaken the runtime's defaults) and
// any engine-only OPENPARALLAX_ variable.
func (h *host) agentCommand(self string, stderr io.Writer) (*exec.Cmd, error) {
	token := h.engine.NewAgentToken()
	args := []string{"internal-agent",
		"--grpc", h.agentLis.Addr().String(), "--name", h.cfg.agentName, "--workspace", h.cfg.workspace,
		"--provider", h.cfg.provider, "--max-turns", strconv.Itoa(h.cfg.maxTurns), "--log-level", h.cfg.logLevel,
	}
	for flag, v := range map[string]string{"--model": h.cfg.model, "--base-url": h.cfg.baseURL, "--api-key-env": h.cfg.apiKeyEnv, "--script": h.cfg.scriptPath} {
		if v != "" {
			args = append(args, flag, v)
		}
	}
	if h.cfg.allowUnsandboxed {
		args = append(args, "--allow-unsandboxed")
	}
	if h.cfg.canaryDir != "" {
		args = append(args, "--canary-dir", h.cfg.canaryDir)
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = h.cfg.workspace
	cmd.Env = childEnv(os.Environ())
	cmd.Stderr = stderr
	// The previous spawn has started by now: its end of the token pipe can go.
	h.releaseAgentToken()
	release, err := passToken(cmd, token)
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
func (h *host) reportAgentState(ctx context.Context) {
	for {
		st, changed := h.engine.AgentState()
		h.cfg.onAgentEvent(int(h.engine.Status().GetAgentPid()), st.SandboxStatus)
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// port is the engine's gRPC port.
func (h *host) port() int { return h.lis.Addr().(*net.TCPAddr).Port }

// stop ends the agent (ShutdownDirective, then SIGTERM/SIGKILL) and the server.
func (h *host) stop() {
	if h.engine != nil {
		h.engine.StopAgent("engine stopping")
	}
	if h.agent != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = h.agent.Stop(ctx)
		cancel()
	}
	h.close()
}

func (h *host) close() {
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

// waitAgent waits for the agent to connect, fails with its sandbox error,
// or gives up when the supervisor does.
func (h *host) waitAgent(ctx context.Context) (engine.AgentState, error) {
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
