package procman

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/proctest"
)

func TestManagerStateLifecycle(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state") // created by the manager
	rec := newRecorder()
	m := &Manager{
		StateDir:  dir,
		Workspace: "/ws/main",
		Engine:    engineCmd(envLines+"=PORT:4242\nWEB:4343\n", envExits+"=hang"),
		Options:   Options{OnEvent: rec.on, StopTimeout: time.Second},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	ready := rec.wait(t, EventReady)
	st, ok := Running(dir)
	if !ok {
		t.Fatal("not Running while the manager holds the lock")
	}
	if st.ManagerPID != os.Getpid() || st.EnginePID != ready.Pid || st.GRPCAddress != "127.0.0.1:4242" ||
		st.WebURL != "http://127.0.0.1:4343" || st.Workspace != "/ws/main" || st.StartedAt.IsZero() {
		t.Fatalf("state %+v", st)
	}

	// A second manager for the same workspace is refused.
	second := &Manager{StateDir: dir, Workspace: "/ws/main", Engine: engineCmd()}
	err := second.Run(context.Background())
	var locked *LockedError
	if !errors.As(err, &locked) || err.Error() != "another instance is running for workspace /ws/main (pid "+strconv.Itoa(os.Getpid())+")" {
		t.Fatalf("second manager: %v", err)
	}

	cancel() // what SIGTERM/SIGINT do through signal.NotifyContext
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := ReadState(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("state file after stop: %v", err)
	}
	if _, ok := Running(dir); ok {
		t.Fatal("Running after stop")
	}
	if err := syscall.Kill(ready.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("engine pid %d: kill(0) = %v, want ESRCH", ready.Pid, err)
	}
}

func TestManagerClearsEngineFieldsBetweenRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	counter := counterFile(t)
	var seen []State
	m := &Manager{
		StateDir: dir,
		Engine:   engineCmd(envLines+"=PORT:4242\nWEB_DISABLED\n", envExits+"=75,0", envCounter+"="+counter),
		Options: Options{OnEvent: func(ev Event) {
			if ev.Kind == EventReady || ev.Kind == EventExited {
				st, err := ReadState(dir)
				if err != nil {
					t.Errorf("ReadState: %v", err)
				}
				seen = append(seen, st)
			}
		}},
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(seen) != 4 {
		t.Fatalf("%d observations, want ready/exited twice", len(seen))
	}
	for i, st := range seen {
		if i%2 == 0 && (st.GRPCAddress != "127.0.0.1:4242" || st.WebURL != "" || st.EnginePID == 0) {
			t.Fatalf("while ready: %+v", st)
		}
		if i%2 == 1 && (st.GRPCAddress != "" || st.EnginePID != 0) {
			t.Fatalf("after exit: %+v", st)
		}
	}
	if seen[0].EnginePID == seen[2].EnginePID {
		t.Fatal("restart did not record the new engine pid")
	}
}

func TestManagerGivesUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m := &Manager{
		StateDir: dir,
		Engine:   engineCmd(envExits + "=1"),
		Options:  Options{CrashDelay: time.Millisecond},
	}
	err := m.Run(context.Background())
	var gu *GiveUpError
	if !errors.As(err, &gu) || !strings.Contains(err.Error(), "engine crashed 5 times") {
		t.Fatalf("Run: %v", err)
	}
	if _, err := ReadState(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("state file after giving up: %v", err)
	}
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("lock after giving up: %v", err)
	}
	l.Close()
}

func TestDaemonize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := Daemonize(DaemonConfig{
		StateDir: dir,
		Env: append(childEnv("manager"), envStateDir+"="+dir,
			envLines+"=PORT:4242\nWEB_DISABLED\n", envExits+"=hang"),
	})
	if err != nil {
		t.Fatalf("Daemonize: %v", err)
	}
	pid := st.ManagerPID
	t.Cleanup(func() { // only if the test failed before stopping it; never a reused pid
		if run, ok := Running(dir); ok && run.ManagerPID == pid {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if st.GRPCAddress != "127.0.0.1:4242" || st.Workspace != "/ws/daemon" || st.EnginePID == 0 {
		t.Fatalf("state %+v", st)
	}
	if sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, uintptr(pid), 0, 0); errno != 0 || int(sid) != pid {
		t.Fatalf("daemon session %d, want its own (%d)", sid, pid)
	}
	if run, ok := Running(dir); !ok || run.ManagerPID != pid {
		t.Fatalf("Running = %+v, %v", run, ok)
	}

	// A second daemon for the workspace fails, quoting its log.
	_, err = Daemonize(DaemonConfig{StateDir: dir, Env: append(childEnv("manager"), envStateDir+"="+dir)})
	if err == nil || !strings.Contains(err.Error(), "another instance is running for workspace /ws/daemon") {
		t.Fatalf("second Daemonize: %v", err)
	}

	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	proctest.Until(t, "daemon released the lock", 30*time.Second, func() bool { _, ok := Running(dir); return !ok })
	if _, err := ReadState(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("state file after stop: %v", err)
	}
	proctest.Until(t, "engine gone", 30*time.Second, func() bool { return gone(st.EnginePID) })
	if _, err := os.Stat(filepath.Join(dir, DefaultLogFile)); err != nil {
		t.Fatalf("daemon log: %v", err)
	}
}

func TestDaemonizeReportsEarlyExit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Daemonize(DaemonConfig{StateDir: dir, Env: []string{roleEnv + "=no-such-role"}})
	if err == nil || !strings.Contains(err.Error(), "exited with exit status 2 before the engine started") ||
		!strings.Contains(err.Error(), "unknown role no-such-role") {
		t.Fatalf("Daemonize: %v", err)
	}
}
