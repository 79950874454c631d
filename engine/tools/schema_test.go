package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, nil)
	for _, c := range []struct {
		tool, args, want string // want "" means valid
	}{
		{"read_file", `{"path":"a.go"}`, ""},
		{"read_file", `{"path":"a.go","offset":2,"limit":10.0}`, ""},
		{"read_file", `{"path":"a.go","offset":null}`, ""},
		{"git_status", ``, ""},
		{"git_status", ` {} `, ""},
		{"read_file", `{}`, `missing required argument "path"`},
		{"read_file", `{"path":null}`, `"path" is required and cannot be null`},
		{"read_file", `{"path":"a","mode":"x"}`, `unknown argument "mode" (allowed: path, offset, limit)`},
		{"read_file", `{"path":1}`, `argument "path": expected a string, got a number`},
		{"read_file", `{"path":"a","offset":"3"}`, `argument "offset": expected an integer, got a string`},
		{"read_file", `{"path":"a","offset":1.5}`, `expected an integer, got 1.5`},
		{"read_file", `{"path":"a","offset":0}`, `"offset" must be at least 1, got 0`},
		{"read_file", `{"path":"a","offset":1e400}`, `expected an integer`},
		{"read_file", `{"path":"a","path":"b"}`, `duplicate`},
		{"read_file", `{"path":"a"} {}`, `unexpected data after the object`},
		{"read_file", `["a"]`, `must be a JSON object, got an array`},
		{"read_file", `{"path":"a\u0000b"}`, `must not contain NUL`},
		{"read_file", "{\"path\":\"\xff\"}", `not valid JSON`},
		{"read_file", `{"path":""}`, `"path" must not be empty`},
		{"read_file", `{"path":"a"`, `not valid JSON`},
		{"edit_file", `{"path":"a","old_string":"x","new_string":"y","replace_all":"yes"}`, `"replace_all": expected a boolean`},
		{"git_add", `{"paths":"a"}`, `"paths": expected an array of strings, got a string`},
		{"git_add", `{"paths":["a",2]}`, `"paths[1]": expected a string, got a number`},
		{"git_add", `{"paths":["a",null]}`, `"paths[1]": expected a string, got null`},
		{"http_request", `{"method":"get","url":"https://x","headers":{"A":1}}`, `value of "A" must be a string`},
		{"http_request", `{"method":"get","url":"https://x","headers":{"A":"1","A":"2"}}`, `duplicate`},
		{"http_request", `{"method":"FETCH","url":"https://x"}`, `"FETCH" is not one of GET, HEAD, POST`},
		{"load_tools", `{"groups":["files","shell"]}`, ""},
		{"load_tools", `{"groups":["files","root"]}`, `"groups[1]": "root" is not one of files, shell, git, http`},
		{"nope", `{}`, `unknown tool "nope"`},
	} {
		err := r.Validate(c.tool, []byte(c.args))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: unexpected error %v", c.tool, c.args, err)
		case c.want != "" && err == nil:
			t.Errorf("%s %s: accepted, want error with %q", c.tool, c.args, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s %s: error %q does not contain %q", c.tool, c.args, err, c.want)
		}
		// Execute refuses the same arguments before running anything.
		if c.want != "" {
			wantErr(t, call(t, r, c.tool, c.args), c.want)
		}
	}
}

func TestAction(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, nil)
	typ, payload, err := r.Action("http_request", []byte(`{"url":"https://a.example/<x>","method":"post","body":null,"headers":{"b":"2","a":"1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if typ != "http_request" || string(payload) != `{"headers":{"a":"1","b":"2"},"method":"POST","url":"https://a.example/<x>"}` {
		t.Fatalf("action %s %s", typ, payload)
	}
	typ, payload, err = r.Action("git_status", nil)
	if err != nil || typ != "git_status" || string(payload) != `{}` {
		t.Fatalf("no-argument action: %s %s %v", typ, payload, err)
	}
	for name, args := range map[string]string{"nope": `{}`, "load_tools": `{"groups":["files"]}`, "read_file": `{"path":1}`} {
		if _, _, err := r.Action(name, []byte(args)); err == nil {
			t.Errorf("Action(%s) accepted", name)
		}
	}
	// Every tool but load_tools is a shield action named like the tool,
	// spawn_agent included (the engine runs it, the shield judges it).
	known := []string{"read_file", "write_file", "edit_file", "list_directory", "glob_files", "search_files", "execute_command", "git_status", "git_diff", "git_log", "git_add", "git_commit", "http_request", "spawn_agent"}
	defs, _ := r.Defs()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, known) {
		t.Fatalf("tools %v, want %v", names, known)
	}
}

func TestDefs(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, nil)
	if g := r.Groups(); !slices.Equal(g, []string{"files", "shell", "git", "http", "agents"}) {
		t.Fatalf("groups %v", g)
	}
	defs, err := r.Defs("git", "http")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if d.Group != "git" && d.Group != "http" {
			t.Fatalf("%s in group %s", d.Name, d.Group)
		}
	}
	if len(defs) != 6 {
		t.Fatalf("%d git+http tools", len(defs))
	}
	if _, err := r.Defs("files", "admin"); err == nil || !strings.Contains(err.Error(), `unknown tool group "admin"`) {
		t.Fatalf("unknown group: %v", err)
	}
	all, _ := r.Defs()
	for _, d := range append(all, r.LoadToolsDef()) {
		var s struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(d.Schema, &s); err != nil {
			t.Fatalf("%s schema: %v", d.Name, err)
		}
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties || s.Required == nil || d.Description == "" {
			t.Fatalf("%s schema: %s", d.Name, d.Schema)
		}
		for _, req := range s.Required {
			if _, ok := s.Properties[req]; !ok {
				t.Fatalf("%s requires undeclared %q", d.Name, req)
			}
		}
		if got, ok := r.Lookup(d.Name); !ok || got.Name != d.Name {
			t.Fatalf("Lookup(%s)", d.Name)
		}
	}
	if _, ok := r.Lookup("rm_rf"); ok {
		t.Fatal("Lookup of an unknown tool succeeded")
	}
	groups, err := r.LoadToolsGroups([]byte(`{"groups":["shell","git"]}`))
	if err != nil || !slices.Equal(groups, []string{"shell", "git"}) {
		t.Fatalf("LoadToolsGroups: %v %v", groups, err)
	}
	if _, err := r.LoadToolsGroups([]byte(`{"groups":[]}`)); err == nil {
		t.Fatal("empty load_tools accepted")
	}
	wantErr(t, call(t, r, "load_tools", `{"groups":["files"]}`), "answered by the engine")
}

func TestIsWrite(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, nil)
	for name, want := range map[string]bool{
		"read_file": false, "list_directory": false, "glob_files": false, "search_files": false,
		"git_status": false, "git_diff": false, "git_log": false, "load_tools": false,
		"write_file": true, "edit_file": true, "execute_command": true, "git_add": true,
		"git_commit": true, "http_request": true, "unknown_tool": true,
	} {
		if got := r.IsWrite(name); got != want {
			t.Errorf("IsWrite(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestSpawnAgentDef(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, nil)
	defs, err := r.Defs("agents")
	if err != nil || len(defs) != 1 || defs[0].Name != "spawn_agent" {
		t.Fatalf("agents group: %v %v", defs, err)
	}
	typ, payload, err := r.Action("spawn_agent", []byte(`{"task":"count lines","name":"counter","tools":["read_file"]}`))
	if err != nil || typ != "spawn_agent" || string(payload) != `{"name":"counter","task":"count lines","tools":["read_file"]}` {
		t.Fatalf("action %s %s %v", typ, payload, err)
	}
	// A sub-agent's tools come from the executable tools only: no recursion,
	// no load_tools.
	for _, bad := range []string{"spawn_agent", "load_tools", "rm_rf"} {
		if err := r.Validate("spawn_agent", []byte(`{"name":"a","task":"t","tools":["`+bad+`"]}`)); err == nil {
			t.Errorf("tools [%s] accepted", bad)
		}
	}
	if res := r.Execute(context.Background(), "spawn_agent", []byte(`{"name":"a","task":"t"}`)); !res.IsError || !strings.Contains(res.Output, "answered by the engine") {
		t.Fatalf("Execute(spawn_agent) = %+v", res)
	}
	if r.IsWrite("spawn_agent") {
		t.Error("spawn_agent counts as a write; each of the sub-agent's own calls is checked instead")
	}
}
