package cmd

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/llm"
	"github.com/parapet-dev/parapet/llm/llmtest"
	"github.com/parapet-dev/parapet/sandbox"
)

// scanScript connects to every TCP port listening on this host (read from
// /proc/net/tcp: the engine's, the LLM server's, the test's) and says
// which ones answered. curl's exit code 7 is "could not connect".
const scanScript = `ports=$(awk 'NR>1 && $4=="0A" {split($2,a,":"); print a[2]}' /proc/net/tcp | sort -u)
for h in $ports; do
  p=$((16#$h))
  curl -s -m 3 -o /dev/null http://127.0.0.1:$p/; rc=$?
  if [ $rc -eq 7 ]; then echo "refused $p"; else echo "connected $p rc=$rc"; fi
done
`

// TestRunConfinesAllowedCommands is issue 11's proof through agentctl run:
// every command is ALLOWed by the policy, so only the confined executor
// stands between it and the host.
func TestRunConfinesAllowedCommands(t *testing.T) {
	if _, err := sandbox.Supported(); err != nil {
		t.Skipf("no sandbox on this host: %v", err)
	}
	for _, prog := range []string{"curl", "awk", "setsid"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	base := t.TempDir()
	ws, home, outside := filepath.Join(base, "ws"), filepath.Join(base, "home"), filepath.Join(base, "outside")
	for _, d := range []string{ws, home, outside, filepath.Join(ws, ".parapet")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, "notes.txt"), "HOME-CANARY")
	write(filepath.Join(ws, ".parapet", "state.json"), `{"canary":"STATE-CANARY"}`)
	write(filepath.Join(ws, "in.txt"), "WORKSPACE-FILE")
	write(filepath.Join(ws, "scan.sh"), scanScript)
	write(filepath.Join(ws, "granted-scan.sh"), scanScript)
	db, err := host.DefaultDBPath(ws) // $XDG_STATE_HOME is the test's (TestMain)
	if err != nil {
		t.Fatal(err)
	}

	granted := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("granted")) }))
	defer granted.Close()
	gp := granted.Listener.Addr().(*net.TCPAddr).Port
	policyFile := filepath.Join(base, "policy.yaml")
	write(policyFile, `version: 1
heuristics: { trusted_hosts: [127.0.0.1, localhost] }
allow:
  - id: granted-scan
    confine: { network: [`+strconv.Itoa(gp)+`] }
    match:
      action: [execute_command]
      command: { program: [bash], args_all: [granted-scan.sh] }
  - id: everything
    match: { action: [execute_command, read_file] }
`)

	late := filepath.Join(ws, "late.txt")
	cmds := []struct{ id, cmd string }{
		{"read-ws", "cat in.txt"},
		{"read-home", "cat " + filepath.Join(home, "notes.txt")},
		{"read-state", "cat .parapet/state.json"},
		{"read-db", "cat " + db + " >/dev/null && echo DB-READ"},
		{"write-outside", "echo x > " + filepath.Join(outside, "planted.txt")},
		{"write-inside", "echo x > made.txt && echo y > $TMPDIR/t && cat $TMPDIR/t"},
		{"scan", "bash scan.sh"},
		{"scan-granted", "bash granted-scan.sh"},
		{"detach", "setsid sh -c 'sleep 3; touch " + late + "' >/dev/null 2>&1 & echo started"},
	}
	srv := llmtest.Start(t)
	replies := []llmtest.Reply{{ToolCalls: []llm.ToolCall{call("load_tools", `{"groups":["shell"]}`)}}}
	for _, c := range cmds {
		replies = append(replies, llmtest.Reply{ToolCalls: []llm.ToolCall{call("execute_command", `{"command":`+strconv.Quote(c.cmd)+`}`)}})
	}
	replies = append(replies, llmtest.Reply{Text: "done"})
	srv.Enqueue(replies...)

	cmd := agentctlCmd("run", "--workspace", ws, "--policy", policyFile, "--provider", "openai",
		"--base-url", srv.OpenAIBaseURL(), "--model", "m", "--output", "json", "--on-escalate", "deny", "try things")
	cmd.Env = append(cmd.Env, "HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	lines := jsonLines(t, string(out))

	// The executor's canary probes, reported next to the agent's.
	sb := ofType(lines, "sandbox")
	if len(sb) != 1 {
		t.Fatalf("sandbox lines %v", sb)
	}
	x, _ := sb[0]["executor"].(map[string]any)
	if x["status"] != "sandboxed" {
		t.Fatalf("executor %v", x)
	}
	probes, _ := x["report"].(map[string]any)["probes"].([]any)
	seen := map[string]bool{}
	for _, p := range probes {
		p := p.(map[string]any)
		seen[p["name"].(string)] = true
		if p["skipped"] == true {
			continue
		}
		if p["blocked"] != true || p["control_ok"] != true {
			t.Errorf("executor probe not proven: %v", p)
		}
	}
	for _, want := range []string{"read-outside", "read-state-dir", "write-outside", "proc-engine", "tcp-connect", "udp-send", "ptrace", "mount"} {
		if !seen[want] {
			t.Errorf("no executor probe %s in %v", want, seen)
		}
	}

	verdicts, results := ofType(lines, "verdict"), ofType(lines, "tool_result")
	if len(verdicts) != len(cmds) || len(results) != len(cmds) {
		t.Fatalf("%d verdicts and %d results for %d commands", len(verdicts), len(results), len(cmds))
	}
	res := map[string]map[string]any{}
	for i, c := range cmds {
		if verdicts[i]["decision"] != "ALLOW" {
			t.Fatalf("%s was not allowed: %v", c.id, verdicts[i])
		}
		res[c.id] = results[i]
		t.Logf("%s: error=%v %q", c.id, results[i]["is_error"], results[i]["output"])
	}
	output := func(id string) string { return res[id]["output"].(string) }
	failed := func(id string) bool { return res[id]["is_error"] == true }

	if failed("read-ws") || !strings.Contains(output("read-ws"), "WORKSPACE-FILE") {
		t.Errorf("reading a workspace file failed: %v", res["read-ws"])
	}
	for _, id := range []string{"read-home", "read-state", "read-db", "write-outside"} {
		if !failed(id) || strings.Contains(output(id), "CANARY") || strings.Contains(output(id), "DB-READ") {
			t.Errorf("%s was not stopped: %v", id, res[id])
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil {
		t.Error("a file was created outside the workspace")
	}
	if failed("write-inside") {
		t.Errorf("writing inside failed: %v", res["write-inside"])
	}
	if _, err := os.Stat(filepath.Join(ws, "made.txt")); err != nil {
		t.Errorf("workspace write: %v", err)
	}

	// Without a grant no port answers: not the engine's, not the LLM
	// server's, not the test's. With a grant for one port, that one does
	// and the others still do not.
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	llmPort, _ := strconv.Atoi(u.Port())
	line := regexp.MustCompile(`(?m)^(refused|connected) (\d+)`)
	check := func(id string, allowed int) {
		found := line.FindAllStringSubmatch(output(id), -1)
		if len(found) < 3 {
			t.Fatalf("%s: too few listening ports found: %q", id, output(id))
		}
		sawLLM, sawGranted := false, false
		for _, m := range found {
			p, _ := strconv.Atoi(m[2])
			sawLLM = sawLLM || p == llmPort
			sawGranted = sawGranted || p == gp
			if want := "refused"; p == allowed {
				if m[1] != "connected" {
					t.Errorf("%s: the granted port %d did not answer", id, p)
				}
			} else if m[1] != want {
				t.Errorf("%s: port %d answered without a grant", id, p)
			}
		}
		if !sawLLM || !sawGranted {
			t.Errorf("%s: the scan missed the LLM (%v) or granted (%v) port: %q", id, sawLLM, sawGranted, output(id))
		}
	}
	check("scan", -1)
	check("scan-granted", gp)
	conf, _ := verdicts[7]["confinement"].(map[string]any)
	if ports, _ := conf["network_ports"].([]any); len(ports) != 1 || ports[0] != float64(gp) {
		t.Errorf("the granted verdict line shows %v", conf)
	}
	if conf, _ := verdicts[6]["confinement"].(map[string]any); len(conf["network_ports"].([]any)) != 0 {
		t.Errorf("the scan's verdict line shows %v", conf)
	}

	// Nothing the call started outlives it.
	if !strings.Contains(output("detach"), "started") {
		t.Fatalf("detach: %v", res["detach"])
	}
	time.Sleep(4 * time.Second)
	if _, err := os.Stat(late); err == nil {
		t.Error("a setsid child wrote after its call ended")
	}
}

// TestDoctor: both probe sets run in real child processes and report.
func TestDoctor(t *testing.T) {
	if _, err := sandbox.Supported(); err != nil {
		t.Skipf("no sandbox on this host: %v", err)
	}
	code, stdout, stderr := runAgentctl(t, "doctor", "--output", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var out map[string]sandbox.Report
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"agent", "executor"} {
		rep := out[part]
		if rep.Status != sandbox.StatusSandboxed || len(rep.Probes) < 15 {
			t.Errorf("%s: %+v", part, rep)
		}
	}
	code, stdout, _ = runAgentctl(t, "doctor")
	if code != 0 || !strings.Contains(stdout, "agent sandbox: sandboxed") || !strings.Contains(stdout, "executor: sandboxed") {
		t.Errorf("text: exit %d\n%s", code, stdout)
	}
}
