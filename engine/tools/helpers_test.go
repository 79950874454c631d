package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/sandbox"
)

// TestMain makes the test binary the confined executor's helper when it
// is re-executed as one.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == sandbox.ExecHelperArg {
		sandbox.ExecMain()
	}
	os.Exit(m.Run())
}

// testExecutor is the confined executor over the test binary, or nil
// (with AllowUnconfined) where the host has no Landlock or seccomp.
func testOptions(ws string) Options {
	o := Options{Workspace: ws, Env: []string{"PATH=/usr/bin:/bin"}}
	self, err := os.Executable()
	if err == nil {
		o.Executor, err = sandbox.NewExecutor(self)
	}
	if err != nil {
		o.AllowUnconfined = true
	}
	return o
}

// newTestRegistry makes a registry over a fresh workspace inside a fresh
// parent directory, so tests can put files next to (outside) the workspace.
func newTestRegistry(t *testing.T, mutate func(*Options)) (*Registry, string) {
	t.Helper()
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := testOptions(ws)
	if mutate != nil {
		mutate(&opts)
	}
	r, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	if opts.Executor != nil {
		t.Cleanup(func() { opts.Executor.Close() })
	}
	return r, r.Workspace()
}

// call runs a tool with arguments given as a Go value.
func call(t *testing.T, r *Registry, name string, a any) Result {
	t.Helper()
	data, ok := a.(string)
	if !ok {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		data = string(b)
	}
	return r.Execute(context.Background(), name, []byte(data))
}

func wantOK(t *testing.T, res Result) Result {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Output)
	}
	return res
}

func wantErr(t *testing.T, res Result, substrs ...string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("expected an error result, got: %s", res.Output)
	}
	for _, s := range substrs {
		if !strings.Contains(res.Output, s) {
			t.Fatalf("error %q does not mention %q", res.Output, s)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// liveMembers lists the processes of a process group that are not zombies,
// read from /proc.
func liveMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var live []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid pgrp ...": comm may hold anything, so
		// parse after the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(fields[2]); g == pgid && fields[0] != "Z" && fields[0] != "X" {
			live = append(live, pid)
		}
	}
	return live
}

// waitGroupGone waits until no live process is left in the group. SIGKILL
// was sent before Execute returned; this only lets the kernel finish.
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		live := liveMembers(t, pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range live {
				syscall.Kill(pid, syscall.SIGKILL) // don't leak them past the test
			}
			t.Fatalf("process group %d still has live members %v", pgid, live)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// validate checks arguments as the engine does before asking the shield:
// Prepare, or for load_tools (answered by the engine) its groups.
func validate(r *Registry, name string, args []byte) error {
	if name == LoadToolsName {
		_, err := r.LoadToolsGroups(args)
		return err
	}
	_, err := r.Prepare(name, args)
	return err
}

func withEnv(o Options, env []string) Options {
	o.Env = env
	return o
}

// unconfined makes a registry run commands without the executor, for
// tests of the process-group handling that reads host pids.
func unconfined(o *Options) {
	o.Executor, o.AllowUnconfined = nil, true
}

// callWith is call under a verdict's grant, as the engine runs a call.
func callWith(t *testing.T, r *Registry, g Grant, name string, a any) Result {
	t.Helper()
	data, ok := a.(string)
	if !ok {
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		data = string(b)
	}
	return r.ExecuteWith(context.Background(), name, []byte(data), g)
}
