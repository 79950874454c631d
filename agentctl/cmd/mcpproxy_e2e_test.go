package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/agentctl/exitcode"
	"github.com/parapet-dev/parapet/agentctl/host"
	"github.com/parapet-dev/parapet/agentctl/procman"
	"github.com/parapet-dev/parapet/engine/tools"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/server"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// envMiniMCPServer makes this test binary a minimal MCP server (stdio)
// with one tool, echo: the server agentctl mcp-proxy runs in these tests.
const envMiniMCPServer = "AGENTCTL_TEST_MCP_SERVER"

func init() {
	if os.Getenv(envMiniMCPServer) == "1" {
		serveMiniMCP()
		os.Exit(0)
	}
}

func serveMiniMCP() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments map[string]string `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var result any
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "mini", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "echo", "description": "Echoes text.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "echo: " + m.Params.Arguments["text"]}}}
		default:
			result = map[string]any{}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
		os.Stdout.Write(append(b, '\n'))
	}
}

// mcpSession runs `agentctl mcp-proxy ARGS -- env …mini server` with the
// given client lines on stdin and returns the answers by id.
func mcpSession(t *testing.T, ws string, args []string, lines ...string) (map[string]map[string]any, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	full := append([]string{"mcp-proxy", "--workspace", ws}, args...)
	full = append(full, "--", "env", envMiniMCPServer+"=1", self)
	cmd := agentctlCmd(full...)
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcp-proxy: %v\n%s", err, errb.String())
	}
	answers := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line %q is not JSON-RPC (stdout must carry only MCP messages): %v", l, err)
		}
		id, _ := json.Marshal(m["id"])
		answers[string(id)] = m
	}
	return answers, errb.String()
}

const (
	mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	mcpList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	mcpCall = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
)

func TestMCPProxyCommand(t *testing.T) {
	ws := t.TempDir()
	// The default policy does not know mcp:mini/echo: escalated, and this
	// client cannot be asked, so denied.
	answers, stderr := mcpSession(t, ws, []string{"--name", "mini"}, mcpInit, mcpList, mcpCall)
	res := answers["3"]["result"].(map[string]any)
	if res["isError"] != true || !strings.Contains(res["content"].([]any)[0].(map[string]any)["text"].(string), "cannot ask") {
		t.Errorf("call under the default policy = %v\n%s", answers["3"], stderr)
	}
	if tools := answers["2"]["result"].(map[string]any)["tools"].([]any); len(tools) != 1 {
		t.Errorf("tools/list = %v", answers["2"])
	}
	// The tool is pinned in the workspace's state directory, outside it.
	db, err := host.DefaultDBPath(ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db), "mcp-pins", "mini.json")); err != nil {
		t.Errorf("no pin file: %v", err)
	}

	// A policy that allows the tool by name lets the call through.
	pol := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\nallow:\n  - id: mini-echo\n    match:\n      action: [\"custom:mcp:mini/echo\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	answers, stderr = mcpSession(t, ws, []string{"--name", "mini", "--policy", pol}, mcpInit, mcpCall)
	text := answers["3"]["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if text != "echo: hi" {
		t.Errorf("allowed call = %v\n%s", answers["3"], stderr)
	}
}

// With --shield, a running shieldd judges the calls; unreachable, every
// call is refused.
func TestMCPProxyRemoteShield(t *testing.T) {
	pol, err := policy.Parse("mcp.yaml", []byte("version: 1\nallow:\n  - id: mini-echo\n    match:\n      action: [\"custom:mcp:mini/echo\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	shieldAddr, stopShieldd := serveShieldd(t, p)

	ws := t.TempDir()
	answers, stderr := mcpSession(t, ws, []string{"--name", "mini", "--shield", shieldAddr}, mcpInit, mcpCall)
	if text := answers["3"]["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]; text != "echo: hi" {
		t.Errorf("call allowed by the remote shield = %v\n%s", answers["3"], stderr)
	}
	st, err := (server.NewService(&shield.Shield{Pipeline: p})).GetShieldStatus(context.Background(), &pb.ShieldStatusRequest{})
	if err != nil || st.GetEvaluationsToday() < 1 {
		t.Errorf("shieldd evaluations today = %d (%v)", st.GetEvaluationsToday(), err)
	}

	stopShieldd()
	answers, stderr = mcpSession(t, ws, []string{"--name", "mini", "--shield", shieldAddr}, mcpInit, mcpCall)
	res := answers["3"]["result"].(map[string]any)
	if res["isError"] != true || !strings.Contains(res["content"].([]any)[0].(map[string]any)["text"].(string), "could not judge") {
		t.Errorf("call with shieldd down = %v\n%s", answers["3"], stderr)
	}
}

// --audit-file: the in-process shield records each call in a hash-chained
// audit log, as shieldd would.
func TestMCPProxyAuditLog(t *testing.T) {
	ws := t.TempDir()
	auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
	mcpSession(t, ws, []string{"--name", "mini", "--audit-file", auditFile}, mcpInit, mcpCall)
	b, err := os.ReadFile(auditFile)
	if err != nil || !strings.Contains(string(b), "mcp:mini/echo") {
		t.Fatalf("audit log %q: %v", b, err)
	}
	if res, err := audit.Verify([]string{auditFile}, ""); err != nil || res.Entries < 1 {
		t.Errorf("audit chain: %+v %v", res, err)
	}
}

func TestMCPProxyUsage(t *testing.T) {
	for _, args := range [][]string{
		{"mcp-proxy"},
		{"mcp-proxy", "--listen", "127.0.0.1:0"},
		{"mcp-proxy", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp", "--", "x"},
		{"mcp-proxy", "--listen", "0.0.0.0:0", "--upstream", "http://127.0.0.1:1/mcp"},
		{"mcp-proxy", "--result-secrets", "ignore", "--", "true"},
		{"mcp-proxy", "--listen", "127.0.0.1:0", "--upstream", "ftp://x/mcp"},
		{"mcp-proxy", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:1/mcp", "--upstream-header", "no colon"},
	} {
		code, _, stderr := runAgentctl(t, args...)
		if code != exitcode.Usage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want a usage error (2)", args, code, stderr)
		}
	}
}

func TestMCPProxyServerCannotStart(t *testing.T) {
	code, _, stderr := runAgentctl(t, "mcp-proxy", "--workspace", t.TempDir(), "--", "/nonexistent/mcp-server")
	if code != exitcode.Failed || !strings.Contains(stderr, "start MCP server") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestDefaultServerName(t *testing.T) {
	for _, c := range []struct {
		argv     []string
		upstream string
		want     string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-github"}, "", "server-github"},
		{[]string{"npx", "-y", "@scope/pkg@1.2.3"}, "", "pkg"},
		{[]string{"uvx", "mcp-server-fetch"}, "", "mcp-server-fetch"},
		{[]string{"/usr/local/bin/my server"}, "", "my-server"},
		{[]string{"docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"}, "", "github-mcp-server"},
		{nil, "https://mcp.example.com/mcp", "mcp.example.com"},
	} {
		if got := defaultServerName(c.argv, c.upstream); got != c.want {
			t.Errorf("defaultServerName(%q, %q) = %q, want %q", c.argv, c.upstream, got, c.want)
		}
	}
}

// TestMCPProxyAsksTheEngine: with an engine running for the workspace, an
// escalated MCP call is put to the engine's approval broker — announced to
// its watchers like the agent's own escalations and answered with
// agentctl approve / deny — even for a client that cannot be asked.
func TestMCPProxyAsksTheEngine(t *testing.T) {
	ws := t.TempDir()
	startManager(t, ws)
	engineReady(t, ws, 0)
	st, ok := procman.Running(filepath.Join(ws, tools.StateDirName))
	if !ok {
		t.Fatal("no engine state")
	}
	client, closeConn, err := dialEngine(st.GRPCAddress, st.ClientToken)
	if err != nil {
		t.Fatal(err)
	}
	defer closeConn()
	for _, c := range []struct {
		verb, want string
		isError    bool
	}{
		{"approve", "echo: hi", false},
		{"deny", "not approved through the workspace's Parapet engine (denied by cli)", true},
	} {
		// A deadlock guard: without the broker no announcement ever comes.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		w, err := client.WatchSession(ctx, &pb.WatchSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Header(); err != nil {
			t.Fatal(err)
		}
		type session struct {
			answers map[string]map[string]any
			stderr  string
		}
		done := make(chan session, 1)
		go func() {
			a, e := mcpSession(t, ws, []string{"--name", "mini"}, mcpInit, mcpCall)
			done <- session{a, e}
		}()
		var id string
		for id == "" {
			ev, err := w.Recv()
			if err != nil {
				t.Fatalf("watching the engine: %v", err)
			}
			if n := ev.GetApprovalNeeded(); n != nil {
				if ev.GetSessionId() != "external:mcp:mini" || n.GetToolName() != "echo" || n.GetAction().GetPayloadJson() != `{"text":"hi"}` {
					t.Fatalf("announcement %v", ev)
				}
				id = n.GetApprovalId()
			}
		}
		if code, out, errOut := runAgentctl(t, c.verb, "--workspace", ws, id); code != 0 {
			t.Fatalf("agentctl %s: exit %d\n%s%s", c.verb, code, out, errOut)
		}
		s := <-done
		res, _ := s.answers["3"]["result"].(map[string]any)
		text, _ := res["content"].([]any)[0].(map[string]any)["text"].(string)
		if (res["isError"] == true) != c.isError || !strings.Contains(text, c.want) {
			t.Errorf("%s: call answered %v\n%s", c.verb, s.answers["3"], s.stderr)
		}
		cancel()
	}
}
