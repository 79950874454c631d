package procman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/proctest"
)

// The test binary doubles as the children: TestMain runs a role instead of
// the tests when roleEnv is set.
const roleEnv = "PROCMAN_TEST_ROLE"

// Environment of the "engine" role.
const (
	envLines      = "PROCMAN_TEST_LINES"      // written to stdout first, verbatim
	envBulk       = "PROCMAN_TEST_BULK"       // then this many bytes more
	envExits      = "PROCMAN_TEST_EXITS"      // exit code per run, "hang" = wait for a signal; last repeats
	envCounter    = "PROCMAN_TEST_COUNTER"    // file counting runs across restarts
	envIgnoreTerm = "PROCMAN_TEST_IGNORETERM" // "1": ignore SIGTERM
	envGrandchild = "PROCMAN_TEST_GRANDCHILD" // file to receive the pid of a spawned sleeper
	envStateDir   = "PROCMAN_TEST_STATEDIR"   // for the lock and manager roles
)

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role))
	}
	os.Exit(m.Run())
}

func runRole(role string) int {
	switch role {
	case "engine":
		return engineRole()
	case "sleeper":
		time.Sleep(time.Hour)
		return 0
	case "trylock": // take the lock once and report
		l, err := AcquireLock(os.Getenv(envStateDir))
		if err != nil {
			fmt.Println(err)
			return 3
		}
		l.Close()
		fmt.Println("LOCKED")
		return 0
	case "holdlock": // take the lock and keep it until killed
		if _, err := AcquireLock(os.Getenv(envStateDir)); err != nil {
			fmt.Println(err)
			return 3
		}
		fmt.Println("LOCKED")
		time.Sleep(time.Hour)
		return 0
	case "manager":
		return managerRole()
	}
	fmt.Fprintln(os.Stderr, "unknown role", role)
	return 2
}

func engineRole() int {
	run := 0
	if path := os.Getenv(envCounter); path != "" {
		b, _ := os.ReadFile(path)
		run, _ = strconv.Atoi(string(b))
		if err := os.WriteFile(path, []byte(strconv.Itoa(run+1)), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	if os.Getenv(envIgnoreTerm) == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	if path := os.Getenv(envGrandchild); path != "" {
		exe, _ := os.Executable()
		gc := exec.Command(exe)
		gc.Env = append(os.Environ(), roleEnv+"=sleeper")
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		tmp := path + ".tmp"
		os.WriteFile(tmp, []byte(strconv.Itoa(gc.Process.Pid)), 0o600)
		os.Rename(tmp, path)
	}
	os.Stdout.WriteString(os.Getenv(envLines))
	if n, _ := strconv.Atoi(os.Getenv(envBulk)); n > 0 {
		os.Stdout.Write([]byte(strings.Repeat("x", n-1) + "\n"))
	}
	exits := strings.Split(os.Getenv(envExits), ",")
	code := exits[min(run, len(exits)-1)]
	if code == "hang" || code == "" {
		time.Sleep(time.Hour)
		return 0
	}
	n, _ := strconv.Atoi(code)
	return n
}

func managerRole() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	m := &Manager{
		StateDir:  os.Getenv(envStateDir),
		Workspace: "/ws/daemon",
		Engine:    engineCmd(),
		Options:   Options{CrashDelay: time.Millisecond, StopTimeout: time.Second},
	}
	if err := m.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	return 0
}

// engineCmd makes commands that run this binary in the "engine" role with
// the extra environment env.
func engineCmd(env ...string) func() (*exec.Cmd, error) {
	return func() (*exec.Cmd, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(exe)
		cmd.Env = append(append(os.Environ(), childEnv("engine")...), env...)
		return cmd, nil
	}
}

// roleCmd runs this binary in role with the extra environment env.
func roleCmd(t *testing.T, role string, env ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), childEnv(role)...), env...)
	return cmd
}

// childEnv is what a child in role adds to our environment. Under -race a binary
// exiting with status 0 sleeps a second first (GORACE atexit_sleep_ms);
// children here have nothing to wait for.
func childEnv(role string) []string {
	return []string{roleEnv + "=" + role, "GORACE=" + os.Getenv("GORACE") + " atexit_sleep_ms=0"}
}

// recorder collects a supervisor's events.
type recorder struct {
	mu     sync.Mutex
	events []Event
	ch     chan Event
}

func newRecorder() *recorder { return &recorder{ch: make(chan Event, 1000)} }

func (r *recorder) on(ev Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	r.ch <- ev
}

func (r *recorder) all(kind EventKind) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, ev := range r.events {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

// wait returns the next event of kind; the bound only stops a broken test hanging.
func (r *recorder) wait(t *testing.T, kind EventKind) Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-r.ch:
			if ev.Kind == kind {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event", kind)
		}
	}
}

// runAsync runs s in the background; the returned channel yields Run's result.
func runAsync(ctx context.Context, s *Supervisor) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- s.Run(ctx) }()
	return ch
}

func result(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// gone reports whether pid no longer exists (or is a zombie nobody has
// reaped yet: dead, but kill(pid, 0) still succeeds on it).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// state is the field after the parenthesised command name
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z' || s[i+2] == 'X'
	}
	return false
}

func readPidFile(t *testing.T, path string) int {
	t.Helper()
	var pid int
	proctest.Until(t, "grandchild pid file", 30*time.Second, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(string(b))
		return err == nil
	})
	return pid
}

func counterFile(t *testing.T) string { return filepath.Join(t.TempDir(), "runs") }

func runs(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(string(b))
	return n
}
