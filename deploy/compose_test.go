package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/proctest"
)

// TestComposeStack brings up docker-compose.yaml (three shieldd replicas
// behind the name "shieldd", and the engine). First it sends one Chat and
// one Converse through the engine's doors and finds their tool calls
// judged in the replicas' audit logs (compose_engine_test.go). Then it
// drives load with the loadgen service (verify mode, through
// shieldd/client's round robin and retry config), stops one replica while
// the load runs, and checks that every decision was still answered, none
// differs from the corpus (so no wrong ALLOW), and all three replicas took
// load. It always brings the stack down.
//
// It needs a Docker engine with Compose (`docker compose` or
// docker-compose), and builds its own images with `make images` under a
// tag of its own, so runs in parallel do not collide. Environment:
// PARAPET_COMPOSE_TEST=require fails instead of skipping when there is no
// engine (CI); =skip skips it (CI runs it as its own step).
func TestComposeStack(t *testing.T) {
	switch mode := os.Getenv("PARAPET_COMPOSE_TEST"); mode {
	case "", "require":
	case "skip":
		t.Skip("PARAPET_COMPOSE_TEST=skip: the compose stack test is skipped here (make compose-test runs it)")
	default:
		t.Fatalf("PARAPET_COMPOSE_TEST=%q: want require, skip or unset", mode)
	}
	compose, why := findCompose(t)
	if compose == nil {
		if os.Getenv("PARAPET_COMPOSE_TEST") == "require" {
			t.Fatalf("PARAPET_COMPOSE_TEST=require but %s", why)
		}
		t.Skipf("skipping the compose stack test: %s", why)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	id := randomID(t)
	project, tag := "parapet-ct-"+id, "ct-"+id
	st := &stack{t: t, root: root, compose: compose, project: project,
		env: append(os.Environ(), "PARAPET_IMAGE_TAG="+tag, "PARAPET_LOAD_DURATION=150s", "PARAPET_LOAD_PROGRESS=250ms",
			"PARAPET_OTLP_ENDPOINT=", "COMPOSE_PROFILES=")} // the default profile: nothing to pull

	// Images: FROM scratch, from static binaries; nothing is pulled.
	t.Cleanup(func() {
		if out, err := exec.Command("docker", "rmi", "parapet/shieldd:"+tag, "parapet/loadgen:"+tag, "parapet/agentctl:"+tag).CombinedOutput(); err != nil {
			t.Logf("removing the test images: %v\n%s", err, out)
		}
	})
	build := exec.Command("make", "images", "IMAGE_TAG="+tag, "IMAGES_DIR="+t.TempDir())
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make images: %v\n%s", err, out)
	}

	// Cleanups run last-registered first: logs (on failure), then down.
	t.Cleanup(func() {
		if out, err := st.run(2*time.Minute, "down", "-v", "--remove-orphans", "-t", "5"); err != nil {
			t.Errorf("docker compose down: %v\n%s", err, out)
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := st.run(time.Minute, "logs", "--no-color", "--tail", "40")
			t.Logf("compose logs:\n%s", out)
		}
	})
	replicas := []string{"shieldd-1", "shieldd-2", "shieldd-3"}
	if out, err := st.run(2*time.Minute, append([]string{"up", "-d", "engine"}, replicas...)...); err != nil {
		t.Fatalf("docker compose up: %v\n%s", err, out)
	}
	// The engine first, while all three replicas run: one Chat and one
	// Converse through its doors, their verdicts found on the replicas.
	checkEngine(t, st, replicas)
	victim := "shieldd-2"
	victimID := st.container(victim) // before it stops: `compose ps` may list running ones only
	victimAddr := containerIP(t, victimID) + ":7700"

	// The load generator as compose runs it, with its output to us. The
	// run's 150s duration is only a ceiling: the test ends it with SIGTERM
	// once the survivors have answered enough, and loadgen then finishes
	// its in-flight calls and reports.
	loadName := project + "-loadgen"
	lg := st.cmd("run", "-T", "--rm", "--no-deps", "--name", loadName, "loadgen")
	var stdout, stderr proctest.Buffer
	lg.Stdout = &stdout
	pr, pw := io.Pipe()
	lg.Stderr = pw
	if err := lg.Start(); err != nil {
		t.Fatalf("docker compose run loadgen: %v", err)
	}
	var runErr error
	runDone := make(chan struct{})
	go func() { runErr = lg.Wait(); pw.Close(); close(runDone) }()
	t.Cleanup(func() { // before down: a run the test abandoned
		select {
		case <-runDone:
		default:
			exec.Command("docker", "rm", "-f", loadName).Run()
			lg.Process.Kill()
			<-runDone
		}
	})
	lines := make(chan progress, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if p, ok := parseProgress(sc.Text()); ok {
				select {
				case lines <- p:
				default: // each line is a running total: a dropped one is not missed
				}
			}
		}
	}()
	// Bounds on waiting for events, so a broken stack fails instead of
	// hanging; they are not assertions about speed.
	const bound = 3 * time.Minute
	waitFor := func(what string, ok func(progress) bool) progress {
		timeout := time.After(bound)
		for {
			select {
			case p, open := <-lines:
				if !open {
					<-runDone
					t.Fatalf("loadgen ended (%v) before %s; stderr:\n%s\nstdout:\n%s", runErr, what, stderr.String(), stdout.String())
				}
				if ok(p) {
					return p
				}
			case <-timeout:
				t.Fatalf("no loadgen progress within %s while waiting for %s; stderr:\n%s", bound, what, stderr.String())
			}
		}
	}

	// 1. Load spread over all three replicas.
	waitFor("load on three replicas", func(p progress) bool { return p.answered > 0 && p.active == 3 })
	// 2. One replica stopped mid-run: SIGTERM, shieldd drains and exits.
	if out, err := st.run(2*time.Minute, "stop", victim); err != nil {
		t.Fatalf("docker compose stop %s: %v\n%s", victim, err, out)
	}
	// 3. The two survivors keep answering: progress with two active
	// replicas after the stop, then at least 1000 more answers.
	base := waitFor("two active replicas after the stop", func(p progress) bool { return p.active == 2 }).answered
	last := waitFor("1000 answers from the survivors", func(p progress) bool { return p.answered >= base+1000 }).answered
	// 4. End the run; loadgen prints its summary and exits.
	if out, err := exec.Command("docker", "kill", "--signal", "TERM", loadName).CombinedOutput(); err != nil {
		t.Fatalf("docker kill --signal TERM %s: %v\n%s", loadName, err, out)
	}
	select {
	case <-runDone:
	case <-time.After(bound):
		t.Fatalf("loadgen did not exit within %s of SIGTERM; stderr:\n%s", bound, stderr.String())
	}
	for range lines { // the reader is done once the pipe closes
	}
	t.Logf("loadgen stderr:\n%s", stderr.String())
	t.Logf("loadgen summary:\n%s", stdout.String())

	var rep struct {
		OK            bool             `json:"ok"`
		Problems      []string         `json:"problems"`
		EndedBy       string           `json:"ended_by"`
		Sent          int64            `json:"sent"`
		Answered      int64            `json:"answered"`
		Errors        int64            `json:"errors"`
		ErrorsByCode  map[string]int64 `json:"errors_by_code"`
		Mismatches    int64            `json:"mismatches"`
		WrongAllows   int64            `json:"wrong_allows"`
		Decisions     map[string]int64 `json:"decisions"`
		Replicas      map[string]int64 `json:"replicas"`
		ReadyReplicas []string         `json:"ready_replicas"`
		RetriedCalls  int64            `json:"retried_calls"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("loadgen summary is not JSON (exit: %v): %v", runErr, err)
	}
	if runErr != nil {
		t.Errorf("loadgen exited with %v: %q", runErr, rep.Problems)
	}
	// Every decision answered: nothing lost, nothing counted from an error.
	if rep.Errors != 0 || rep.Sent != rep.Answered || rep.Answered < last {
		t.Errorf("lost decisions: sent %d, answered %d, errors %d %v (progress had already shown %d answered)",
			rep.Sent, rep.Answered, rep.Errors, rep.ErrorsByCode, last)
	}
	if rep.WrongAllows != 0 || rep.Mismatches != 0 {
		t.Errorf("%d wrong ALLOWs, %d verdicts differ from the corpus", rep.WrongAllows, rep.Mismatches)
	}
	if !rep.OK || rep.EndedBy != "interrupted" {
		t.Errorf("ok %t, ended by %q, problems %q", rep.OK, rep.EndedBy, rep.Problems)
	}
	var decided int64
	for _, n := range rep.Decisions {
		decided += n
	}
	if decided != rep.Answered || rep.Decisions["allow"] == 0 || rep.Decisions["block"] == 0 || rep.Decisions["escalate"] == 0 {
		t.Errorf("decisions %v do not cover the corpus mix or do not sum to %d answered", rep.Decisions, rep.Answered)
	}
	// Round robin: all three took load, the stopped one until it stopped.
	if len(rep.ReadyReplicas) != 3 || len(rep.Replicas) != 3 || rep.Replicas[victimAddr] == 0 {
		t.Errorf("ready %v, answered by %v: want three replicas, including %s (%s)", rep.ReadyReplicas, rep.Replicas, victim, victimAddr)
	}
	if code := exitCode(t, victimID); code != "0" {
		t.Errorf("%s exited with %s after SIGTERM, want 0 (a drained shutdown)", victim, code)
	}
	t.Logf("answered %d decisions (%d after %s stopped, %d calls retried), by replica %v; %s was %s",
		rep.Answered, rep.Answered-base, victim, rep.RetriedCalls, rep.Replicas, victim, victimAddr)
}

// stack runs compose commands for one project.
type stack struct {
	t       *testing.T
	root    string
	compose []string // "docker compose" or "docker-compose"
	project string
	env     []string
}

func (s *stack) cmd(args ...string) *exec.Cmd {
	full := append(append(append([]string{}, s.compose[1:]...),
		"-f", filepath.Join(s.root, "docker-compose.yaml"), "-p", s.project), args...)
	c := exec.Command(s.compose[0], full...)
	c.Dir, c.Env = s.root, s.env
	return c
}

// run runs a compose command to completion within bound (a hang guard).
func (s *stack) run(bound time.Duration, args ...string) ([]byte, error) {
	c := s.cmd(args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	if err := c.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		return out.Bytes(), err
	case <-time.After(bound):
		c.Process.Kill()
		<-done
		return out.Bytes(), fmt.Errorf("%s %s: no result within %s", strings.Join(s.compose, " "), strings.Join(args, " "), bound)
	}
}

// container returns the id of a service's one container.
func (s *stack) container(service string) string {
	s.t.Helper()
	out, err := s.run(time.Minute, "ps", "-q", service)
	id := strings.TrimSpace(string(out))
	if err != nil || id == "" || strings.Contains(id, "\n") {
		s.t.Fatalf("docker compose ps -q %s: %v\n%s", service, err, out)
	}
	return id
}

// containerIP is the container's address on the stack's one network.
func containerIP(t *testing.T, id string) string {
	t.Helper()
	out, err := exec.Command("docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", id).CombinedOutput()
	ips := strings.Fields(string(out))
	if err != nil || len(ips) != 1 {
		t.Fatalf("docker inspect %s: %v\n%s", id, err, out)
	}
	return ips[0]
}

func exitCode(t *testing.T, id string) string {
	t.Helper()
	out, err := exec.Command("docker", "inspect", "-f", "{{.State.ExitCode}}", id).CombinedOutput()
	if err != nil {
		t.Fatalf("docker inspect %s: %v\n%s", id, err, out)
	}
	return strings.TrimSpace(string(out))
}

// findCompose returns the compose command when a Docker engine answers,
// or why there is none.
func findCompose(t *testing.T) ([]string, string) {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		return nil, "no docker command on PATH (the compose stack test needs a Docker engine)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return nil, fmt.Sprintf("no Docker engine answers `docker info` (%v): %s", err, strings.TrimSpace(string(out)))
	}
	if exec.CommandContext(ctx, "docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}, ""
	}
	if _, err := exec.LookPath("docker-compose"); err == nil && exec.CommandContext(ctx, "docker-compose", "version").Run() == nil {
		return []string{"docker-compose"}, ""
	}
	return nil, "a Docker engine answers, but neither `docker compose` nor docker-compose is installed"
}

func randomID(t *testing.T) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// progress is one of loadgen's progress lines.
type progress struct{ answered, active int64 }

var (
	answeredRE = regexp.MustCompile(`\banswered=(\d+)`)
	activeRE   = regexp.MustCompile(`\bactive_replicas=(\d+)`)
)

func parseProgress(line string) (progress, bool) {
	if !strings.Contains(line, "loadgen: progress ") {
		return progress{}, false
	}
	a, b := answeredRE.FindStringSubmatch(line), activeRE.FindStringSubmatch(line)
	if a == nil || b == nil {
		return progress{}, false
	}
	var p progress
	var err1, err2 error
	p.answered, err1 = strconv.ParseInt(a[1], 10, 64)
	p.active, err2 = strconv.ParseInt(b[1], 10, 64)
	return p, errors.Join(err1, err2) == nil
}
