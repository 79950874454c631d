package tools

import (
	"context"
	"encoding/json"
	"errors"
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
		err := validate(r, c.tool, []byte(c.args))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: unexpected error %v", c.tool, c.args, err)
		case c.want != "" && err == nil:
			t.Errorf("%s %s: accepted, want error with %q", c.tool, c.args, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s %s: error %q does not contain %q", c.tool, c.args, err, c.want)
		}
		// Execute refuses the same arguments before running anything
		// (load_tools, which the engine answers, it refuses whatever they are).
		if c.want != "" && c.tool != LoadToolsName {
			wantErr(t, call(t, r, c.tool, c.args), c.want)
		}
	}
}

func TestPrepare(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, nil)
	c, err := r.Prepare("http_request", []byte(`{"url":"https://a.example/<x>","method":"post","body":null,"headers":{"b":"2","a":"1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "http_request" || string(c.Payload) != `{"headers":{"a":"1","b":"2"},"method":"POST","url":"https://a.example/<x>"}` {
		t.Fatalf("call %s %s", c.Name, c.Payload)
	}
	c, err = r.Prepare("git_status", nil)
	if err != nil || c.Name != "git_status" || string(c.Payload) != `{}` {
		t.Fatalf("no-argument call: %+v %v", c, err)
	}
	for name, args := range map[string]string{"nope": `{}`, "load_tools": `{"groups":["files"]}`, "read_file": `{"path":1}`} {
		if _, err := r.Prepare(name, []byte(args)); err == nil {
			t.Errorf("Prepare(%s) accepted", name)
		}
	}
	if _, err := r.Prepare("nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
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

func TestCallWrite(t *testing.T) {
	t.Parallel()
	r, _ := newTestRegistry(t, nil)
	for _, c := range []struct {
		name, args string
		write      bool
	}{
		{"read_file", `{"path":"a"}`, false}, {"list_directory", `{}`, false}, {"glob_files", `{"pattern":"*"}`, false},
		{"search_files", `{"pattern":"x"}`, false}, {"git_status", `{}`, false}, {"git_diff", `{}`, false},
		{"git_log", `{}`, false}, {"write_file", `{"path":"a","content":""}`, true},
		{"edit_file", `{"path":"a","old_string":"x","new_string":"y"}`, true}, {"execute_command", `{"command":"ls"}`, true},
		{"git_add", `{"paths":["a"]}`, true}, {"git_commit", `{"message":"m"}`, true},
		{"http_request", `{"method":"GET","url":"https://x.example/"}`, true},
	} {
		call, err := r.Prepare(c.name, []byte(c.args))
		if err != nil {
			t.Errorf("Prepare(%s, %s): %v", c.name, c.args, err)
			continue
		}
		if call.Write != c.write {
			t.Errorf("%s: Write = %v, want %v", c.name, call.Write, c.write)
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
	c, err := r.Prepare("spawn_agent", []byte(`{"task":"count lines","name":"counter","tools":["read_file"]}`))
	if err != nil || c.Name != "spawn_agent" || string(c.Payload) != `{"name":"counter","task":"count lines","tools":["read_file"]}` {
		t.Fatalf("call %+v %v", c, err)
	}
	// A sub-agent's tools come from the executable tools only: no recursion,
	// no load_tools.
	for _, bad := range []string{"spawn_agent", "load_tools", "rm_rf"} {
		if _, err := r.Prepare("spawn_agent", []byte(`{"name":"a","task":"t","tools":["`+bad+`"]}`)); err == nil {
			t.Errorf("tools [%s] accepted", bad)
		}
	}
	if res := r.Execute(context.Background(), "spawn_agent", []byte(`{"name":"a","task":"t"}`)); !res.IsError || !strings.Contains(res.Output, "answered by the engine") {
		t.Fatalf("Execute(spawn_agent) = %+v", res)
	}
	if c.Write {
		t.Error("spawn_agent counts as a write; each of the sub-agent's own calls is checked instead")
	}
}
