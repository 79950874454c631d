package tools

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/proctest"
)

func TestExecuteCommand(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	res := wantOK(t, call(t, r, "execute_command", map[string]any{"command": "pwd; echo out; echo err >&2"}))
	if res.Output != ws+"\nout\nerr\n" || res.ExitCode != 0 {
		t.Fatalf("output: %q exit %d", res.Output, res.ExitCode)
	}
	res = call(t, r, "execute_command", map[string]any{"command": "echo failing; exit 3"})
	wantErr(t, res, "failing", "[exit code 3]")
	if res.ExitCode != 3 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	// stdin is empty: cat ends at once instead of waiting for input.
	res = wantOK(t, call(t, r, "execute_command", map[string]any{"command": "cat; echo done"}))
	if res.Output != "done\n" {
		t.Fatalf("stdin: %q", res.Output)
	}
	res = wantOK(t, call(t, r, "execute_command", map[string]any{"command": "true"}))
	if res.Output != "[no output]" {
		t.Fatalf("silent: %q", res.Output)
	}
	// Confined, the shell is PID 1 of its namespace and ignores signals it
	// has no handler for; the signal report is checked unconfined.
	ur, _ := newTestRegistry(t, unconfined)
	res = call(t, ur, "execute_command", map[string]any{"command": "kill -TERM $$"})
	wantErr(t, res, "killed by signal terminated")
	if res.ExitCode != 128+15 {
		t.Fatalf("signal exit code %d", res.ExitCode)
	}
}

func TestExecuteCommandOutputCap(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, func(o *Options) { o.OutputLimit = 2000 })
	res := wantOK(t, call(t, r, "execute_command", map[string]any{"command": "echo START; i=0; while [ $i -lt 3000 ]; do echo 0123456789012345678901234567890123456789; i=$((i+1)); done; echo END"}))
	if !res.Truncated || !strings.HasPrefix(res.Output, "START\n") || !strings.HasSuffix(res.Output, "END\n") {
		t.Fatalf("head/tail: truncated=%v %q...%q", res.Truncated, res.Output[:40], res.Output[len(res.Output)-40:])
	}
	if !strings.Contains(res.Output, "[... truncated: ") || len(res.Output) > 2000+100 {
		t.Fatalf("marker or size: len %d", len(res.Output))
	}
	// The marker counts exactly what was dropped.
	total := len("START\n") + 3000*41 + len("END\n")
	if want := "truncated: " + strconv.Itoa(total-2000) + " more bytes"; !strings.Contains(res.Output, want) {
		t.Fatalf("want %q in marker", want)
	}
}

// lateWriter starts a background child that writes marker once the file
// "go" exists, and prints the shell's pid (its process group id) first.
const lateWriter = `echo $$; (while [ ! -e go ]; do sleep 0.05; done; echo late > marker) & `

func pgidOf(t *testing.T, out string) int {
	t.Helper()
	first, _, _ := strings.Cut(out, "\n")
	pgid, err := strconv.Atoi(first)
	if err != nil || pgid <= 1 {
		t.Fatalf("no pgid in output %q", out)
	}
	return pgid
}

// TestLateWriterControl shows the background child really writes when it
// is left alive, so the tests below prove something.
func TestLateWriterControl(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, nil)
	wantOK(t, call(t, r, "execute_command", map[string]any{"command": lateWriter + "touch go; wait"}))
	if readFile(t, filepath.Join(ws, "marker")) != "late\n" {
		t.Fatal("control: the child did not write")
	}
}

func TestExecuteCommandTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, func(o *Options) { o.MaxCommandTimeout = time.Second; unconfined(o) })
	res := call(t, r, "execute_command", map[string]any{"command": lateWriter + "sleep 300", "timeout_seconds": 3600})
	wantErr(t, res, "timed out after 1s", "process group were killed", "capped")
	if res.ExitCode != -1 {
		t.Fatalf("exit code %d", res.ExitCode)
	}
	pgid := pgidOf(t, res.Output)
	waitGroupGone(t, pgid)
	writeFile(t, filepath.Join(ws, "go"), "")
	if exists(filepath.Join(ws, "marker")) {
		t.Fatal("the background child survived the timeout and wrote")
	}
}

func TestExecuteCommandBackgroundDoesNotOutlive(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, unconfined)
	// The child keeps stdout open; the call must still return when the shell exits.
	res := wantOK(t, call(t, r, "execute_command", map[string]any{"command": lateWriter + "exit 0"}))
	pgid := pgidOf(t, res.Output)
	waitGroupGone(t, pgid)
	writeFile(t, filepath.Join(ws, "go"), "")
	if exists(filepath.Join(ws, "marker")) {
		t.Fatal("a background child outlived the command")
	}
}

func TestExecuteCommandCancel(t *testing.T) {
	t.Parallel()
	r, ws := newTestRegistry(t, unconfined)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		done <- r.Execute(ctx, "execute_command", []byte(`{"command":"echo $$ > pgid; `+lateWriter+` sleep 300"}`))
	}()
	// The redirection creates pgid before echo writes to it: wait for
	// its content, not its existence.
	proctest.Until(t, "the command to start", 20*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(ws, "pgid"))
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	cancel()
	res := <-done
	wantErr(t, res, "cancelled")
	pgid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(ws, "pgid"))))
	if err != nil {
		t.Fatal(err)
	}
	waitGroupGone(t, pgid)
	writeFile(t, filepath.Join(ws, "go"), "")
	if exists(filepath.Join(ws, "marker")) {
		t.Fatal("the background child survived cancellation")
	}
}

func TestExecuteCommandScrubsEnv(t *testing.T) {
	t.Parallel()
	base := []string{
		"OPENAI_API_KEY=sk-live-1", "ANTHROPIC_API_KEY=sk-ant-2", "GITHUB_TOKEN=ghp_3", "AWS_ACCESS_KEY_ID=AKIA4",
		"AWS_REGION=eu-west-1", "DB_PASSWORD=hunter2", "my_client_secret=s5", "STRIPE_KEY=sk_6", "GODEBUG=x=1",
		"OPENPARALLAX_TOKEN=t7", "SSH_AUTH_SOCK=/tmp/agent", "CUSTOM_THING=c8",
		"PATH=/engine/bin", "HOME=/home/engine", "LANG=fr_FR",
		"KEEP_ME=visible", "TERM=xterm",
	}
	r, _ := newTestRegistry(t, func(o *Options) {
		o.Env = base
		o.ScrubEnv = []string{"CUSTOM_*"}
	})
	res := wantOK(t, call(t, r, "execute_command", map[string]any{"command": "env"}))
	env := map[string]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(res.Output), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_REGION", "DB_PASSWORD", "my_client_secret", "STRIPE_KEY", "GODEBUG", "OPENPARALLAX_TOKEN", "SSH_AUTH_SOCK", "CUSTOM_THING"} {
		if v, ok := env[k]; ok {
			t.Errorf("%s=%s reached the command", k, v)
		}
	}
	if env["KEEP_ME"] != "visible" || env["TERM"] != "xterm" {
		t.Errorf("ordinary variables lost: %v", env)
	}
	if env["PATH"] != defaultPath || env["LANG"] != "C.UTF-8" || env["HOME"] != r.home || strings.HasPrefix(env["HOME"], r.Workspace()) {
		t.Errorf("fixed variables: PATH=%q LANG=%q HOME=%q", env["PATH"], env["LANG"], env["HOME"])
	}
	for _, secret := range []string{"sk-live-1", "hunter2", "ghp_3", "AKIA4"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("secret %q in the output", secret)
		}
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for name, o := range map[string]Options{
		"no workspace":       {},
		"missing workspace":  {Workspace: filepath.Join(ws, "nope")},
		"root":               {Workspace: "/"},
		"home in workspace":  {Workspace: ws, Home: ws},
		"timeouts":           {Workspace: ws, CommandTimeout: time.Hour, MaxCommandTimeout: time.Minute},
		"bad scrub pattern":  {Workspace: ws, ScrubEnv: []string{"[X"}},
		"tiny output limit":  {Workspace: ws, OutputLimit: 10},
		"workspace is afile": {Workspace: "/etc/hostname"},
	} {
		if r, err := New(o); err == nil {
			r.Close()
			t.Errorf("%s: New accepted %+v", name, o)
		}
	}
}
