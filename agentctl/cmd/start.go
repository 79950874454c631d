package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/observability"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func startCommand() *cli.Command {
	return &cli.Command{
		Name:  "start",
		Usage: "start the engine for a workspace and keep it running (process manager)",
		Description: `One instance per workspace. The engine is restarted after a crash (at most 5
crashes in 60 s) and at once when it exits 75 (a restart request). SIGTERM or
SIGINT stop it (SIGKILL after 5 s). State lives in WORKSPACE/.parapet/.`,
		Flags: append(append(host.Flags(), host.DoorFlags()...), host.WebAddrFlag(),
			&cli.BoolFlag{Name: "daemon", Aliases: []string{"d"}, Usage: "detach and run in the background (log in WORKSPACE/.parapet/manager.log)"},
		),
		Action: func(c *cli.Context) error {
			cfg, err := host.ConfigFrom(c)
			if err != nil {
				return err
			}
			if c.Bool("daemon") {
				st, err := procman.Daemonize(procman.DaemonConfig{StateDir: cfg.StateDir(), Args: append([]string{"start"}, cfg.Args()...)})
				if err != nil {
					return exitcode.Errorf(exitcode.Failed, "%v", err)
				}
				fmt.Fprintf(c.App.Writer, "engine started in the background: manager pid %d, gRPC %s\n", st.ManagerPID, st.GRPCAddress)
				return nil
			}
			self, err := os.Executable()
			if err != nil {
				return exitcode.Errorf(exitcode.Failed, "find own executable: %v", err)
			}
			// The manager reads the state file, client token included.
			if err := host.HoldCredentials(); err != nil {
				return exitcode.Errorf(exitcode.Failed, "%v", err)
			}
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			log := observability.TextLogger(c.App.ErrWriter, cfg.LogLevel).With("process", "manager")
			m := &procman.Manager{
				StateDir: cfg.StateDir(), Workspace: cfg.Workspace, Log: log,
				Engine: func() (*exec.Cmd, error) {
					cmd := exec.Command(self, append([]string{"internal-engine"}, cfg.Args()...)...)
					cmd.Stderr = c.App.ErrWriter
					return cmd, nil
				},
				Options: procman.Options{Output: c.App.ErrWriter},
			}
			err = m.Run(ctx)
			var locked *procman.LockedError
			switch {
			case errors.As(err, &locked):
				return exitcode.Errorf(exitcode.Usage, "%v", err)
			case err != nil && !errors.Is(err, context.Canceled):
				return exitcode.Errorf(exitcode.Failed, "%v", err)
			}
			return nil
		},
	}
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
	st, running = procman.Running(host.StateDirOf(ws))
	return st.GRPCAddress, st, running, nil
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
				return exitcode.Errorf(exitcode.Failed, "no engine is running for this workspace")
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
				if _, still := procman.Running(host.StateDirOf(ws)); !still {
					fmt.Fprintln(c.App.Writer, "stopped")
					return nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			return exitcode.Errorf(exitcode.Failed, "the engine did not stop within %s", c.Duration("timeout"))
		},
	}
}
