package procman

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestLockRefusesSecondHolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteState(dir, State{ManagerPID: os.Getpid(), Workspace: "/ws/one"}); err != nil {
		t.Fatal(err)
	}

	// Another process is refused, and told who holds the lock.
	out, err := roleCmd(t, "trylock", envStateDir+"="+dir).Output()
	want := "another instance is running for workspace /ws/one (pid " + strconv.Itoa(os.Getpid()) + ")"
	if err == nil || strings.TrimSpace(string(out)) != want {
		t.Fatalf("second holder: %v, output %q; want %q", err, out, want)
	}
	// So is a second open in this process: flock locks are per open file.
	if _, err := AcquireLock(dir); err == nil {
		t.Fatal("second AcquireLock in-process succeeded")
	}
	if st, ok := Running(dir); !ok || st.ManagerPID != os.Getpid() {
		t.Fatalf("Running = %+v, %v", st, ok)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := roleCmd(t, "trylock", envStateDir+"="+dir).Output(); err != nil || string(out) != "LOCKED\n" {
		t.Fatalf("after release: %v, output %q", err, out)
	}
	if _, ok := Running(dir); ok {
		t.Fatal("Running after release")
	}
}

func TestLockFreedWhenHolderIsKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	holder := roleCmd(t, "holdlock", envStateDir+"="+dir)
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer holder.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "LOCKED\n" {
		t.Fatalf("holder said %q, %v", line, err)
	}

	_, err = AcquireLock(dir)
	var locked *LockedError
	if !errors.As(err, &locked) || locked.PID != holder.Process.Pid || locked.Workspace != dir {
		t.Fatalf("AcquireLock while held: %v", err)
	}
	if st, ok := Running(dir); !ok || st.ManagerPID != holder.Process.Pid {
		t.Fatalf("Running = %+v, %v; want held by %d", st, ok, holder.Process.Pid)
	}

	// SIGKILL: no chance to clean up; the kernel drops the lock.
	if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	holder.Wait()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Fatalf("lock file: %v (the stale file is expected to stay)", err)
	}
	if _, ok := Running(dir); ok {
		t.Fatal("Running after the holder died")
	}
	l, err := AcquireLock(dir)
	if err != nil {
		t.Fatalf("AcquireLock after the holder died: %v", err)
	}
	l.Close()
}

func TestRunningIgnoresStaleState(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, ok := Running(dir); ok {
		t.Fatal("Running with no lock file")
	}
	// A state file naming a live pid (ours) proves nothing without the lock.
	if err := WriteState(dir, State{ManagerPID: os.Getpid(), GRPCAddress: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, LockFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := Running(dir); ok {
		t.Fatal("Running trusted a stale pid")
	}
}

func TestStateRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ReadState(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadState of nothing: %v", err)
	}
	if err := UpdateState(dir, func(*State) {}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("UpdateState created a state file: %v", err)
	}
	want := State{
		ManagerPID: 10, EnginePID: 11, AgentPID: 12,
		GRPCAddress: "127.0.0.1:7700", WebURL: "http://127.0.0.1:8080",
		SandboxStatus: "sandboxed", Workspace: "/ws/x",
		StartedAt: time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC),
	}
	if err := WriteState(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadState(dir)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadState = %+v, %v; want %+v", got, err, want)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, StateFile))
	for _, key := range []string{"manager_pid", "engine_pid", "agent_pid", "grpc_address", "web_url", "sandbox_status", "workspace", "started_at"} {
		if !strings.Contains(string(raw), `"`+key+`"`) {
			t.Errorf("state file lacks %q: %s", key, raw)
		}
	}
	if err := UpdateState(dir, func(s *State) { s.AgentPID, s.Doors = 99, map[string]string{"openclaude": "127.0.0.1:1"} }); err != nil {
		t.Fatal(err)
	}
	want.AgentPID, want.Doors = 99, map[string]string{"openclaude": "127.0.0.1:1"}
	if got, _ := ReadState(dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("after update %+v", got)
	}
	if err := RemoveState(dir); err != nil {
		t.Fatal(err)
	}
	if err := RemoveState(dir); err != nil {
		t.Fatalf("second RemoveState: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".state-") {
			t.Fatalf("temp file left behind: %s", e.Name())
		}
	}
}
