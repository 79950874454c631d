package hook_test

// End-to-end: the real agentctl binary is run as each agent runs its hook
// (hook JSON on stdin, the answer read from stdout and the exit code),
// against the in-process shield and a real shieldd on loopback.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
	"github.com/parapet-dev/parapet/shieldd/shield"
	"github.com/parapet-dev/parapet/shieldd/tenant"
)

var agentctl string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "parapet-hook-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentctl = filepath.Join(dir, "agentctl")
	if out, err := exec.Command("go", "build", "-o", agentctl, "github.com/parapet-dev/parapet/agentctl").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build agentctl: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// home is the HOME the hook runs with: the fixtures' paths live under it.
const home = "/home/dev"

type result struct {
	code     int
	stdout   []byte
	stderr   string
	decision string
	reason   string
}

// runHook runs `agentctl hook ARGS…` with stdin, as the agent would.
func runHook(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	return runHookEnv(t, nil, stdin, args...)
}

func runHookEnv(t *testing.T, env []string, stdin io.Reader, args ...string) result {
	t.Helper()
	cmd := exec.Command(agentctl, append([]string{"hook"}, args...)...)
	cmd.Env = append([]string{"HOME=" + home, "USER=dev", "PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.Bytes(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("agentctl hook: %v", err)
	}
	if r.code == 0 {
		r.decision, r.reason = decode(t, args[0], r.stdout)
	}
	return r
}

// decode reads the answer as the agent does, checking its shape.
func decode(t *testing.T, agent string, out []byte) (decision, reason string) {
	t.Helper()
	if bytes.Count(bytes.TrimSpace(out), []byte("\n")) != 0 {
		t.Fatalf("stdout must be exactly one JSON document: %q", out)
	}
	if agent == "claude-code" {
		var o struct {
			HookSpecificOutput struct {
				HookEventName            string `json:"hookEventName"`
				PermissionDecision       string `json:"permissionDecision"`
				PermissionDecisionReason string `json:"permissionDecisionReason"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &o); err != nil {
			t.Fatalf("stdout is not Claude Code hook JSON: %v: %q", err, out)
		}
		if o.HookSpecificOutput.HookEventName != "PreToolUse" {
			t.Fatalf("hookEventName = %q", o.HookSpecificOutput.HookEventName)
		}
		return o.HookSpecificOutput.PermissionDecision, o.HookSpecificOutput.PermissionDecisionReason
	}
	var o struct {
		Decision      string `json:"decision"`
		Reason        string `json:"reason"`
		SystemMessage string `json:"systemMessage"`
	}
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("stdout is not Gemini CLI hook JSON: %v: %q", err, out)
	}
	if o.Decision != "allow" && o.SystemMessage == "" {
		t.Fatalf("a %s answer must carry a systemMessage for the user: %q", o.Decision, out)
	}
	return o.Decision, o.Reason
}

// fixtures are the hook inputs in testdata, one per tool kind, and what
// the embedded default policy answers: decision and a rule id the reason
// must name.
var fixtures = []struct {
	agent, name, decision, rule string
}{
	{"claude-code", "bash-ls", "allow", "shell"},
	{"claude-code", "bash-download-pipe-shell", "deny", "rce.download-pipe-shell"},
	{"claude-code", "bash-force-push", "ask", "git-push-rewrite"},
	{"claude-code", "read", "allow", "file-reads"},
	{"claude-code", "read-ssh-key", "deny", "credential.private-key-read"},
	{"claude-code", "write", "allow", "file-changes"},
	{"claude-code", "write-bashrc", "deny", "persistence.shell-rc"},
	{"claude-code", "edit", "allow", "file-changes"},
	{"claude-code", "multiedit", "allow", "file-changes"},
	{"claude-code", "notebookedit", "allow", "file-changes"},
	{"claude-code", "glob", "allow", "file-reads"},
	{"claude-code", "grep", "allow", "file-reads"},
	{"claude-code", "webfetch", "allow", "web-fetch"},
	{"claude-code", "websearch", "allow", "agent-tools"},
	{"claude-code", "mcp", "ask", "policy.unknown-action"},
	{"claude-code", "unknown-tool", "ask", "policy.unknown-action"},
	{"gemini-cli", "run-shell-ls", "allow", "shell"},
	{"gemini-cli", "run-shell-download-pipe-shell", "deny", "rce.download-pipe-shell"},
	{"gemini-cli", "run-shell-force-push", "ask", "git-push-rewrite"},
	{"gemini-cli", "read-file", "allow", "file-reads"},
	{"gemini-cli", "read-file-ssh-key", "deny", "credential.private-key-read"},
	{"gemini-cli", "write-file", "allow", "file-changes"},
	{"gemini-cli", "replace", "allow", "file-changes"},
	{"gemini-cli", "list-directory", "allow", "file-reads"},
	// dir_path is a directory the shield must see: outside the workspace.
	{"gemini-cli", "list-directory-outside", "ask", "file-read-outside-workspace"},
	{"gemini-cli", "glob", "allow", "file-reads"},
	{"gemini-cli", "search-file-content", "allow", "file-reads"},
	{"gemini-cli", "web-fetch", "allow", "web-fetch"},
	// web_fetch has no url argument: the URL is found in the prompt.
	{"gemini-cli", "web-fetch-metadata", "deny", "credential.cloud-metadata"},
	{"gemini-cli", "google-web-search", "allow", "agent-tools"},
	{"gemini-cli", "save-memory", "allow", "agent-tools"},
	{"gemini-cli", "mcp", "ask", "policy.unknown-action"},
	{"gemini-cli", "unknown-tool", "ask", "policy.unknown-action"},
}

func fixture(t *testing.T, agent, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", agent, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkFixtures(t *testing.T, extra ...string) {
	for _, f := range fixtures {
		t.Run(f.agent+"/"+f.name, func(t *testing.T) {
			t.Parallel()
			r := runHook(t, bytes.NewReader(fixture(t, f.agent, f.name)), append([]string{f.agent}, extra...)...)
			if r.code != 0 {
				t.Fatalf("exit %d, stderr %s", r.code, r.stderr)
			}
			if r.decision != f.decision || !strings.Contains(r.reason, f.rule) {
				t.Fatalf("got %s %q, want %s naming %s", r.decision, r.reason, f.decision, f.rule)
			}
			if f.decision != "allow" && !strings.Contains(r.stderr, r.reason) {
				t.Errorf("stderr should say why: %q", r.stderr)
			}
		})
	}
}

// Every fixture has its expected answer, and every fixture file is used.
func TestFixturesEmbeddedShield(t *testing.T) {
	used := map[string]bool{}
	for _, f := range fixtures {
		used[filepath.Join(f.agent, f.name+".json")] = true
	}
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, f := range files {
		if rel, _ := filepath.Rel("testdata", f); !used[rel] {
			t.Errorf("fixture %s has no expected answer", rel)
		}
	}
	checkFixtures(t)
}

// shieldd is a real shieldd (its gRPC service, audit log and per-tenant
// metrics) on 127.0.0.1:0.
type shieldd struct {
	addr      string
	auditPath string
	registry  *prometheus.Registry
}

func startShieldd(t *testing.T) *shieldd {
	t.Helper()
	pol, err := policy.Embedded("default")
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(audit.Config{Path: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	tm, err := tenant.NewMetrics(reg, tenant.NewLabels(50, nil))
	if err != nil {
		t.Fatal(err)
	}
	d, err := server.Listen(server.NewService(&shield.Shield{Pipeline: p, Audit: log, TenantMetrics: tm, Version: "test"}),
		server.DaemonConfig{GRPCAddr: "127.0.0.1:0", DrainTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shieldd: %v", err)
		}
		log.Close()
	})
	return &shieldd{addr: d.GRPCAddr(), auditPath: auditPath, registry: reg}
}

func readAudit(t *testing.T, path string) []*audit.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*audit.Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		e, err := audit.ParseLine(sc.Bytes())
		if err != nil {
			t.Fatalf("audit line: %v", err)
		}
		out = append(out, e)
	}
	if _, err := audit.Verify([]string{path}, ""); err != nil {
		t.Fatalf("audit chain: %v", err)
	}
	return out
}

// The same answers from a shared shieldd; each call is in its audit log
// with the agent's session id and tool call id, and counted for the tenant.
func TestFixturesRemoteShieldd(t *testing.T) {
	s := startShieldd(t)
	t.Run("fixtures", func(t *testing.T) { checkFixtures(t, "--shield", s.addr, "--tenant", "team-a") })

	entries := readAudit(t, s.auditPath)
	if len(entries) != len(fixtures) {
		t.Fatalf("audit log has %d entries, want %d", len(entries), len(fixtures))
	}
	sessions := map[string]int{}
	for _, e := range entries {
		sessions[e.Session]++
		if e.Tenant != "team-a" || e.Caller.Agent == "" {
			t.Errorf("entry without tenant or agent: %+v", e)
		}
		if e.Caller.Agent == "claude-code" && !strings.HasPrefix(e.RequestID, "toolu_") {
			t.Errorf("Claude Code entry without its tool_use_id: %+v", e)
		}
	}
	if sessions["3f1c9a52-7d4e-4b8a-9c1e-0a2b3c4d5e6f"] == 0 || sessions["9b2e4f61-1c3d-4e5f-8a7b-6c5d4e3f2a1b"] == 0 {
		t.Errorf("the agents' session ids are not in the audit log: %v", sessions)
	}
	var counted float64
	mfs, err := s.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "parapet_shield_tenant_decisions_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tenant" && l.GetValue() == "team-a" {
					counted += m.GetCounter().GetValue()
				}
			}
		}
	}
	if int(counted) != len(fixtures) {
		t.Errorf("shieldd counted %v decisions for team-a, want %d", counted, len(fixtures))
	}
}

// The in-process shield's audit log: parallel hook processes (an agent
// running tools in parallel) append one valid chain.
func TestEmbeddedAuditLogParallel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit", "hook.jsonl")
	const n = 8
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := runHook(t, bytes.NewReader(fixture(t, "claude-code", "bash-ls")), "claude-code", "--audit-file", path)
			if r.code != 0 || r.decision != "allow" {
				t.Errorf("exit %d, %s %s %s", r.code, r.decision, r.reason, r.stderr)
			}
		}()
	}
	wg.Wait()
	entries := readAudit(t, path)
	if len(entries) != n {
		t.Fatalf("%d audit entries, want %d", len(entries), n)
	}
	for _, e := range entries {
		if e.Session != "3f1c9a52-7d4e-4b8a-9c1e-0a2b3c4d5e6f" || e.Decision != "allow" {
			t.Errorf("entry %+v", e)
		}
	}
}

// Every failure denies (or asks, when configured), with a reason; none
// allows.
func TestFailuresDeny(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := closed.Addr().String()
	closed.Close()
	silent := silentServer(t)

	valid := string(fixture(t, "claude-code", "bash-ls"))
	cases := []struct {
		name   string
		agent  string
		stdin  string
		args   []string
		reason string
	}{
		{"not JSON", "claude-code", "rm -rf /", nil, "not JSON"},
		{"empty input", "gemini-cli", "", nil, "not JSON"},
		{"not an object", "claude-code", `["Bash"]`, nil, "not a JSON object"},
		{"trailing data", "claude-code", valid + `{"tool_name":"Read"}`, nil, "data after the JSON object"},
		{"tool_input missing", "claude-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash"}`, nil, "tool_input is missing"},
		{"tool_input not an object", "gemini-cli", `{"session_id":"s","cwd":"/w","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":"ls"}`, nil, "tool_input: not a JSON object"},
		{"tool_name missing", "claude-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_input":{}}`, nil, "tool_name is missing"},
		{"duplicate member", "claude-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Read","tool_name":"Bash","tool_input":{"command":"id"}}`, nil, `"tool_name" appears twice`},
		{"duplicate argument", "claude-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf ~"}}`, nil, `"command" appears twice`},
		{"relative cwd", "claude-code", `{"session_id":"s","cwd":"w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, nil, "not an absolute path"},
		{"no cwd", "gemini-cli", `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{"file_path":"a"}}`, nil, "cwd is missing"},
		{"wrong event", "claude-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`, nil, "PostToolUse"},
		{"other agent's input", "gemini-cli", valid, nil, `"PreToolUse"`},
		{"shield refuses the payload", "claude-code", `{"session_id":"s","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls","x":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}`, nil, "nest"},
		{"unreachable shieldd", "claude-code", valid, []string{"--shield", unreachable, "--timeout", "3s"}, "shieldd"},
		{"shieldd never answers", "gemini-cli", string(fixture(t, "gemini-cli", "run-shell-ls")), []string{"--shield", silent, "--timeout", "500ms"}, "500ms"},
		{"relative policy file", "claude-code", valid, []string{"--policy", "policy.yaml"}, "absolute file path"},
		{"missing policy file", "claude-code", valid, []string{"--policy", "/nonexistent/policy.yaml"}, "policy"},
		{"relative audit file", "claude-code", valid, []string{"--audit-file", "audit.jsonl"}, "absolute path"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runHook(t, strings.NewReader(c.stdin), append([]string{c.agent}, c.args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d (stderr %s)", r.code, r.stderr)
			}
			if r.decision != "deny" || !strings.Contains(r.reason, c.reason) || !strings.Contains(r.reason, "could not judge") {
				t.Fatalf("got %s %q, want deny naming %q", r.decision, r.reason, c.reason)
			}
			r = runHook(t, strings.NewReader(c.stdin), append([]string{c.agent, "--on-error", "ask"}, c.args...)...)
			if r.code != 0 || r.decision != "ask" || !strings.Contains(r.reason, c.reason) {
				t.Fatalf("--on-error ask: exit %d, %s %q", r.code, r.decision, r.reason)
			}
		})
	}
}

// An agent that never closes stdin still gets an answer, a deny, in time.
func TestStdinNeverClosedDenies(t *testing.T) {
	// An *os.File, so that exec hands it over as is (no copying goroutine
	// to wait for).
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	defer pr.Close()
	if _, err := pw.Write([]byte(`{"session_id":"s","cwd":"/w",`)); err != nil {
		t.Fatal(err)
	}
	r := runHook(t, pr, "claude-code", "--timeout", "300ms")
	if r.code != 0 || r.decision != "deny" || !strings.Contains(r.reason, "no verdict within 300ms") {
		t.Fatalf("exit %d, %s %q", r.code, r.decision, r.reason)
	}
}

// ESCALATE can be answered deny, for agents whose hook cannot ask.
func TestOnEscalateDeny(t *testing.T) {
	for _, agent := range []string{"claude-code", "gemini-cli"} {
		name := map[string]string{"claude-code": "bash-force-push", "gemini-cli": "run-shell-force-push"}[agent]
		r := runHook(t, bytes.NewReader(fixture(t, agent, name)), agent, "--on-escalate", "deny")
		if r.code != 0 || r.decision != "deny" || !strings.Contains(r.reason, "git-push-rewrite") {
			t.Fatalf("%s: exit %d, %s %q", agent, r.code, r.decision, r.reason)
		}
	}
}

// A usage error exits 2: both agents read that as "block".
func TestUsageErrorBlocks(t *testing.T) {
	r := runHook(t, bytes.NewReader(fixture(t, "claude-code", "bash-ls")), "claude-code", "--on-error", "allow")
	if r.code != 2 || !strings.Contains(r.stderr, "--on-error") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if len(r.stdout) != 0 {
		t.Fatalf("stdout must stay empty: %q", r.stdout)
	}
}

// silentServer accepts connections and never says a word: a shieldd that
// hangs.
func silentServer(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return lis.Addr().String()
}

// `agentctl hook install` writes a command that works: run from the
// settings file through the shell, as the agent runs it, it judges.
// `uninstall` removes it and leaves the user's own hook.
func TestInstallThenRunInstalledCommand(t *testing.T) {
	for _, agent := range []string{"claude-code", "gemini-cli"} {
		t.Run(agent, func(t *testing.T) {
			ws := t.TempDir()
			dir := map[string]string{"claude-code": ".claude", "gemini-cli": ".gemini"}[agent]
			event := map[string]string{"claude-code": "PreToolUse", "gemini-cli": "BeforeTool"}[agent]
			path := filepath.Join(ws, dir, "settings.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			own := `{"hooks":{"` + event + `":[{"matcher":"*","hooks":[{"type":"command","command":"true"}]}]}}`
			if err := os.WriteFile(path, []byte(own), 0o644); err != nil {
				t.Fatal(err)
			}
			policyFile := filepath.Join(ws, "policy.yaml")
			src, err := policy.EmbeddedSource("strict")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(policyFile, src, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(agentctl, "hook", "install", agent, "--workspace", ws, "--policy", "policy.yaml", "--timeout", "4s")
			cmd.Dir = ws
			cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
			if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "installed in "+path) {
				t.Fatalf("install: %v\n%s", err, out)
			}
			var settings struct {
				Hooks map[string][]struct {
					Matcher string `json:"matcher"`
					Hooks   []struct {
						Command string `json:"command"`
						Timeout int    `json:"timeout"`
					} `json:"hooks"`
				} `json:"hooks"`
			}
			b, _ := os.ReadFile(path)
			if err := json.Unmarshal(b, &settings); err != nil {
				t.Fatal(err)
			}
			groups := settings.Hooks[event]
			if len(groups) != 2 || groups[0].Hooks[0].Command != "true" {
				t.Fatalf("the user's hook must stay first and ours come after it:\n%s", b)
			}
			installed := groups[1].Hooks[0].Command
			if !strings.Contains(installed, "--policy "+policyFile) {
				t.Fatalf("the policy file must be installed by absolute path: %s", installed)
			}

			// Run it as the agent does: through sh, in the project, hook JSON on stdin.
			name := map[string]string{"claude-code": "bash-download-pipe-shell", "gemini-cli": "run-shell-download-pipe-shell"}[agent]
			run := exec.Command("/bin/sh", "-c", installed)
			run.Dir = ws
			run.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
			run.Stdin = bytes.NewReader(fixture(t, agent, name))
			out, err := run.Output()
			if err != nil {
				t.Fatalf("installed command: %v", err)
			}
			if d, reason := decode(t, agent, out); d != "deny" || !strings.Contains(reason, "rce.download-pipe-shell") {
				t.Fatalf("installed command answered %s %q", d, reason)
			}

			cmd = exec.Command(agentctl, "hook", "uninstall", agent, "--workspace", ws)
			cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("uninstall: %v\n%s", err, out)
			}
			b, _ = os.ReadFile(path)
			var got, want any
			_ = json.Unmarshal(b, &got)
			_ = json.Unmarshal([]byte(own), &want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("after uninstall:\n%s\nwant\n%s", b, own)
			}
		})
	}
}

// A policy names MCP and unknown tools as the docs say: custom:mcp:S/T
// and custom:name. Without such a rule they are escalated (above).
func TestPolicyRulesForMCPAndUnknownTools(t *testing.T) {
	policyFile := filepath.Join(t.TempDir(), "team.yaml")
	src := `version: 1
name: team
allow:
  - id: team-tools
    match:
      action: ["custom:mcp:github/create_issue", "custom:todowrite", "custom:write_todos"]
`
	if err := os.WriteFile(policyFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ agent, name string }{
		{"claude-code", "mcp"}, {"claude-code", "unknown-tool"}, {"gemini-cli", "mcp"}, {"gemini-cli", "unknown-tool"},
	} {
		r := runHook(t, bytes.NewReader(fixture(t, f.agent, f.name)), f.agent, "--policy", policyFile)
		if r.code != 0 || r.decision != "allow" || !strings.Contains(r.reason, "team-tools") {
			t.Errorf("%s/%s: exit %d, %s %q %s", f.agent, f.name, r.code, r.decision, r.reason, r.stderr)
		}
	}
}

// When the answer cannot be written, the hook exits 2 with the reason on
// stderr: both agents' "block".
func TestUnwritableStdoutBlocks(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	cmd := exec.Command(agentctl, "hook", "claude-code")
	cmd.Env = []string{"HOME=" + home}
	cmd.Stdin = bytes.NewReader(fixture(t, "claude-code", "bash-ls"))
	cmd.Stdout = full
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "blocking the action") {
		t.Fatalf("err %v, stderr %q", err, stderr.String())
	}
}

// The project the agent names is the workspace even when its shell has
// moved: a read beside the project is outside it.
func TestProjectDirIsTheWorkspace(t *testing.T) {
	in := `{"session_id":"s","cwd":"/home/dev","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/home/dev/other/notes.txt"}}`
	r := runHook(t, strings.NewReader(in), "claude-code")
	if r.decision != "allow" {
		t.Fatalf("with cwd as the workspace: %s %q", r.decision, r.reason)
	}
	r = runHookEnv(t, []string{"CLAUDE_PROJECT_DIR=/home/dev/project"}, strings.NewReader(in), "claude-code")
	if r.decision != "ask" || !strings.Contains(r.reason, "file-read-outside-workspace") {
		t.Fatalf("with CLAUDE_PROJECT_DIR: %s %q", r.decision, r.reason)
	}
}
