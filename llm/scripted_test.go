package llm_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/parapet-dev/parapet/llm"
)

func writeScript(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const goodScript = `# a demo session
- text: "I'll look at the repository first."
  tool_calls:
    - name: list_files
      arguments: {path: ., depth: 2, hidden: false}
    - name: read_file
      arguments:
        path: README.md
        lines: [1, 40]
        when: 2024-05-01
- tool_calls:
    - name: execute_command
      arguments: '{"command": "ls" '   # verbatim, broken on purpose
    - name: git_status
- text: |
    All done.
    Two lines.
`

func TestScriptedReplaysInOrder(t *testing.T) {
	p, err := llm.New(llm.Config{Provider: "scripted", ScriptPath: writeScript(t, goodScript)})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "scripted" || p.Model() != "scripted" {
		t.Errorf("name %q model %q", p.Name(), p.Model())
	}
	ctx := context.Background()
	var tokens []string
	r1, err := p.Complete(ctx, userReq("what is here?"), func(s string) { tokens = append(tokens, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) < 2 || strings.Join(tokens, "") != "I'll look at the repository first." || r1.Text != strings.Join(tokens, "") {
		t.Errorf("tokens %q, text %q", tokens, r1.Text)
	}
	want := []llm.ToolCall{
		{ID: "call_1", Name: "list_files", Arguments: `{"depth":2,"hidden":false,"path":"."}`},
		{ID: "call_2", Name: "read_file", Arguments: `{"lines":[1,40],"path":"README.md","when":"2024-05-01"}`},
	}
	if !reflect.DeepEqual(r1.ToolCalls, want) || r1.StopReason != llm.StopToolCalls {
		t.Errorf("reply 1 = %+v", r1)
	}
	if r1.Usage.InputTokens == 0 || r1.Usage.OutputTokens == 0 {
		t.Errorf("usage = %+v", r1.Usage)
	}

	r2, err := p.Complete(ctx, userReq("go on"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []llm.ToolCall{
		{ID: "call_3", Name: "execute_command", Arguments: `{"command": "ls" `},
		{ID: "call_4", Name: "git_status", Arguments: `{}`},
	}
	if r2.Text != "" || !reflect.DeepEqual(r2.ToolCalls, want) {
		t.Errorf("reply 2 = %+v", r2)
	}

	r3, err := p.Complete(ctx, userReq("and?"), nil)
	if err != nil || r3.Text != "All done.\nTwo lines.\n" || r3.StopReason != llm.StopEndTurn {
		t.Errorf("reply 3 = %+v, %v", r3, err)
	}

	_, err = p.Complete(ctx, userReq("more?"), nil)
	if !errors.Is(err, llm.ErrScriptExhausted) || !strings.Contains(err.Error(), "3 replies") {
		t.Errorf("err = %v, want ErrScriptExhausted naming the count", err)
	}
}

func TestScriptedIsDeterministic(t *testing.T) {
	path := writeScript(t, goodScript)
	run := func() []llm.Response {
		p, err := llm.LoadScript(path, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []llm.Response
		for p.Remaining() > 0 {
			r, err := p.Complete(context.Background(), userReq("same input"), nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	if a, b := run(), run(); !reflect.DeepEqual(a, b) {
		t.Errorf("two runs differ:\n%+v\n%+v", a, b)
	}
}

func TestScriptedConcurrentCallsTakeEachReplyOnce(t *testing.T) {
	var replies []llm.Response
	for i := range 20 {
		replies = append(replies, llm.Response{Text: strings.Repeat("r", i+1)})
	}
	p := llm.NewScripted("m", replies)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			r, err := p.Complete(context.Background(), userReq("x"), func(string) {})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if seen[r.Text] {
				t.Errorf("reply %q handed out twice", r.Text)
			}
			seen[r.Text] = true
		})
	}
	wg.Wait()
	if len(seen) != 20 || p.Remaining() != 0 {
		t.Errorf("%d distinct replies, %d remaining", len(seen), p.Remaining())
	}
}

func TestScriptedChecksRequestsAndContext(t *testing.T) {
	p := llm.NewScripted("", []llm.Response{{Text: "x"}})
	if _, err := p.Complete(context.Background(), llm.Request{}, nil); !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("empty request: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Complete(ctx, userReq("x"), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	if p.Remaining() != 1 {
		t.Error("a refused call used up a reply")
	}
}

func TestBadScripts(t *testing.T) {
	cases := []struct{ name, text, want string }{
		{"empty file", "", "script has no replies"},
		{"only comments", "# nothing\n", "script has no replies"},
		{"empty list", "[]\n", ":1: script has no replies"},
		{"not a list", "text: hi\n", ":1: a script is a list"},
		{"syntax", "- text: [unclosed\n", "script.yaml: "},
		{"two documents", "- text: a\n---\n- text: b\n", ":2: a script is one YAML document"},
		{"unknown key", "- text: a\n- txt: b\n", `:2: entry 2: unknown key "txt"`},
		{"empty entry", "- text: a\n- {}\n", ":2: entry 2: empty reply"},
		{"empty text only", "- text: \"\"\n", ":1: entry 1: empty reply"},
		{"entry not mapping", "- just text\n", ":1: entry 1: a reply is a mapping"},
		{"tool call without name", "- text: a\n- tool_calls:\n    - arguments: {x: 1}\n", ":3: entry 2: tool call 1 has no name"},
		{"blank name", "- tool_calls:\n    - name: \"  \"\n", ":2: entry 1: tool call 1 has no name"},
		{"tool call unknown key", "- tool_calls:\n    - name: f\n      args: {}\n", `:3: entry 1: tool call 1: unknown key "args"`},
		{"tool_calls not list", "- tool_calls: {name: f}\n", ":1: entry 1: tool_calls must be a list"},
		{"arguments list", "- tool_calls:\n    - name: f\n      arguments: [1]\n", ":3: entry 1: tool call 1: arguments must be a mapping"},
		{"duplicate key", "- text: a\n  text: b\n", `:2: entry 1: "text" given twice`},
		{"duplicate argument", "- tool_calls:\n    - name: f\n      arguments: {a: 1, a: 2}\n", `argument "a" given twice`},
		{"NaN argument", "- tool_calls:\n    - name: f\n      arguments: {x: .nan}\n", ":3: entry 1: .nan has no JSON form"},
		{"text not string", "- text: [a]\n", ":1: entry 1: text must be a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := llm.New(llm.Config{Provider: "scripted", ScriptPath: writeScript(t, c.text)})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "script.yaml") {
				t.Errorf("err %q does not name the file", err)
			}
		})
	}
}

func TestScriptAliases(t *testing.T) {
	replies, err := llm.ParseScript("s", []byte("- tool_calls:\n    - name: f\n      arguments: &a {x: [1, 2]}\n    - name: g\n      arguments: *a\n"))
	if err != nil {
		t.Fatal(err)
	}
	if replies[0].ToolCalls[1].Arguments != `{"x":[1,2]}` {
		t.Errorf("aliased arguments = %q", replies[0].ToolCalls[1].Arguments)
	}
	// Nested aliases that would expand exponentially are refused.
	bomb := "- tool_calls:\n    - name: f\n      arguments:\n        a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 9; i++ {
		bomb += "        a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat("*a"+string(rune('0'+i-1))+", ", 9) + "*a" + string(rune('0'+i-1)) + "]\n"
	}
	if _, err := llm.ParseScript("bomb", []byte(bomb)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("alias bomb: err = %v", err)
	}
}

func TestScriptMissingFile(t *testing.T) {
	_, err := llm.New(llm.Config{Provider: "scripted", ScriptPath: filepath.Join(t.TempDir(), "nope.yaml")})
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("err = %v", err)
	}
}
