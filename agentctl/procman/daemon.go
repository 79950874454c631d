package procman

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// DaemonConfig describes a detached re-execution of the current binary.
type DaemonConfig struct {
	// StateDir is the instance's state directory (holds the log).
	StateDir string
	// Path is the binary; default os.Executable().
	Path string
	// Args follow the program name: the foreground form of the command,
	// e.g. ["start", "--foreground", ...].
	Args []string
	// Env is appended to this process's environment.
	Env []string
	// LogFile receives the daemon's stdout and stderr (appended);
	// default <StateDir>/manager.log.
	LogFile string
	// Timeout bounds the wait for the engine's report; default the engine's
	// StartTimeout plus 10 s.
	Timeout time.Duration
}

// DefaultLogFile is the daemon's log inside the state directory.
const DefaultLogFile = "manager.log"

// Daemonize starts the binary again detached from the terminal (new
// session, stdin /dev/null, stdout and stderr to the log file) and waits
// until the state file names it as manager and shows a gRPC address. The
// returned State's ManagerPID is the daemon's pid. If the daemon exits or
// stays silent first, the error quotes the end of its log; a silent daemon
// is sent SIGTERM rather than left half-started.
func Daemonize(cfg DaemonConfig) (State, error) {
	if cfg.StateDir == "" {
		return State{}, errors.New("procman: no state directory given")
	}
	if cfg.Path == "" {
		exe, err := os.Executable()
		if err != nil {
			return State{}, fmt.Errorf("finding own executable: %w", err)
		}
		cfg.Path = exe
	}
	if cfg.LogFile == "" {
		cfg.LogFile = DefaultLogFile
	}
	if !filepath.IsAbs(cfg.LogFile) {
		cfg.LogFile = filepath.Join(cfg.StateDir, cfg.LogFile)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultStartTimeout + 10*time.Second
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return State{}, fmt.Errorf("creating state directory: %w", err)
	}
	logf, err := os.OpenFile(cfg.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return State{}, fmt.Errorf("opening daemon log: %w", err)
	}
	defer logf.Close() // the daemon has its own copy
	logStart, _ := logf.Seek(0, io.SeekEnd)

	cmd := exec.Command(cfg.Path, cfg.Args...)
	cmd.Env = append(os.Environ(), cfg.Env...)
	cmd.Stdin = nil // os/exec connects /dev/null
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return State{}, fmt.Errorf("starting daemon: %w", err)
	}
	pid := cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // reaps it if it dies while this process still runs
		close(exited)
	}()

	deadline := time.NewTimer(cfg.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-exited:
			return State{}, fmt.Errorf("daemon pid %d exited with %v before the engine started%s",
				pid, cmd.ProcessState, logTail(cfg.LogFile, logStart))
		case <-deadline.C:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			return State{}, fmt.Errorf("daemon pid %d did not report an engine address within %s; sent it SIGTERM%s",
				pid, cfg.Timeout, logTail(cfg.LogFile, logStart))
		case <-tick.C:
			st, err := ReadState(cfg.StateDir)
			if err == nil && st.ManagerPID == pid && st.GRPCAddress != "" {
				return st, nil
			}
		}
	}
}

// logTail returns the last lines the daemon logged, for an error message.
func logTail(path string, from int64) string {
	const max = 2048
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil || end <= from {
		return fmt.Sprintf(" (log: %s)", path)
	}
	if end-from > max {
		from = end - max
	}
	b := make([]byte, end-from)
	n, _ := f.ReadAt(b, from)
	return fmt.Sprintf("; end of %s:\n%s", path, b[:n])
}
