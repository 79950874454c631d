package procman

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockFile is the instance lock inside a workspace's state directory.
const LockFile = "engine.lock"

// Running probes take the lock (shared) for an instant; AcquireLock retries
// this long before concluding that a real holder exists.
const (
	probeRetries    = 10
	probeRetryDelay = 10 * time.Millisecond
)

// Lock is a held instance lock: an flock(2) on <stateDir>/engine.lock. The
// kernel drops it when the holding process dies, however it dies, so a stale
// file never blocks a new instance.
type Lock struct {
	f    *os.File
	path string
}

// LockedError: another live process holds the instance lock.
type LockedError struct {
	Workspace string // from the holder's state file, else the state dir
	PID       int    // the holder's pid; 0 if it has not written it yet
}

func (e *LockedError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("another instance is running for workspace %s", e.Workspace)
	}
	return fmt.Sprintf("another instance is running for workspace %s (pid %d)", e.Workspace, e.PID)
}

// AcquireLock takes the instance lock for stateDir (created if missing)
// without blocking, and writes our pid into the lock file. It fails with a
// *LockedError if another process holds it.
func AcquireLock(stateDir string) (*Lock, error) {
	if stateDir == "" {
		return nil, errors.New("procman: no state directory given")
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	path := filepath.Join(stateDir, LockFile)
	// os.OpenFile sets O_CLOEXEC: children must not inherit (and so keep) the lock.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening instance lock: %w", err)
	}
	for attempt := 0; ; attempt++ {
		err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if attempt == probeRetries {
			f.Close()
			return nil, lockedError(stateDir)
		}
		time.Sleep(probeRetryDelay)
	}
	if err := writePid(f); err != nil {
		_ = flock(f, syscall.LOCK_UN)
		f.Close()
		return nil, fmt.Errorf("writing pid to %s: %w", path, err)
	}
	return &Lock{f: f, path: path}, nil
}

func writePid(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

func lockedError(stateDir string) *LockedError {
	e := &LockedError{Workspace: stateDir}
	if b, err := os.ReadFile(filepath.Join(stateDir, LockFile)); err == nil {
		e.PID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if st, err := ReadState(stateDir); err == nil && st.Workspace != "" {
		e.Workspace = st.Workspace
	}
	return e
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }

// Close releases the lock. The file stays: removing it would let a process
// that opened the old inode lock a file nobody else sees.
func (l *Lock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0) // no stale pid for the next reader
	err := flock(l.f, syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// Running reports whether a live process holds the instance lock of
// stateDir, and if so its state (zero fields for what is not written yet).
// It trusts the lock, never a pid that may have been reused.
func Running(stateDir string) (State, bool) {
	pid, held := lockHeld(stateDir)
	if !held {
		return State{}, false
	}
	st, err := ReadState(stateDir)
	if err != nil {
		return State{ManagerPID: pid}, true
	}
	return st, true
}

// lockHeld probes the lock with a non-blocking shared flock.
func lockHeld(stateDir string) (pid int, held bool) {
	f, err := os.Open(filepath.Join(stateDir, LockFile))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	err = flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		_ = flock(f, syscall.LOCK_UN)
		return 0, false
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return 0, false
	}
	b, _ := os.ReadFile(f.Name())
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, true
}

// flock retries on EINTR, which a signal can cause while a blocking lock waits.
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
