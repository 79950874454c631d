package procman

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/proctest"
)

func TestStartupReport(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, lines string
		want        StartInfo
	}{
		{"web", "PORT:4000\nWEB:4001\n", StartInfo{4000, WebStatus{State: WebEnabled, Port: 4001}}},
		{"web failed", "PORT:4000\r\nWEB_FAILED:8080:listen tcp :8080: bind: address already in use\r\n",
			StartInfo{4000, WebStatus{State: WebFailed, Port: 8080, Error: "listen tcp :8080: bind: address already in use"}}},
		{"web disabled", "PORT:65535\nWEB_DISABLED\n", StartInfo{65535, WebStatus{State: WebDisabled}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			var out proctest.Buffer
			// 256 KiB after the report: more than a pipe holds, so the child
			// only exits if stdout keeps being drained.
			s := NewSupervisor(engineCmd(envLines+"="+tc.lines+"after the report\n", envBulk+"=262144", envExits+"=0"),
				Options{Name: "engine", Startup: true, Output: &out, OnEvent: rec.on, MaxCrashes: 1})
			if err := s.Run(context.Background()); err != nil {
				t.Fatalf("Run: %v", err)
			}
			ready := rec.all(EventReady)
			if len(ready) != 1 || ready[0].Info != tc.want {
				t.Fatalf("ready events %+v, want one with %+v", ready, tc.want)
			}
			if started := rec.all(EventStarted); len(started) != 1 || started[0].Pid != ready[0].Pid {
				t.Fatalf("started events %+v", started)
			}
			got := out.String()
			if !strings.HasPrefix(got, "after the report\n") || len(got) != len("after the report\n")+262144 {
				t.Fatalf("drained output: %d bytes starting %q", len(got), got[:min(len(got), 40)])
			}
		})
	}
}

func TestStartupReportRejected(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, lines, exits string
		want               string
	}{
		{"garbage before PORT", "starting engine...\nPORT:4000\nWEB_DISABLED\n", "hang", `unexpected line before PORT: "starting engine..."`},
		{"port out of range", "PORT:70000\nWEB_DISABLED\n", "hang", `bad PORT line "PORT:70000": port 70000 out of range 1-65535`},
		{"port zero", "PORT:0\nWEB_DISABLED\n", "hang", "port 0 out of range"},
		{"web port out of range", "PORT:4000\nWEB:123456\n", "hang", `bad WEB line "WEB:123456"`},
		{"second PORT", "PORT:4000\nPORT:4001\n", "hang", `expected WEB:, WEB_FAILED: or WEB_DISABLED after PORT:4000, got "PORT:4001"`},
		// Dying before the report counts as a crash even with exit code 0.
		{"exit before WEB", "PORT:4000\n", "0", "exited with exit status 0 before finishing its startup report"},
		{"exit silently", "", "3", "exited with exit status 3 before finishing its startup report: bad startup report: before the PORT: line: stdout closed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			s := NewSupervisor(engineCmd(envLines+"="+tc.lines, envExits+"="+tc.exits),
				Options{Name: "engine", Startup: true, OnEvent: rec.on, MaxCrashes: 1, StopTimeout: 100 * time.Millisecond})
			err := s.Run(context.Background())
			var gu *GiveUpError
			if !errors.As(err, &gu) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v\nwant a GiveUpError containing %q", err, tc.want)
			}
			if len(rec.all(EventReady)) != 0 {
				t.Fatal("a rejected report produced a ready event")
			}
			pid := rec.all(EventStarted)[0].Pid
			if !gone(pid) {
				t.Fatalf("child %d still running", pid)
			}
		})
	}
}

func TestStartupTimeout(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	// PORT but no WEB line, then silence.
	s := NewSupervisor(engineCmd(envLines+"=PORT:4000\n", envExits+"=hang"),
		Options{Name: "engine", Startup: true, StartTimeout: 200 * time.Millisecond, StopTimeout: 100 * time.Millisecond,
			OnEvent: rec.on, MaxCrashes: 1})
	err := s.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "no complete startup report within 200ms") {
		t.Fatalf("Run: %v", err)
	}
	exited := rec.all(EventExited)
	if len(exited) != 1 || !exited[0].Crash {
		t.Fatalf("exited events %+v", exited)
	}
	var ce *CrashError
	if !errors.As(exited[0].Err, &ce) || !ce.Killed {
		t.Fatalf("crash %v: want the child killed by the supervisor", exited[0].Err)
	}
	if err := syscall.Kill(exited[0].Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill(%d, 0) = %v, want ESRCH", exited[0].Pid, err)
	}
}

func TestCrashBudget(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := NewSupervisor(engineCmd(envExits+"=1"),
		Options{Name: "engine", CrashDelay: time.Millisecond, OnEvent: rec.on})
	err := s.Run(context.Background())
	var gu *GiveUpError
	if !errors.As(err, &gu) {
		t.Fatalf("Run: %v, want a GiveUpError", err)
	}
	if gu.Crashes != DefaultMaxCrashes || gu.Last.State.ExitCode() != 1 {
		t.Fatalf("gave up after %d crashes, last %v", gu.Crashes, gu.Last)
	}
	if !strings.Contains(err.Error(), "engine crashed 5 times within 1m0s") || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("error %q does not name the budget and the last exit status", err)
	}
	if n := len(rec.all(EventStarted)); n != 5 {
		t.Fatalf("%d starts, want 5", n)
	}
	if n := len(rec.all(EventRestarting)); n != 4 {
		t.Fatalf("%d restarts, want 4", n)
	}
	if n := len(rec.all(EventGaveUp)); n != 1 {
		t.Fatalf("%d gave-up events, want 1", n)
	}
}

func TestCrashWindowForgetsOldCrashes(t *testing.T) {
	t.Parallel()
	// Four crashes, then a clean exit. With a budget of two crashes, only a
	// window shorter than the delay between crashes lets the fifth run happen:
	// each crash is then older than the window when the next one comes.
	t.Run("short window", func(t *testing.T) {
		t.Parallel()
		counter := counterFile(t)
		s := NewSupervisor(engineCmd(envExits+"=1,1,1,1,0", envCounter+"="+counter),
			Options{MaxCrashes: 2, CrashWindow: 20 * time.Millisecond, CrashDelay: 50 * time.Millisecond})
		if err := s.Run(context.Background()); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if n := runs(t, counter); n != 5 {
			t.Fatalf("%d runs, want 5", n)
		}
	})
	t.Run("long window", func(t *testing.T) {
		t.Parallel()
		counter := counterFile(t)
		s := NewSupervisor(engineCmd(envExits+"=1,1,1,1,0", envCounter+"="+counter),
			Options{MaxCrashes: 2, CrashWindow: time.Hour, CrashDelay: 50 * time.Millisecond})
		var gu *GiveUpError
		if err := s.Run(context.Background()); !errors.As(err, &gu) || gu.Crashes != 2 {
			t.Fatalf("Run: %v, want giving up after 2 crashes", err)
		}
		if n := runs(t, counter); n != 2 {
			t.Fatalf("%d runs, want 2", n)
		}
	})
}

func TestRestartExitCodeIsNotACrash(t *testing.T) {
	t.Parallel()
	counter := counterFile(t)
	rec := newRecorder()
	// A budget of one crash: any exit-75 counted as a crash would end it.
	s := NewSupervisor(engineCmd(envExits+"=75,75,75,0", envCounter+"="+counter,
		envLines+"=PORT:4000\nWEB_DISABLED\n"),
		Options{Startup: true, MaxCrashes: 1, CrashDelay: time.Hour, OnEvent: rec.on})
	if err := s.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := runs(t, counter); n != 4 {
		t.Fatalf("%d runs, want 4", n)
	}
	if n := len(rec.all(EventReady)); n != 4 {
		t.Fatalf("%d ready events, want 4", n)
	}
	for _, ev := range rec.all(EventExited) {
		if ev.Crash {
			t.Fatalf("counted as a crash: %v", ev)
		}
	}
	for _, ev := range rec.all(EventRestarting) {
		if ev.Delay != 0 || ev.Crashes != 0 {
			t.Fatalf("restart after exit 75 was delayed or counted: %+v", ev)
		}
	}
}

func TestCleanExitEndsSupervision(t *testing.T) {
	t.Parallel()
	counter := counterFile(t)
	s := NewSupervisor(engineCmd(envExits+"=0", envCounter+"="+counter), Options{})
	if err := s.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := runs(t, counter); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
}

func TestStopEscalatesToSIGKILL(t *testing.T) {
	t.Parallel()
	pidFile := counterFile(t)
	rec := newRecorder()
	// The child ignores SIGTERM (set before it reports) and has a child of
	// its own in its process group.
	s := NewSupervisor(engineCmd(envIgnoreTerm+"=1", envGrandchild+"="+pidFile, envExits+"=hang",
		envLines+"=PORT:4000\nWEB_DISABLED\n"),
		Options{Startup: true, StopTimeout: 200 * time.Millisecond, OnEvent: rec.on})
	done := runAsync(context.Background(), s)
	ready := rec.wait(t, EventReady)
	grandchild := readPidFile(t, pidFile)
	if s.Pid() != ready.Pid {
		t.Fatalf("Pid() = %d, want %d", s.Pid(), ready.Pid)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := result(t, done); err != nil {
		t.Fatalf("Run after Stop: %v", err)
	}
	exited := rec.all(EventExited)
	if len(exited) != 1 || exited[0].Crash {
		t.Fatalf("exited events %+v", exited)
	}
	if ws := exited[0].State.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL", exited[0].State)
	}
	if err := syscall.Kill(ready.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill(%d, 0) = %v, want ESRCH", ready.Pid, err)
	}
	proctest.Until(t, "grandchild killed with its group", 30*time.Second, func() bool { return gone(grandchild) })
	if s.Pid() != 0 {
		t.Fatalf("Pid() = %d after stop", s.Pid())
	}
}

func TestStopContextCutsGracePeriod(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := NewSupervisor(engineCmd(envIgnoreTerm+"=1", envExits+"=hang", envLines+"=PORT:4000\nWEB_DISABLED\n"),
		Options{Startup: true, StopTimeout: time.Hour, OnEvent: rec.on})
	done := runAsync(context.Background(), s)
	ready := rec.wait(t, EventReady)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	s.Stop(ctx)
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if ws := rec.all(EventExited)[0].State.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL", ws)
	}
	if err := syscall.Kill(ready.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill(%d, 0) = %v, want ESRCH", ready.Pid, err)
	}
}

func TestCancelContextStopsGracefully(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := NewSupervisor(engineCmd(envExits+"=hang"), Options{OnEvent: rec.on})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(ctx, s)
	started := rec.wait(t, EventStarted)
	cancel()
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	ev := rec.wait(t, EventExited)
	if ws := ev.State.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGTERM || ev.Crash {
		t.Fatalf("child ended with %v (crash %v), want SIGTERM, not a crash", ev.State, ev.Crash)
	}
	if err := syscall.Kill(started.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("kill(%d, 0) = %v, want ESRCH", started.Pid, err)
	}
}

func TestStopDuringCrashDelay(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := NewSupervisor(engineCmd(envExits+"=1"), Options{CrashDelay: time.Hour, OnEvent: rec.on})
	done := runAsync(context.Background(), s)
	rec.wait(t, EventRestarting)
	s.Stop(context.Background())
	if err := result(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(rec.all(EventStarted)); n != 1 {
		t.Fatalf("%d starts, want 1", n)
	}
}

func TestLeftoverDescendantsAreKilled(t *testing.T) {
	t.Parallel()
	pidFile := counterFile(t)
	s := NewSupervisor(engineCmd(envGrandchild+"="+pidFile, envExits+"=0"), Options{})
	if err := s.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	grandchild := readPidFile(t, pidFile)
	proctest.Until(t, "grandchild killed after its parent exited", 30*time.Second, func() bool { return gone(grandchild) })
}

func TestSpawnFailureIsACrash(t *testing.T) {
	t.Parallel()
	s := NewSupervisor(func() (*exec.Cmd, error) { return exec.Command("/nonexistent/engine"), nil },
		Options{Name: "engine", MaxCrashes: 2, CrashDelay: time.Millisecond})
	err := s.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "could not start: starting /nonexistent/engine") {
		t.Fatalf("Run: %v", err)
	}
}

func TestStdoutOwnedInStartupMode(t *testing.T) {
	t.Parallel()
	s := NewSupervisor(func() (*exec.Cmd, error) {
		cmd := exec.Command("/bin/true")
		cmd.Stdout = new(bytes.Buffer)
		return cmd, nil
	}, Options{Startup: true})
	if err := s.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Options.Output") {
		t.Fatalf("Run: %v", err)
	}
}
