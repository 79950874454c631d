package procman

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// StateFile is where the running instance describes itself, for the client
// commands (status, chat, stop, ...) to find the engine.
const StateFile = "state.json"

// stateLockFile serialises read-modify-write of the state file between the
// manager and the engine (which fills in the agent's fields).
const stateLockFile = "state.lock"

// State is the content of the state file.
type State struct {
	ManagerPID    int    `json:"manager_pid"`
	EnginePID     int    `json:"engine_pid"` // 0 while the engine restarts
	AgentPID      int    `json:"agent_pid"`
	GRPCAddress   string `json:"grpc_address"` // empty until the engine reports
	WebURL        string `json:"web_url"`      // empty unless the web server runs
	SandboxStatus string `json:"sandbox_status"`
	// ClientToken is the running engine's credential for ClientService
	// and the web API; the engine writes it before it reports its port.
	// The file is 0600: only the engine's user can read it.
	ClientToken string    `json:"client_token,omitempty"`
	Workspace   string    `json:"workspace"`
	StartedAt   time.Time `json:"started_at"` // when the manager started
	// Doors maps each front door the engine serves (openclaude, crawbl)
	// to its address.
	Doors map[string]string `json:"doors,omitempty"`
}

// WriteState replaces the state file atomically (temp file + rename), so a
// reader sees the old state or the new one, never a mix.
func WriteState(stateDir string, st State) error {
	return withStateLock(stateDir, func() error { return writeState(stateDir, st) })
}

// ReadState reads the state file; a missing file is an error matching fs.ErrNotExist.
func ReadState(stateDir string) (State, error) {
	var st State
	b, err := os.ReadFile(filepath.Join(stateDir, StateFile))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("parsing %s: %w", filepath.Join(stateDir, StateFile), err)
	}
	return st, nil
}

// UpdateState applies fn to the current state and writes the result. It never
// creates the file: with no state there is no instance to update.
func UpdateState(stateDir string, fn func(*State)) error {
	return withStateLock(stateDir, func() error {
		st, err := ReadState(stateDir)
		if err != nil {
			return err
		}
		fn(&st)
		return writeState(stateDir, st)
	})
}

// RemoveState deletes the state file; a missing file is not an error.
func RemoveState(stateDir string) error {
	return withStateLock(stateDir, func() error {
		err := os.Remove(filepath.Join(stateDir, StateFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	})
}

func writeState(stateDir string, st State) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(stateDir, ".state-*.json")
	if err != nil {
		return fmt.Errorf("writing state: %w", err)
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(stateDir, StateFile))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing state: %w", err)
	}
	return nil
}

func withStateLock(stateDir string, fn func() error) error {
	f, err := os.OpenFile(filepath.Join(stateDir, stateLockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("opening state lock: %w", err)
	}
	defer f.Close() // closing releases the lock
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking state: %w", err)
	}
	return fn()
}
