package child

import (
	"errors"
	"io/fs"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/observability"
)

func internalEngineCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-engine",
		Usage:  "the engine process (started by agentctl start)",
		Hidden: true,
		Flags:  append(append(host.Flags(), host.DoorFlags()...), host.WebAddrFlag()),
		Action: runInternalEngine,
	}
}

// runInternalEngine serves the engine and reports PORT:/WEB_* on stdout
// for the process manager, then runs until SIGTERM or a Shutdown request.
func runInternalEngine(c *cli.Context) error {
	cfg, err := host.ConfigFrom(c)
	if err != nil {
		return err
	}
	log := observability.TextLogger(c.App.ErrWriter, cfg.LogLevel).With("process", "engine")
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Clients find the token next to the address, in the state file.
	cfg.ClientToken = engine.NewClientToken()
	err = procman.UpdateState(cfg.StateDir(), func(s *procman.State) { s.ClientToken = cfg.ClientToken })
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // none: no manager, and no client can find this engine
		return exitcode.Errorf(exitcode.Failed, "record the client token: %v", err)
	}
	cfg.OnAgentEvent = func(pid int, sandboxStatus string) {
		_ = procman.UpdateState(cfg.StateDir(), func(s *procman.State) {
			s.AgentPID, s.SandboxStatus = pid, sandboxStatus
		})
	}
	// Escalations wait for a client (agentctl chat/approve/deny, the web
	// page, any ClientService caller); no answer by the deadline denies.
	h, err := host.Start(ctx, cfg, nil, log, c.App.ErrWriter)
	if err != nil {
		return err
	}
	defer h.Stop()
	if err := procman.WritePort(c.App.Writer, h.Port()); err != nil {
		return exitcode.Errorf(exitcode.Failed, "report port: %v", err)
	}
	webStatus, stopWeb := h.ServeWeb(cfg.WebAddr, log)
	defer stopWeb() // before h.stop: open streams end while the engine still answers
	if err := procman.WriteWeb(c.App.Writer, webStatus); err != nil {
		return exitcode.Errorf(exitcode.Failed, "report web: %v", err)
	}
	stopDoors, err := h.ServeDoors(cfg.Doors, log)
	if err != nil {
		return exitcode.Errorf(exitcode.Failed, "%v", err)
	}
	defer stopDoors()
	select {
	case <-ctx.Done():
		log.Info("stopping on signal")
	case <-h.Engine().ShutdownRequested():
		if h.Engine().RestartRequested() {
			log.Info("restarting on a client's request")
			stopDoors()
			stopWeb()
			h.Stop()
			return exitcode.Errorf(procman.ExitRestart, "")
		}
		log.Info("stopping on a client's request")
	}
	return nil
}
