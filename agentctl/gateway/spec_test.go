package gateway_test

import (
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/agentctl/gateway"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

func TestParsePreparation(t *testing.T) {
	p, err := gateway.ParsePreparation(`{"workspace":{"repo":"https://github.com/org/repo.git","branch":"feature-branch","workspacePath":"/x"},
		"environment":{"NODE_ENV":"development"},"bootstrapFiles":{".parallax/thread-memory.md":"# Context"}}`)
	if err != nil || p.Repo != "https://github.com/org/repo.git" || p.Branch != "feature-branch" ||
		p.Environment["NODE_ENV"] != "development" || p.BootstrapFiles[".parallax/thread-memory.md"] != "# Context" {
		t.Fatalf("%+v %v", p, err)
	}
	for in, want := range map[string]string{
		`{"workspace":{"repo":5}}`:                 "preparation_json: workspace.repo: want a string",
		`{"workspace":{"branch":"x"}}`:             "workspace.branch is given without workspace.repo",
		`{"workspace":{"repo":"r","branch":"-x"}}`: "workspace.branch",
		`{"environment":{"1X":"y"}}`:               `environment: "1X" is not a variable name`,
		`{"environment":{"A":{}}}`:                 "environment: want a string",
		`{"bootstrapFiles":{"../etc/passwd":"x"}}`: "bootstrapFiles: path \"../etc/passwd\"",
		`{"bootstrapFiles":{"/etc/passwd":"x"}}`:   "is absolute",
		`[1]`:                                      "preparation_json: want a JSON object",
		`{"workspace":`:                            "preparation_json: unexpected EOF",
		"{\"environment\":{\"A\":\"\xff\"}}":       "not valid UTF-8",
		`{} {}`:                                    "more than one JSON value",
	} {
		if _, err := gateway.ParsePreparation(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}

func TestParsePolicyAndRules(t *testing.T) {
	p, err := gateway.ParsePolicy(`{"approvalPreset":"autonomous","timeout":600000,"permissions":["file_write","shell_exec"],"maxTurns":50}`)
	if err != nil || p.ApprovalPreset != gateway.PresetAutonomous || p.Timeout.Seconds() != 600 || p.MaxTurns != 50 || !p.Grants("shell_exec") || p.Grants("git_push") {
		t.Fatalf("%+v %v", p, err)
	}
	rules, err := p.Rules("thread t1")
	if err != nil {
		t.Fatal(err)
	}
	judge := func(typ, payload string) pb.VerdictDecision {
		act, err := action.Canonicalize(action.Request{Type: typ, Payload: []byte(payload), Caller: action.Caller{WorkspaceRoot: "/ws", Home: "/home/u"}}, action.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return rules.Evaluate(act).Outcome
	}
	block, allow := pb.VerdictDecision_VERDICT_DECISION_BLOCK, pb.VerdictDecision_VERDICT_DECISION_ALLOW
	for _, c := range []struct {
		typ, payload string
		want         pb.VerdictDecision
	}{
		{"execute_command", `{"command":"make test"}`, allow},
		{"execute_command", `{"command":"make && git push origin main"}`, block},
		{"git_push", `{}`, block},
		{"write_file", `{"path":"a.txt","content":"x"}`, allow},
		{"http_request", `{"url":"https://example.com"}`, block},
		{"spawn_agent", `{"name":"x","task":"y"}`, block},
		{"read_file", `{"path":"a.txt"}`, allow},
	} {
		if got := judge(c.typ, c.payload); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.typ, c.payload, got, c.want)
		}
	}
	strict, err := gateway.ParsePolicy(`{"approvalPreset":"STRICT","permissions":["shell_exec"]}`)
	if err != nil {
		t.Fatal(err)
	}
	if rules, err = strict.Rules("strict"); err != nil {
		t.Fatal(err)
	}
	if got := judge("execute_command", `{"command":"ls"}`); got != pb.VerdictDecision_VERDICT_DECISION_ESCALATE {
		t.Errorf("strict: a granted command is %v", got)
	}
	if got := judge("write_file", `{"path":"a","content":""}`); got != block {
		t.Errorf("strict: a write not granted is %v", got)
	}
	for in, want := range map[string]string{
		`{"approvalPreset":"yolo"}`:             "policy_json: approvalPreset \"yolo\"",
		`{"timeout":-1}`:                        "policy_json: timeout -1",
		`{"timeout":1.5}`:                       "policy_json: timeout 1.5",
		`{"timeout":"10s"}`:                     `policy_json: timeout "10s": want`,
		`{"maxTurns":1e9}`:                      "policy_json: maxTurns",
		`{"permissions":["file_write","sudo"]}`: `policy_json: permissions[1] "sudo" is not a permission; known: file_write`,
		`{"permissions":"file_write"}`:          "policy_json: permissions: want an array",
		`null`:                                  "policy_json: want a JSON object",
	} {
		if _, err := gateway.ParsePolicy(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", in, err, want)
		}
	}
}

func FuzzParsePreparation(f *testing.F) {
	f.Add(`{"workspace":{"repo":"https://github.com/org/repo.git","branch":"feature-branch"},"environment":{"A":"b"},"bootstrapFiles":{"a/b.md":"x"}}`)
	f.Add(`{"workspace":{"repo":"/srv/repo.git"}}`)
	f.Add(`{"bootstrapFiles":{"../x":"y"}}`)
	f.Add(`{"environment":{"A":1}}`)
	f.Add(``)
	f.Add(`{`)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := gateway.ParsePreparation(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "preparation_json") {
				t.Fatalf("error does not name the field: %v", err)
			}
			return
		}
		for name := range p.BootstrapFiles {
			if strings.HasPrefix(name, "/") || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "/../") {
				t.Fatalf("accepted bootstrap path %q", name)
			}
		}
	})
}

func FuzzParsePolicy(f *testing.F) {
	f.Add(`{"approvalPreset":"autonomous","timeout":600000,"permissions":["file_write","shell_exec","git_push"],"maxTurns":50}`)
	f.Add(`{"approvalPreset":"strict","permissions":[]}`)
	f.Add(`{"timeout":1e400}`)
	f.Add(`{"permissions":["x"]}`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := gateway.ParsePolicy(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "policy_json") {
				t.Fatalf("error does not name the field: %v", err)
			}
			return
		}
		if p.Timeout < 0 || p.MaxTurns < 0 {
			t.Fatalf("accepted %+v", p)
		}
		if _, err := p.Rules("fuzz"); err != nil {
			t.Fatalf("the rules of an accepted policy do not load: %v", err)
		}
	})
}
