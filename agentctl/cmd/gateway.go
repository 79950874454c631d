package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/gateway"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/observability"
)

func gatewayCommand() *cli.Command {
	return &cli.Command{
		Name:  "gateway",
		Usage: "run an engine as an agent of a parallax control plane (dials out; runs its tasks and threads through the gate)",
		Description: `Connects to the control plane's AgentGateway, says hello, sends heartbeats,
answers pings, reconnects with backoff, and runs each TaskRequest as a
one-shot turn (escalations are denied: nobody can answer them here).
Serves threads of adapter "parapet": each a session in a fresh workspace
under --threads-dir (cloned from preparation_json's repository, bootstrap
files written through the gate) under policy_json's rules; escalations
wait for the control plane's approval input. docs/doors/gateway.md.`,
		Flags: append(host.Flags(),
			&cli.StringFlag{Name: "control-plane", Required: true, Usage: "the control plane's gRPC `HOST:PORT`"},
			&cli.BoolFlag{Name: "tls", Usage: "connect with TLS (system roots, or --tls-ca)"},
			&cli.StringFlag{Name: "tls-ca", Usage: "PEM `FILE` of the CA that signed the control plane's certificate (implies --tls)"},
			&cli.StringFlag{Name: "agent-id", Required: true, Usage: "this agent's `ID` at the control plane"},
			&cli.StringSliceFlag{Name: "capabilities", Usage: "capabilities announced in the hello (repeat or comma-separate)"},
			&cli.DurationFlag{Name: "heartbeat", Value: gateway.DefaultHeartbeat, Usage: "heartbeat interval announced and kept"},
			&cli.StringFlag{Name: "threads-dir", Usage: "`DIR` of the threads' workspaces (default: next to the session database)"},
			&cli.StringSliceFlag{Name: "clone-from", Usage: "`DIR` under which a thread's local repository (a path or file URL) may be; repeat for more (default: none; network repositories need none)"},
		),
		Action: func(c *cli.Context) error {
			cfg, err := host.ConfigFrom(c)
			if err != nil {
				return err
			}
			creds := insecure.NewCredentials()
			if c.Bool("tls") || c.String("tls-ca") != "" {
				tc := &tls.Config{MinVersion: tls.VersionTLS12}
				if f := c.String("tls-ca"); f != "" {
					pem, err := os.ReadFile(f)
					if err != nil {
						return exitcode.Usagef("--tls-ca: %v", err)
					}
					tc.RootCAs = x509.NewCertPool()
					if !tc.RootCAs.AppendCertsFromPEM(pem) {
						return exitcode.Usagef("--tls-ca %s: no PEM certificate in it", f)
					}
				}
				creds = credentials.NewTLS(tc)
			}
			threadsDir := c.String("threads-dir")
			if threadsDir == "" {
				threadsDir = filepath.Dir(cfg.DBPath) + "-threads"
			}
			if threadsDir, err = filepath.Abs(threadsDir); err != nil {
				return exitcode.Usagef("--threads-dir: %v", err)
			}
			if err := os.MkdirAll(threadsDir, 0o700); err != nil {
				return exitcode.Usagef("--threads-dir: %v", err)
			}
			conn, err := grpc.NewClient(c.String("control-plane"), grpc.WithTransportCredentials(creds))
			if err != nil {
				return exitcode.Usagef("--control-plane: %v", err)
			}
			defer conn.Close()
			log := observability.TextLogger(c.App.ErrWriter, cfg.LogLevel).With("process", "gateway")
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			h, err := host.Start(ctx, cfg, nil, log, c.App.ErrWriter)
			if err != nil {
				return err
			}
			defer h.Stop()
			// Tasks need the agent: connect only once it is there.
			waitCtx, waitCancel := context.WithTimeout(ctx, agentConnectTimeout)
			_, err = h.WaitAgent(waitCtx)
			waitCancel()
			if err != nil {
				return exitcode.Errorf(exitcode.Failed, "the agent did not start: %v", err)
			}
			g, err := gateway.New(gateway.Config{Conn: conn, AgentID: c.String("agent-id"), AgentName: cfg.AgentName,
				Capabilities: c.StringSlice("capabilities"), Heartbeat: c.Duration("heartbeat"), Engine: h.Engine(),
				Tools: h.Tools(), ThreadsDir: threadsDir, CloneFrom: c.StringSlice("clone-from"),
				Logger: log, MinBackoff: 500 * time.Millisecond})
			if err != nil {
				return exitcode.Usagef("%v", err)
			}
			fmt.Fprintf(c.App.ErrWriter, "parapet gateway: agent %s, control plane %s\n", c.String("agent-id"), c.String("control-plane"))
			return g.Run(ctx)
		},
	}
}
