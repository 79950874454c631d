package procman

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Manager is the process manager behind `agentctl start`: it holds the
// workspace's instance lock, supervises the engine, and keeps the state file
// current for the client commands.
type Manager struct {
	// StateDir holds engine.lock and state.json; created if missing.
	StateDir string
	// Workspace is recorded in the state file and named in lock errors.
	Workspace string
	// Engine makes the engine command (`agentctl internal-engine ...`), fresh
	// for every start. Leave Stdout unset: the manager reads the startup report.
	Engine func() (*exec.Cmd, error)
	// Options tune supervision. Startup is always on; Name defaults to
	// "engine", Output to os.Stdout, ParentDeathSignal to SIGKILL (so an
	// engine never outlives a manager killed outright and the lock it held).
	Options Options
	// Host is the address the engine listens on, for grpc_address and
	// web_url; default 127.0.0.1.
	Host string
	// Log receives lifecycle events; nil discards.
	Log *slog.Logger
}

// Run runs the instance until ctx ends (pass signal.NotifyContext(ctx,
// SIGTERM, SIGINT)), the engine exits 0, or its crash budget is exhausted (a
// *GiveUpError). On the way out the engine is stopped (SIGTERM, SIGKILL after
// StopTimeout), the state file removed and the lock released. A second
// instance for the same StateDir gets a *LockedError.
func (m *Manager) Run(ctx context.Context) error {
	if m.Engine == nil {
		return errors.New("procman: Manager.Engine is nil")
	}
	log := m.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host := m.Host
	if host == "" {
		host = "127.0.0.1"
	}

	lock, err := AcquireLock(m.StateDir)
	if err != nil {
		var locked *LockedError
		if errors.As(err, &locked) && m.Workspace != "" {
			locked.Workspace = m.Workspace
		}
		return err
	}
	defer lock.Close()
	err = WriteState(m.StateDir, State{
		ManagerPID: os.Getpid(),
		Workspace:  m.Workspace,
		StartedAt:  time.Now().UTC(),
	})
	if err != nil {
		return err
	}
	// Removed before the lock is released (defers run last-in first-out),
	// so it can never delete a successor's file.
	defer func() {
		if err := RemoveState(m.StateDir); err != nil {
			log.Error("removing state file", "err", err)
		}
	}()

	opts := m.Options
	opts.Startup = true
	if opts.Name == "" {
		opts.Name = "engine"
	}
	if opts.Output == nil {
		opts.Output = os.Stdout
	}
	if opts.ParentDeathSignal == 0 {
		opts.ParentDeathSignal = syscall.SIGKILL
	}
	user := opts.OnEvent
	opts.OnEvent = func(ev Event) {
		m.record(ev, host, log)
		if user != nil {
			user(ev)
		}
	}
	err = NewSupervisor(m.Engine, opts).Run(ctx)
	if err != nil {
		log.Error("engine supervision ended", "err", err)
	}
	return err
}

// record logs ev and brings the state file up to date: the fields of an
// engine that is gone are cleared, so clients never dial a dead address.
func (m *Manager) record(ev Event, host string, log *slog.Logger) {
	var update func(*State)
	switch ev.Kind {
	case EventStarted:
		log.Info(ev.String(), "pid", ev.Pid)
		update = func(s *State) {
			// The new engine may have written its token already; the last
			// one's went with its EventExited.
			tok := s.ClientToken
			clearEngine(s)
			s.EnginePID, s.ClientToken = ev.Pid, tok
		}
	case EventReady:
		log.Info(ev.String(), "pid", ev.Pid, "grpc_port", ev.Info.GRPCPort, "web", string(ev.Info.Web.State), "web_port", ev.Info.Web.Port, "web_error", ev.Info.Web.Error)
		update = func(s *State) {
			s.EnginePID = ev.Pid
			s.GRPCAddress = net.JoinHostPort(host, strconv.Itoa(ev.Info.GRPCPort))
			s.WebURL = ""
			if ev.Info.Web.State == WebEnabled {
				s.WebURL = "http://" + net.JoinHostPort(host, strconv.Itoa(ev.Info.Web.Port))
			}
		}
	case EventExited:
		if ev.Crash {
			log.Warn(ev.String(), "pid", ev.Pid)
		} else {
			log.Info(ev.String(), "pid", ev.Pid)
		}
		update = clearEngine
	case EventRestarting:
		log.Info(ev.String())
	case EventGaveUp:
		log.Error(ev.String())
	}
	if update != nil {
		if err := UpdateState(m.StateDir, update); err != nil {
			log.Error("updating state file", "err", err)
		}
	}
}

func clearEngine(s *State) {
	s.EnginePID, s.AgentPID = 0, 0
	s.GRPCAddress, s.WebURL, s.SandboxStatus, s.ClientToken = "", "", "", ""
	s.Doors = nil
}
