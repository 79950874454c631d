package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/engine/web"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// args turns a hostConfig back into flags, for the processes it spawns.
func (h hostConfig) args() []string {
	a := []string{"--workspace", h.workspace, "--provider", h.provider, "--max-turns", strconv.Itoa(h.maxTurns),
		"--agent-name", h.agentName, "--log-level", h.logLevel}
	for _, f := range [][2]string{{"--shield", h.shieldAddr}, {"--policy", h.policyRef}, {"--model", h.model},
		{"--base-url", h.baseURL}, {"--api-key-env", h.apiKeyEnv}, {"--script", h.scriptPath}, {"--db", h.dbPath}, {"--audit-file", h.auditFile}} {
		if f[1] != "" {
			a = append(a, f[0], f[1])
		}
	}
	if h.allowUnsandboxed {
		a = append(a, "--allow-unsandboxed")
	}
	if h.allowUnconfined {
		a = append(a, "--allow-unconfined")
	}
	if h.webAddr != "" {
		a = append(a, "--web-addr", h.webAddr)
	}
	return append(a, h.doors.args()...)
}

func startCommand() *cli.Command {
	return &cli.Command{
		Name:  "start",
		Usage: "start the engine for a workspace and keep it running (process manager)",
		Description: `One instance per workspace. The engine is restarted after a crash (at most 5
crashes in 60 s) and at once when it exits 75 (a restart request). SIGTERM or
SIGINT stop it (SIGKILL after 5 s). State lives in WORKSPACE/.parapet/.`,
		Flags: append(append(engineFlags(), doorFlags()...), webAddrFlag(),
			&cli.BoolFlag{Name: "daemon", Aliases: []string{"d"}, Usage: "detach and run in the background (log in WORKSPACE/.parapet/manager.log)"},
		),
		Action: func(c *cli.Context) error {
			cfg, err := hostConfigFrom(c)
			if err != nil {
				return err
			}
			if c.Bool("daemon") {
				st, err := procman.Daemonize(procman.DaemonConfig{StateDir: cfg.stateDir(), Args: append([]string{"start"}, cfg.args()...)})
				if err != nil {
					return exitf(exitFailed, "%v", err)
				}
				fmt.Fprintf(c.App.Writer, "engine started in the background: manager pid %d, gRPC %s\n", st.ManagerPID, st.GRPCAddress)
				return nil
			}
			self, err := os.Executable()
			if err != nil {
				return exitf(exitFailed, "find own executable: %v", err)
			}
			// The manager reads the state file, client token included.
			if err := holdCredentials(); err != nil {
				return exitf(exitFailed, "%v", err)
			}
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			log := newLogger(c.App.ErrWriter, cfg.logLevel).With("process", "manager")
			m := &procman.Manager{
				StateDir: cfg.stateDir(), Workspace: cfg.workspace, Log: log,
				Engine: func() (*exec.Cmd, error) {
					cmd := exec.Command(self, append([]string{"internal-engine"}, cfg.args()...)...)
					cmd.Stderr = c.App.ErrWriter
					return cmd, nil
				},
				Options: procman.Options{Output: c.App.ErrWriter},
			}
			err = m.Run(ctx)
			var locked *procman.LockedError
			switch {
			case errors.As(err, &locked):
				return exitf(exitUsage, "%v", err)
			case err != nil && !errors.Is(err, context.Canceled):
				return exitf(exitFailed, "%v", err)
			}
			return nil
		},
	}
}

func internalEngineCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-engine",
		Usage:  "the engine process (started by agentctl start)",
		Hidden: true,
		Flags:  append(append(engineFlags(), doorFlags()...), webAddrFlag()),
		Action: runInternalEngine,
	}
}

// runInternalEngine serves the engine and reports PORT:/WEB_* on stdout
// for the process manager, then runs until SIGTERM or a Shutdown request.
func runInternalEngine(c *cli.Context) error {
	cfg, err := hostConfigFrom(c)
	if err != nil {
		return err
	}
	log := newLogger(c.App.ErrWriter, cfg.logLevel).With("process", "engine")
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Clients find the token next to the address, in the state file.
	cfg.clientToken = engine.NewClientToken()
	err = procman.UpdateState(cfg.stateDir(), func(s *procman.State) { s.ClientToken = cfg.clientToken })
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // none: no manager, and no client can find this engine
		return exitf(exitFailed, "record the client token: %v", err)
	}
	cfg.onAgentEvent = func(pid int, sandboxStatus string) {
		_ = procman.UpdateState(cfg.stateDir(), func(s *procman.State) {
			s.AgentPID, s.SandboxStatus = pid, sandboxStatus
		})
	}
	// Escalations wait for a client (agentctl chat/approve/deny, the web
	// page, any ClientService caller); no answer by the deadline denies.
	h, err := startHost(ctx, cfg, nil, log, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer h.stop()
	if err := procman.WritePort(c.App.Writer, h.port()); err != nil {
		return exitf(exitFailed, "report port: %v", err)
	}
	webStatus, stopWeb := serveWeb(h, cfg.webAddr, log)
	defer stopWeb() // before h.stop: open streams end while the engine still answers
	if err := procman.WriteWeb(c.App.Writer, webStatus); err != nil {
		return exitf(exitFailed, "report web: %v", err)
	}
	stopDoors, err := serveDoors(h, cfg.doors, log)
	if err != nil {
		return exitf(exitFailed, "%v", err)
	}
	defer stopDoors()
	select {
	case <-ctx.Done():
		log.Info("stopping on signal")
	case <-h.engine.ShutdownRequested():
		if h.engine.RestartRequested() {
			log.Info("restarting on a client's request")
			stopDoors()
			stopWeb()
			h.stop()
			return exitf(procman.ExitRestart, "")
		}
		log.Info("stopping on a client's request")
	}
	return nil
}

func webAddrFlag() cli.Flag {
	return &cli.StringFlag{Name: "web-addr", Value: "127.0.0.1:0",
		Usage: "serve the web page and HTTP API on this loopback `HOST:PORT` (port 0: any free port; off: no web server)"}
}

// checkWebAddr accepts "off" or a loopback HOST:PORT. The web API has no
// user authentication (see engine/web), so it never listens where other
// machines can reach it.
func checkWebAddr(addr string) error {
	if addr == "" || addr == "off" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErrorf("--web-addr %q: want a loopback HOST:PORT, or off", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return usageErrorf("--web-addr %q: port %q is not a number from 0 to 65535", addr, port)
	}
	if ip, err := netip.ParseAddr(host); host == "localhost" || (err == nil && ip.IsLoopback()) {
		return nil
	}
	return usageErrorf("--web-addr %q: the host must be loopback (127.0.0.1, [::1] or localhost): the web API has no user authentication", addr)
}

// serveWeb serves the web page and HTTP API on addr. Like any other
// client it reaches the engine over the engine's own gRPC listener, so it
// goes through the same validation and approval broker. It returns what
// to report on the WEB line; when it cannot listen the engine runs on
// without it. stop may be called more than once.
func serveWeb(h *host, addr string, log *slog.Logger) (st procman.WebStatus, stop func()) {
	stop = func() {}
	if addr == "" || addr == "off" {
		return procman.WebStatus{State: procman.WebDisabled}, stop
	}
	failed := func(err error) (procman.WebStatus, func()) {
		_, portText, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(portText)
		log.Error("web server not started; the engine runs without it", "addr", addr, "error", err)
		return procman.WebStatus{State: procman.WebFailed, Port: port, Error: err.Error()}, stop
	}
	conn, err := grpc.NewClient(h.lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(engine.ClientCredentials(h.engine.ClientToken())))
	if err != nil {
		return failed(err)
	}
	srv, err := web.New(web.Options{Client: pb.NewClientServiceClient(conn), Token: h.engine.ClientToken(), Logger: log.With("component", "web")})
	if err != nil {
		conn.Close()
		return failed(err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		conn.Close()
		return failed(err)
	}
	go func() {
		if err := srv.Serve(lis); err != nil {
			log.Error("web server stopped", "error", err)
		}
	}()
	url := "http://" + lis.Addr().String()
	h.engine.SetAddresses(h.lis.Addr().String(), url)
	log.Info("serving the web page and HTTP API", "url", url)
	return procman.WebStatus{State: procman.WebEnabled, Port: lis.Addr().(*net.TCPAddr).Port}, sync.OnceFunc(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		conn.Close()
	})
}

func stateDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "workspace", Aliases: []string{"w"}, Usage: "the workspace `DIR` whose engine to reach (default: the current directory)"}
}

// engineTarget finds the running engine: --engine, or the workspace's state.
func engineTarget(c *cli.Context) (addr string, st procman.State, running bool, err error) {
	if a := c.String("engine"); a != "" {
		return a, st, true, nil
	}
	ws := c.String("workspace")
	if ws == "" {
		if ws, err = os.Getwd(); err != nil {
			return "", st, false, err
		}
	}
	st, running = procman.Running(stateDirOf(ws))
	return st.GRPCAddress, st, running, nil
}

func stateDirOf(workspace string) string {
	cfg := hostConfig{workspace: workspace}
	if abs, err := absDir(workspace); err == nil {
		cfg.workspace = abs
	}
	return cfg.stateDir()
}

// dialEngine connects to an engine's ClientService with its client token.
func dialEngine(addr, token string) (pb.ClientServiceClient, func(), error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(engine.ClientCredentials(token)))
	if err != nil {
		return nil, nil, err
	}
	return pb.NewClientServiceClient(conn), func() { conn.Close() }, nil
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show the running engine of a workspace",
		Flags: []cli.Flag{stateDirFlag(),
			&cli.StringFlag{Name: "engine", Usage: "engine gRPC `ADDR` (default: found through the workspace's state)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "text or json"},
		},
		Action: func(c *cli.Context) error {
			addr, st, running, err := engineTarget(c)
			if err != nil {
				return err
			}
			if (!running || addr == "") && c.String("output") == "json" {
				b, _ := json.Marshal(map[string]any{"running": false})
				fmt.Fprintln(c.App.Writer, string(b))
			}
			var s *pb.StatusResponse
			err = callEngine(c, addr, running, "status", func(ctx context.Context, client *engineConn) (err error) {
				s, err = client.GetStatus(ctx, &pb.StatusRequest{})
				return err
			})
			if err != nil {
				return err
			}
			webURL := s.GetWebUrl()
			if webURL == "" {
				webURL = st.WebURL // what the engine reported to its process manager
			}
			signIn := webSignInURL(webURL, c)
			out := map[string]any{
				"running": true, "workspace": s.GetWorkspace(), "grpc_address": addr, "web_url": webURL, "web_sign_in_url": signIn,
				"manager_pid": st.ManagerPID, "engine_pid": s.GetEnginePid(), "agent_pid": s.GetAgentPid(),
				"agent_connected": s.GetAgentConnected(), "sandbox_status": s.GetSandboxStatus(),
				"executor_status": s.GetExecutorStatus(),
				"shield":          s.GetShieldMode(), "provider": s.GetProvider(), "model": s.GetModel(),
				"agent_restarts": s.GetAgentRestarts(), "uptime_seconds": s.GetUptimeSeconds(), "version": s.GetVersion(),
				"doors": st.Doors,
			}
			if c.String("output") == "json" {
				b, _ := json.Marshal(out)
				fmt.Fprintln(c.App.Writer, string(b))
				return nil
			}
			fmt.Fprintf(c.App.Writer, "engine %s (pid %d) for %s\n  agent: connected=%v pid %d sandbox %s, restarts %d\n  executor: %s\n  shield: %s\n  web: %s\n",
				addr, s.GetEnginePid(), s.GetWorkspace(), s.GetAgentConnected(), s.GetAgentPid(), s.GetSandboxStatus(),
				s.GetAgentRestarts(), s.GetExecutorStatus(), s.GetShieldMode(), orNone(signIn))
			for _, name := range slices.Sorted(maps.Keys(st.Doors)) {
				fmt.Fprintf(c.App.Writer, "  door %s: %s\n", name, st.Doors[name])
			}
			return nil
		},
	}
}

func orNone(s string) string {
	if s == "" {
		return "disabled"
	}
	return s
}

func restartCommand() *cli.Command {
	return &cli.Command{
		Name:  "restart",
		Usage: "restart the running engine of a workspace (exit 75: not counted as a crash)",
		Flags: []cli.Flag{stateDirFlag(), &cli.StringFlag{Name: "engine", Usage: "engine gRPC `ADDR`"}},
		Action: func(c *cli.Context) error {
			addr, _, running, err := engineTarget(c)
			if err != nil {
				return err
			}
			err = callEngine(c, addr, running, "restart", func(ctx context.Context, client *engineConn) error {
				_, err := client.Shutdown(ctx, &pb.ShutdownRequest{Reason: "agentctl restart", Restart: true})
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintln(c.App.Writer, "restart requested")
			return nil
		},
	}
}

func stopCommand() *cli.Command {
	return &cli.Command{
		Name:  "stop",
		Usage: "stop the running engine of a workspace (and its process manager)",
		Flags: []cli.Flag{stateDirFlag(),
			&cli.StringFlag{Name: "engine", Usage: "engine gRPC `ADDR`"},
			&cli.DurationFlag{Name: "timeout", Value: 15 * time.Second, Usage: "how long to wait for everything to exit"},
		},
		Action: func(c *cli.Context) error {
			addr, st, running, err := engineTarget(c)
			if err != nil {
				return err
			}
			if !running {
				return exitf(exitFailed, "no engine is running for this workspace")
			}
			if addr != "" {
				if client, closeConn, err := dialEngine(addr, st.ClientToken); err == nil {
					ctx, cancel := context.WithTimeout(c.Context, 5*time.Second)
					_, err = client.Shutdown(ctx, &pb.ShutdownRequest{Reason: "agentctl stop"})
					cancel()
					closeConn()
					if err != nil && st.ManagerPID > 0 {
						_ = syscall.Kill(st.ManagerPID, syscall.SIGTERM)
					}
				}
			} else if st.ManagerPID > 0 {
				_ = syscall.Kill(st.ManagerPID, syscall.SIGTERM)
			}
			if c.String("engine") != "" {
				fmt.Fprintln(c.App.Writer, "shutdown requested")
				return nil
			}
			ws := c.String("workspace")
			if ws == "" {
				ws, _ = os.Getwd()
			}
			deadline := time.Now().Add(c.Duration("timeout"))
			for time.Now().Before(deadline) {
				if _, still := procman.Running(stateDirOf(ws)); !still {
					fmt.Fprintln(c.App.Writer, "stopped")
					return nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			return exitf(exitFailed, "the engine did not stop within %s", c.Duration("timeout"))
		},
	}
}
