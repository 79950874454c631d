//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/secrets"
	"github.com/parapet-dev/parapet/internal/secrets/secretstest"
)

// newTestExecutor re-executes the test binary, whose TestMain calls
// ExecMain for ExecHelperArg.
func newTestExecutor(t *testing.T) *Executor {
	t.Helper()
	if _, err := Supported(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	x, err := NewExecutor(self)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// runConfined runs a bash script under spec and returns its output and
// exit code.
func runConfined(t *testing.T, x *Executor, spec ExecSpec, script string) (string, int) {
	t.Helper()
	spec.Path, spec.Args = "/bin/bash", []string{"bash", "--noprofile", "--norc", "-c", script}
	if spec.Env == nil {
		spec.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	}
	cmd, outR, err := x.Start(spec)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(outR)
	outR.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

type execFixture struct {
	ws, state, tmp, outside string
	spec                    ExecSpec
}

func newExecFixture(t *testing.T) execFixture {
	dir := t.TempDir()
	f := execFixture{ws: filepath.Join(dir, "ws"), tmp: filepath.Join(dir, "calltmp"), outside: filepath.Join(dir, "home")}
	f.state = filepath.Join(f.ws, ".parapet")
	for _, d := range []string{f.ws, f.state, f.tmp, f.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(f.ws, "in.txt"), "inside")
	writeFile(t, filepath.Join(f.state, "state.json"), "secret-state")
	writeFile(t, filepath.Join(f.outside, "canary"), "secret-home")
	f.spec = ExecSpec{Dir: f.ws, ReadExec: DefaultSystemPaths(), Write: []string{f.ws, f.tmp}, Mask: []string{f.state}}
	return f
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestExecutorFilesystem(t *testing.T) {
	x := newTestExecutor(t)
	f := newExecFixture(t)
	// Control: the same reads work unconfined.
	if out, err := exec.Command("cat", filepath.Join(f.outside, "canary"), filepath.Join(f.state, "state.json")).CombinedOutput(); err != nil || string(out) != "secret-homesecret-state" {
		t.Fatalf("control: %v %q", err, out)
	}
	cases := []struct {
		name, script string
		wantOK       bool
	}{
		{"read workspace", "cat in.txt", true},
		{"read home canary", "cat " + filepath.Join(f.outside, "canary"), false},
		{"read state file", "cat .parapet/state.json", false},
		{"read state by absolute path", "cat " + filepath.Join(f.state, "state.json"), false},
		{"write workspace", "echo hi > new.txt && cat new.txt", true},
		{"write call temp", "echo hi > " + f.tmp + "/t && cat " + f.tmp + "/t", true},
		{"write outside", "echo hi > " + filepath.Join(f.outside, "planted"), false},
		{"write /tmp", "echo hi > /tmp/parapet-exec-test-" + strconv.Itoa(os.Getpid()), false},
		{"write state dir", "echo x > .parapet/forged.json", false},
		{"other processes in /proc", "cat /proc/" + strconv.Itoa(os.Getpid()) + "/cmdline", false},
		{"own /proc", "cat /proc/self/status >/dev/null", true},
		{"run a program", "ls /usr >/dev/null && /usr/bin/env true", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, code := runConfined(t, x, f.spec, c.script)
			if (code == 0) != c.wantOK {
				t.Fatalf("exit %d, want ok=%v; output: %s", code, c.wantOK, out)
			}
			if strings.Contains(out, "secret-") {
				t.Fatalf("a secret leaked: %s", out)
			}
		})
	}
	for _, p := range []string{filepath.Join(f.outside, "planted"), "/tmp/parapet-exec-test-" + strconv.Itoa(os.Getpid()), filepath.Join(f.state, "forged.json")} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s was created", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "new.txt")); string(b) != "hi\n" {
		t.Errorf("workspace write not visible outside: %q", b)
	}
}

func TestExecutorNetwork(t *testing.T) {
	x := newTestExecutor(t)
	f := newExecFixture(t)
	granted, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer granted.Close()
	other, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	gp, op := granted.Addr().(*net.TCPAddr).Port, other.Addr().(*net.TCPAddr).Port
	connect := func(port int) string { return "exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port) }
	// Control: bash's /dev/tcp connects unconfined.
	if out, err := exec.Command("bash", "-c", connect(op)).CombinedOutput(); err != nil {
		t.Fatalf("control: %v %s", err, out)
	}
	if out, code := runConfined(t, x, f.spec, connect(gp)); code == 0 {
		t.Errorf("connect without a grant worked: %s", out)
	}
	spec := f.spec
	spec.ConnectTCP, spec.Network = []uint16{uint16(gp)}, true
	if out, code := runConfined(t, x, spec, connect(gp)); code != 0 {
		t.Errorf("connect to the granted port failed: %s", out)
	}
	if out, code := runConfined(t, x, spec, connect(op)); code == 0 {
		t.Errorf("connect to a port not granted worked: %s", out)
	}
	if out, code := runConfined(t, x, f.spec, "exec 3<>/dev/udp/127.0.0.1/53"); code == 0 {
		t.Errorf("UDP without a grant worked: %s", out)
	}
}

func TestExecutorNothingOutlivesTheCall(t *testing.T) {
	x := newTestExecutor(t)
	f := newExecFixture(t)
	marker := filepath.Join(f.ws, "late")
	// Control: the same detached child writes the file when unconfined.
	ctl := filepath.Join(f.ws, "late-control")
	if err := exec.Command("bash", "-c", "setsid sh -c 'sleep 1; touch "+ctl+"' >/dev/null 2>&1 &").Run(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, code := runConfined(t, x, f.spec, "setsid sh -c 'sleep 1; touch "+marker+"' >/dev/null 2>&1 & nohup sh -c 'sleep 1; touch "+marker+"2' >/dev/null 2>&1 & disown; echo started")
	if code != 0 || !strings.Contains(out, "started") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if time.Since(start) > 900*time.Millisecond {
		t.Log("the call waited for its background children")
	}
	time.Sleep(2 * time.Second)
	if _, err := os.Stat(ctl); err != nil {
		t.Fatalf("control: the unconfined detached child did not write: %v", err)
	}
	for _, m := range []string{marker, marker + "2"} {
		if _, err := os.Stat(m); err == nil {
			t.Errorf("%s was written after the call ended", m)
		}
	}
}

func TestExecutorProbes(t *testing.T) {
	x := newTestExecutor(t)
	rep := x.Probe(t.TempDir())
	for _, p := range rep.Probes {
		t.Logf("%-16s blocked=%v control=%v %s", p.Name, p.Blocked, p.Control, p.Detail)
	}
	if rep.Status != StatusSandboxed {
		t.Fatalf("status %s: %s", rep.Status, rep.Error)
	}
	if len(rep.Probes) < 14 {
		t.Fatalf("only %d probes", len(rep.Probes))
	}
}

func TestExecutorRefusesBadSpecs(t *testing.T) {
	x := newTestExecutor(t)
	for name, spec := range map[string]ExecSpec{
		"relative program": {Path: "bash", Args: []string{"bash"}, Dir: "/"},
		"no argv":          {Path: "/bin/true", Dir: "/"},
		"relative dir":     {Path: "/bin/true", Args: []string{"true"}, Dir: "ws"},
		"port 0":           {Path: "/bin/true", Args: []string{"true"}, Dir: "/", ConnectTCP: []uint16{0}},
		"relative path":    {Path: "/bin/true", Args: []string{"true"}, Dir: "/", Write: []string{"ws"}},
	} {
		if _, _, err := x.Start(spec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// probeAsEngineEnv makes the test binary a stand-in for the engine: an
// ordinary user's process that has made itself non-dumpable (it holds
// tokens), proving its executor from there.
const probeAsEngineEnv = "PARAPET_EXEC_TEST_PROBE_AS_ENGINE"

func probeAsEngine(dir string) int {
	if err := secrets.NonDumpable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	x, err := NewExecutor(self)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer x.Close()
	res := asEngineResult{Report: x.Probe(dir)}
	// A program's exit status comes back through the helper's parent.
	cmd, out, err := x.Start(ExecSpec{Path: "/bin/sh", Args: []string{"sh", "-c", "echo ran; exit 7"}, Dir: dir,
		ReadExec: DefaultSystemPaths(), Write: []string{dir}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	b, _ := io.ReadAll(out)
	out.Close()
	_ = cmd.Wait()
	res.Output, res.Exit = string(b), cmd.ProcessState.ExitCode()
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		return 1
	}
	return 0
}

type asEngineResult struct {
	Report Report
	Output string
	Exit   int
}

// The engine is an ordinary user's non-dumpable process. Its executor
// must still confine: a non-dumpable parent cannot write the user
// namespace maps of a child it cloned, so the helper has to come from a
// process that is dumpable again.
func TestExecutorOfANonDumpableOrdinaryUser(t *testing.T) {
	if _, err := Supported(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	u := secretstest.New(t)
	cmd := exec.Command(u.Exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), probeAsEngineEnv+"="+u.Dir(t))
	u.Apply(cmd)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("engine stand-in: %v: %s", err, stderr.String())
	}
	var res asEngineResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	rep := res.Report
	for _, p := range rep.Probes {
		t.Logf("%-16s blocked=%v control=%v %s", p.Name, p.Blocked, p.Control, p.Detail)
	}
	if rep.Status != StatusSandboxed {
		t.Fatalf("a non-dumpable ordinary user's executor: status %s: %s", rep.Status, rep.Error)
	}
	if res.Output != "ran\n" || res.Exit != 7 {
		t.Fatalf("a program through the helper's parent: output %q, exit %d; want \"ran\", 7", res.Output, res.Exit)
	}
}
