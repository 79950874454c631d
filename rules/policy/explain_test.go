package policy

import (
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	p := mustParse(t, orderPolicy)
	got := p.Explain(act(t, "read_file", `{"path":"/tmp/x"}`))
	want := []Explanation{
		{Section: "deny", RuleID: "d-etc", Why: `path: no path matches`},
		{Section: "verify", RuleID: "v-etc-or-tmp", Matched: true, Why: `path: "/tmp/x" matches`},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d explanations: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("[%d] got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// Explain agrees with Evaluate on the deciding rule, and ends with the
// default when no rule decides.
func TestExplainAgreesWithEvaluate(t *testing.T) {
	for _, name := range EmbeddedNames() {
		p, _ := Embedded(name)
		for _, c := range []struct{ typ, args string }{
			{"read_file", `{"path":"src/a"}`},
			{"read_file", `{"path":"/etc/passwd"}`},
			{"write_file", `{"path":"/etc/passwd"}`},
			{"bash", `{"command":"git push --force origin main"}`},
			{"bash", `{"command":"ls; rm -rf /"}`},
			{"http_request", `{"method":"POST","url":"https://x.example"}`},
			{"send_email", `{"to":"a@b","cc":"x"}`},
			{"mystery", `{}`},
		} {
			a := act(t, c.typ, c.args)
			d := p.Evaluate(a)
			ex := p.Explain(a)
			last := ex[len(ex)-1]
			if !last.Matched || last.RuleID != d.RuleID {
				t.Errorf("%s %s %s: Evaluate %s, Explain ends with %+v", name, c.typ, c.args, d.RuleID, last)
			}
			for _, e := range ex[:len(ex)-1] {
				if e.Matched || e.Why == "" {
					t.Errorf("%s: only the last entry may match, and each needs a reason: %+v", name, e)
				}
			}
		}
	}
}

func TestExplainReasons(t *testing.T) {
	allowRule := oneRule(t, "allow", "path: [src/**]")
	ex := allowRule.Explain(act(t, "copy_file", `{"source":"src/a","destination":"/etc/b"}`))
	if !strings.Contains(ex[0].Why, `"/etc/b" does not match (allow rules need every path to match)`) {
		t.Errorf("every-quantifier failure must name the path: %q", ex[0].Why)
	}
	ex = allowRule.Explain(act(t, "unknown_tool", `{"path":"src/a"}`))
	if !strings.Contains(ex[0].Why, "custom:unknown_tool") {
		t.Errorf("unknown types: %q", ex[0].Why)
	}
	cel := oneRule(t, "deny", `when: 'args.nope == 1'`)
	ex = cel.Explain(act(t, "send_email", `{}`))
	if !ex[0].Matched || !strings.Contains(ex[0].Why, "failing closed") {
		t.Errorf("CEL error: %+v", ex[0])
	}
	typed := oneRule(t, "deny", "action: [read_file]\npath: [/x]")
	ex = typed.Explain(act(t, "write_file", `{"path":"/x"}`))
	if ex[0].Why != "action: write_file is not in [read_file]" {
		t.Errorf("action: %q", ex[0].Why)
	}
}
