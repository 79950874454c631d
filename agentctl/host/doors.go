package host

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"

	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine/doors"
	"github.com/parapet-dev/parapet/engine/doors/crawbl"
	"github.com/parapet-dev/parapet/engine/doors/openclaude"
	"github.com/parapet-dev/parapet/shieldd/auth"
)

// loadCrawblKey reads the crawbl HMAC key (shieldd's loader and checks:
// the same tokens as shieldd --auth hmac).
func loadCrawblKey(file string) ([]byte, error) {
	key, err := auth.LoadHMACKey(file, "")
	if err != nil {
		return nil, err
	}
	if _, err := auth.NewHMAC(key); err != nil {
		return nil, err
	}
	return key, nil
}

// DoorConfig is where agentctl start serves the engine's other front
// doors (engine/doors); each is off unless its address is given.
type DoorConfig struct {
	OpenclaudeAddr   string
	CrawblAddr       string
	CrawblKeyFile    string // absolute
	CrawblOnEscalate string // crawbl.OnEscalateDeny or OnEscalateWait
}

// DoorFlags are the doors' flags, for start and internal-engine.

func DoorFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "openclaude-addr", Usage: "serve openclaude.v1.AgentService.Chat on `HOST:PORT` (off unless given; beyond loopback every call needs the engine's client token)"},
		&cli.StringFlag{Name: "crawbl-addr", Usage: "serve crawbl.agentruntime.v1 (Converse, Memory) on this `HOST:PORT` (off unless given; needs --crawbl-hmac-key-file)"},
		&cli.StringFlag{Name: "crawbl-hmac-key-file", Usage: "`FILE` holding the shared key of crawbl's HMAC bearer tokens (at least 16 bytes)"},
		&cli.StringFlag{Name: "crawbl-on-escalate", Value: crawbl.OnEscalateDeny, Usage: "an escalation in a Converse turn: deny at once, or wait for another front-end's answer until the deadline"},
	}
}

func doorConfigFrom(c *cli.Context) (DoorConfig, error) {
	d := DoorConfig{OpenclaudeAddr: c.String("openclaude-addr"), CrawblAddr: c.String("crawbl-addr"),
		CrawblKeyFile: c.String("crawbl-hmac-key-file"), CrawblOnEscalate: c.String("crawbl-on-escalate")}
	if d.OpenclaudeAddr != "" {
		// Beyond loopback the door needs the engine's client token (ServeDoors).
		if _, _, err := net.SplitHostPort(d.OpenclaudeAddr); err != nil {
			return d, exitcode.Usagef("--openclaude-addr %q: want HOST:PORT", d.OpenclaudeAddr)
		}
	}
	if d.CrawblAddr != "" {
		// Every crawbl call is authenticated, so any address may serve it.
		if _, _, err := net.SplitHostPort(d.CrawblAddr); err != nil {
			return d, exitcode.Usagef("--crawbl-addr %q: want HOST:PORT", d.CrawblAddr)
		}
		if d.CrawblKeyFile == "" {
			return d, exitcode.Usagef("--crawbl-addr needs --crawbl-hmac-key-file: every crawbl call carries an HMAC bearer token")
		}
		if abs, err := filepath.Abs(d.CrawblKeyFile); err == nil {
			d.CrawblKeyFile = abs
		}
		if _, err := loadCrawblKey(d.CrawblKeyFile); err != nil {
			return d, exitcode.Usagef("--crawbl-hmac-key-file: %v", err)
		}
	}
	if o := d.CrawblOnEscalate; o != "" && o != crawbl.OnEscalateDeny && o != crawbl.OnEscalateWait {
		return d, exitcode.Usagef("--crawbl-on-escalate %q: want deny or wait", o)
	}
	return d, nil
}

func (d DoorConfig) args() []string {
	var a []string
	if d.OpenclaudeAddr != "" {
		a = append(a, "--openclaude-addr", d.OpenclaudeAddr)
	}
	if d.CrawblAddr != "" {
		a = append(a, "--crawbl-addr", d.CrawblAddr, "--crawbl-hmac-key-file", d.CrawblKeyFile, "--crawbl-on-escalate", d.CrawblOnEscalate)
	}
	return a
}

// ServeDoors serves the configured doors, each on its own gRPC server,
// over the engine in-process: the same gate, broker and sessions as
// ClientService. It records their addresses in the workspace's state for
// agentctl status. A door that cannot listen stops the engine: it was
// asked for.
func (h *Host) ServeDoors(d DoorConfig, log *slog.Logger) (stop func(), err error) {
	var servers []*grpc.Server
	stop = func() {
		for _, s := range servers {
			s.GracefulStop()
		}
	}
	addrs := map[string]string{}
	serve := func(name, addr string, register func(*grpc.Server), opts ...grpc.ServerOption) error {
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%s door: %w", name, err)
		}
		srv := grpc.NewServer(opts...)
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
	if d.OpenclaudeAddr != "" {
		var models []string
		if h.cfg.Model != "" {
			models = []string{h.cfg.Model}
		}
		oc, err := openclaude.New(openclaude.Options{Engine: h.engine, Workspace: h.cfg.Workspace, Models: models, Logger: log.With("door", "openclaude")})
		if err == nil {
			var opts []grpc.ServerOption
			if doors.CheckLoopback("--openclaude-addr", d.OpenclaudeAddr) != nil {
				// Reachable from other machines: only holders of the
				// engine's client token may drive it and answer approvals.
				opts = doors.RequireToken(h.engine.ClientToken())
			}
			err = serve("openclaude", d.OpenclaudeAddr, oc.Register, opts...)
		}
		if err != nil {
			stop()
			return nil, err
		}
	}
	if d.CrawblAddr != "" {
		err := func() error {
			key, err := loadCrawblKey(d.CrawblKeyFile)
			if err != nil {
				return err
			}
			verifier, err := auth.NewHMAC(key)
			if err != nil {
				return err
			}
			cr, err := crawbl.New(crawbl.Options{Engine: h.engine, Store: h.store, Verifier: verifier, OnEscalate: d.CrawblOnEscalate,
				AgentName: h.cfg.AgentName, Model: h.cfg.Model, Logger: log.With("door", "crawbl")})
			if err != nil {
				return err
			}
			return serve("crawbl", d.CrawblAddr, cr.Register, cr.ServerOptions()...)
		}()
		if err != nil {
			stop()
			return nil, fmt.Errorf("crawbl door: %w", err)
		}
	}
	if len(addrs) > 0 {
		if err := procman.UpdateState(h.cfg.StateDir(), func(s *procman.State) { s.Doors = addrs }); err != nil {
			log.Warn("could not record the doors in the state file", "error", err)
		}
	}
	return stop, nil
}
