package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds hook input, as an agent (or whoever controls stdin)
// might send it, through the parser, the mapping and the answer: nothing
// panics, what parses is complete, and what is sent on is valid JSON.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(strings.HasPrefix(file, "testdata/gemini-cli"), b)
	}
	f.Add(false, []byte(`{"hook_event_name":"PreToolUse","cwd":"/w","tool_name":"mcp__a__b","tool_input":{}}`))
	f.Add(true, []byte(`{"hook_event_name":"BeforeTool","cwd":"/w","tool_name":"web_fetch","tool_input":{"prompt":"HTTPS://x.example/a). http://"}}`))
	f.Add(true, []byte(`{"hook_event_name":"BeforeTool","cwd":"/w","tool_name":"glob","tool_input":{"dir_path":"/","path":"/x"},"mcp_context":null}`))
	f.Fuzz(func(t *testing.T, gemini bool, data []byte) {
		agent := ClaudeCode
		if gemini {
			agent = GeminiCLI
		}
		c, err := Parse(agent, data)
		if err != nil {
			if _, ok := err.(*InputError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if c.ToolName == "" || !filepath.IsAbs(c.Cwd) || !json.Valid(c.ToolInput) {
			t.Fatalf("incomplete call accepted: %+v", c)
		}
		m, err := Map(c)
		if err != nil {
			return
		}
		if m.Action == "" || !json.Valid(m.Payload) {
			t.Fatalf("mapped to %q %q", m.Action, m.Payload)
		}
		if _, err := objectMembers(m.Payload); err != nil {
			t.Fatalf("payload is no longer a clean object: %v: %s", err, m.Payload)
		}
		req := Request(c, m, Env{Home: "/home/dev", User: "dev", ProjectDir: "/home/dev/project"})
		if req.GetCaller().GetWorkspaceRoot() != "/home/dev/project" || req.GetSessionId() != c.SessionID || !json.Valid([]byte(req.GetPayloadJson())) {
			t.Fatalf("request lost the call's context: %v", req)
		}
		for _, a := range []Answer{{Deny, c.ToolName}, {Ask, string(data)}} {
			if out := Render(agent, a); !json.Valid(out) {
				t.Fatalf("answer is not JSON: %s", out)
			}
		}
	})
}
