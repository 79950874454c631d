package cmd

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine/doors"
	"github.com/parapet-dev/parapet/engine/doors/openclaude"
)

// doorConfig is where agentctl start serves the engine's other front
// doors (engine/doors); each is off unless its address is given.
type doorConfig struct {
	openclaudeAddr string
}

func doorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "openclaude-addr", Usage: "serve openclaude.v1.AgentService.Chat on this loopback `HOST:PORT` (off unless given)"},
	}
}

func doorConfigFrom(c *cli.Context) (doorConfig, error) {
	d := doorConfig{openclaudeAddr: c.String("openclaude-addr")}
	if d.openclaudeAddr != "" {
		if err := doors.CheckLoopback("--openclaude-addr", d.openclaudeAddr); err != nil {
			return d, usageErrorf("%v", err)
		}
	}
	return d, nil
}

func (d doorConfig) args() []string {
	var a []string
	if d.openclaudeAddr != "" {
		a = append(a, "--openclaude-addr", d.openclaudeAddr)
	}
	return a
}

// serveDoors serves the configured doors, each on its own gRPC server,
// over the engine in-process: the same gate, broker and sessions as
// ClientService. It records their addresses in the workspace's state for
// agentctl status. A door that cannot listen stops the engine: it was
// asked for.
func serveDoors(h *host, d doorConfig, log *slog.Logger) (stop func(), err error) {
	var servers []*grpc.Server
	stop = func() {
		for _, s := range servers {
			s.GracefulStop()
		}
	}
	addrs := map[string]string{}
	serve := func(name, addr string, register func(*grpc.Server)) error {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%s door: %w", name, err)
		}
		srv := grpc.NewServer()
		register(srv)
		// Health and reflection: grpcurl works without the .proto files.
		healthpb.RegisterHealthServer(srv, health.NewServer())
		reflection.Register(srv)
		servers = append(servers, srv)
		go func() {
			if err := srv.Serve(lis); err != nil {
				log.Error("door stopped", "door", name, "error", err)
			}
		}()
		addrs[name] = lis.Addr().String()
		log.Info("serving a front door", "door", name, "addr", lis.Addr().String())
		return nil
	}
	if d.openclaudeAddr != "" {
		var models []string
		if h.cfg.model != "" {
			models = []string{h.cfg.model}
		}
		oc, err := openclaude.New(openclaude.Options{Engine: h.engine, Workspace: h.cfg.workspace, Models: models, Logger: log.With("door", "openclaude")})
		if err == nil {
			err = serve("openclaude", d.openclaudeAddr, oc.Register)
		}
		if err != nil {
			stop()
			return nil, err
		}
	}
	if len(addrs) > 0 {
		if err := procman.UpdateState(h.cfg.stateDir(), func(s *procman.State) { s.Doors = addrs }); err != nil {
			log.Warn("could not record the doors in the state file", "error", err)
		}
	}
	return stop, nil
}
