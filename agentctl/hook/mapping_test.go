package hook

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

func mapCall(t *testing.T, agent Agent, tool, input string) (string, map[string]any) {
	t.Helper()
	m, err := Map(&Call{Agent: agent, ToolName: tool, ToolInput: []byte(input), Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	if err := json.Unmarshal(m.Payload, &args); err != nil {
		t.Fatalf("%s", m.Payload)
	}
	return m.Action, args
}

func TestMap(t *testing.T) {
	cases := []struct {
		agent       Agent
		tool, input string
		action      string
		args        map[string]any
	}{
		{ClaudeCode, "Bash", `{"command":"ls"}`, "execute_command", map[string]any{"command": "ls"}},
		{ClaudeCode, "Read", `{"file_path":"/w/a"}`, "read_file", map[string]any{"file_path": "/w/a"}},
		{ClaudeCode, "mcp__github__create_issue", `{"title":"x"}`, "mcp:github/create_issue", map[string]any{"title": "x"}},
		// A server name may not be empty; a malformed name is a tool of its own name.
		{ClaudeCode, "mcp____x", `{}`, "mcp____x", map[string]any{}},
		{ClaudeCode, "TodoWrite", `{"todos":[]}`, "TodoWrite", map[string]any{"todos": []any{}}},
		{GeminiCLI, "run_shell_command", `{"command":"make","dir_path":"sub"}`, "execute_command", map[string]any{"command": "make", "cwd": "sub"}},
		{GeminiCLI, "read_file", `{"absolute_path":"/w/a"}`, "read_file", map[string]any{"path": "/w/a"}},
		{GeminiCLI, "list_directory", `{"dir_path":"/etc"}`, "list_directory", map[string]any{"path": "/etc"}},
		// A rename never hides an argument of the target's name.
		{GeminiCLI, "glob", `{"dir_path":"/etc","path":"/w"}`, "glob_files", map[string]any{"dir_path": "/etc", "path": "/w"}},
		{GeminiCLI, "web_fetch", `{"prompt":"Compare https://a.example/x, and HTTP://b.example/y)."}`, "web_fetch",
			map[string]any{"prompt": "Compare https://a.example/x, and HTTP://b.example/y).", "urls": []any{"https://a.example/x", "HTTP://b.example/y"}}},
		{GeminiCLI, "web_fetch", `{"prompt":"no links here"}`, "web_fetch", map[string]any{"prompt": "no links here"}},
		{GeminiCLI, "mcp__gh__list", `{}`, "mcp:gh/list", map[string]any{}},
	}
	for _, c := range cases {
		action, args := mapCall(t, c.agent, c.tool, c.input)
		if action != c.action || !reflect.DeepEqual(args, c.args) {
			t.Errorf("%s %s %s → %s %v, want %s %v", c.agent, c.tool, c.input, action, args, c.action, c.args)
		}
	}
}

// Gemini CLI names the MCP server and tool in mcp_context; that wins over
// the tool's display name.
func TestMapGeminiMCPContext(t *testing.T) {
	c, err := Parse(GeminiCLI, []byte(`{"hook_event_name":"BeforeTool","cwd":"/w","session_id":"s","tool_name":"create_issue",
		"tool_input":{"title":"x"},"mcp_context":{"server_name":"github","tool_name":"create_issue","command":"npx"}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Map(c)
	if err != nil || m.Action != "mcp:github/create_issue" {
		t.Fatalf("%v %v", m.Action, err)
	}
}

func TestRequestCarriesContext(t *testing.T) {
	c := &Call{Agent: ClaudeCode, SessionID: "sess", ToolUseID: "toolu_1", Cwd: "/w", ToolName: "Bash", ToolInput: []byte(`{"command":"ls"}`)}
	m, _ := Map(c)
	r := Request(c, m, Env{Home: "/home/dev", User: "dev", Tenant: "team"})
	if r.GetSessionId() != "sess" || r.GetRequestId() != "toolu_1" || r.GetCaller().GetWorkspaceRoot() != "/w" ||
		r.GetCaller().GetHomeDir() != "/home/dev" || r.GetCaller().GetAgentName() != "claude-code" || r.GetCaller().GetTenant() != "team" {
		t.Fatalf("%v", r)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
}

// An unset or unknown decision is a deny: it must never read as allow.
func TestFromVerdictUnknownDecisionDenies(t *testing.T) {
	for _, d := range []pb.VerdictDecision{pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED, pb.VerdictDecision(42)} {
		a := FromVerdict(&pb.Verdict{Decision: d}, Ask)
		if a.Decision != Deny || !strings.Contains(a.Reason, "unknown decision") {
			t.Errorf("%v → %+v", d, a)
		}
	}
	if a := FromVerdict(nil, Ask); a.Decision != Deny {
		t.Errorf("nil verdict → %+v", a)
	}
}

func TestRender(t *testing.T) {
	a := Answer{Decision: Deny, Reason: `blocked <"x"> & more`}
	var c struct {
		H map[string]string `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(Render(ClaudeCode, a), &c); err != nil {
		t.Fatal(err)
	}
	if c.H["hookEventName"] != "PreToolUse" || c.H["permissionDecision"] != "deny" || c.H["permissionDecisionReason"] != a.Reason {
		t.Fatalf("%v", c.H)
	}
	var g map[string]string
	if err := json.Unmarshal(Render(GeminiCLI, Answer{Decision: Ask, Reason: "why"}), &g); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, map[string]string{"decision": "ask", "reason": "why", "systemMessage": "why"}) {
		t.Fatalf("%v", g)
	}
}

// The project the agent names is the workspace, wherever its shell has
// gone; a command run elsewhere says where.
func TestRequestProjectDir(t *testing.T) {
	c := &Call{Agent: ClaudeCode, Cwd: "/etc", ToolName: "Bash", ToolInput: []byte(`{"command":"rm -rf *"}`)}
	m, _ := Map(c)
	r := Request(c, m, Env{ProjectDir: "/home/dev/project"})
	if r.GetCaller().GetWorkspaceRoot() != "/home/dev/project" {
		t.Fatalf("workspace %q", r.GetCaller().GetWorkspaceRoot())
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(r.GetPayloadJson()), &args)
	if args["cwd"] != "/etc" || args["command"] != "rm -rf *" {
		t.Fatalf("payload %s", r.GetPayloadJson())
	}
	// Without a project dir, cwd is the workspace and the payload is as sent.
	r = Request(c, m, Env{ProjectDir: "relative/ignored"})
	if r.GetCaller().GetWorkspaceRoot() != "/etc" || r.GetPayloadJson() != `{"command":"rm -rf *"}` {
		t.Fatalf("%v", r)
	}
}
