package policy

import (
	"strings"
	"testing"
)

func TestCELMatcher(t *testing.T) {
	cases := []struct {
		name, when, typ, args string
		want                  bool
	}{
		{"action type", `action.type == "send_email"`, "email", `{}`, true},
		{"raw type", `action.raw_type == "email"`, "email", `{}`, true},
		{"known", `action.known == true`, "email", `{}`, true},
		{"hash", `size(action.hash) == 64`, "email", `{}`, true},
		{"args number compare", `args.count > 10`, "send_email", `{"count":11}`, true},
		{"args number compare no", `args.count > 10`, "send_email", `{"count":10}`, false},
		{"args float", `args.ratio > 0.5`, "send_email", `{"ratio":0.75}`, true},
		{"args list size", `size(args.to) > 2`, "send_email", `{"to":["a","b","c"]}`, true},
		{"items on string", `items(args.to) == 3`, "send_email", `{"to":"a@x, b@x; c@x"}`, true},
		{"items on list", `items(args.to) == 2`, "send_email", `{"to":["a","b"]}`, true},
		{"caller", `caller.home == "/home/dev" && caller.workspace_root == "/home/dev/project"`, "read_file", `{}`, true},
		{"paths", `paths.exists(p, p.abs.startsWith("/etc/") && p.access == "read")`, "read_file", `{"path":"/etc/x"}`, true},
		{"paths in_workspace", `paths.all(p, p.in_workspace)`, "read_file", `{"path":"/etc/x"}`, false},
		{"urls", `urls.exists(u, u.host == "x.io" && u.method == "POST")`, "http_request", `{"url":"https://x.io/a","method":"post"}`, true},
		{"strings extension", `args.body.lowerAscii().contains("secret")`, "send_email", `{"body":"SECRET"}`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oneRule(t, "deny", "when: '"+strings.ReplaceAll(c.when, "'", "''")+"'")
			if got := matched(p, act(t, c.typ, c.args)); got != c.want {
				t.Fatalf("%s on %s = %v, want %v\n%v", c.when, c.args, got, c.want, p.Explain(act(t, c.typ, c.args)))
			}
		})
	}
}

func TestCELCommands(t *testing.T) {
	requireShellParser(t)
	p := oneRule(t, "deny", `when: 'commands.exists(c, c.program == "rm" && "-rf" in c.args)'`)
	if !matched(p, cmd(t, "ls && rm -rf /")) {
		t.Fatal("commands variable must list parsed simple commands")
	}
	if matched(p, cmd(t, "ls")) {
		t.Fatal("no rm, no match")
	}
}

// A runtime error is a match for deny/verify and no match for allow.
func TestCELRuntimeErrorFailsClosed(t *testing.T) {
	missingKey := `when: 'args.nope == "x"'`
	a := act(t, "send_email", `{"to":"a@b"}`)
	for _, section := range []string{"deny", "verify"} {
		if !matched(oneRule(t, section, missingKey), a) {
			t.Errorf("%s: a runtime error must count as a match", section)
		}
	}
	p := oneRule(t, "allow", missingKey)
	if d := p.Evaluate(a); d.Outcome == allow {
		t.Errorf("allow: a runtime error must not allow, got %+v", d)
	}
	// The cost limit is a runtime error too.
	expensive := `when: 'args.big.all(x, args.big.all(y, args.big.all(z, x + y + z >= 0)))'`
	big := `{"big":[` + strings.Repeat("1,", 199) + `1]}`
	if !matched(oneRule(t, "deny", expensive), act(t, "send_email", big)) {
		t.Error("deny: exceeding the cost limit must count as a match")
	}
	if matched(oneRule(t, "allow", expensive), act(t, "send_email", big)) {
		t.Error("allow: exceeding the cost limit must not allow")
	}
}

// Only expressions whose worst case depends on the input pay for cost
// tracking; the limit still stops those (see above).
func TestCELCostTrackedOnlyWhenUnbounded(t *testing.T) {
	for src, want := range map[string]bool{
		`'(has(args.to) ? items(args.to) : 0) + (has(args.cc) ? items(args.cc) : 0) > 10'`: false,
		`'!has(args.method) && !has(args.body)'`:                                           false,
		`'args.big.all(x, x >= 0)'`:                                                        true,
		`'string(args.ref).matches("^main$")'`:                                             true,
	} {
		p := oneRule(t, "deny", "when: "+src)
		m := p.deny[0].cond.when
		if m == nil || m.costTracked != want {
			t.Errorf("%s: cost tracked = %v, want %v", src, m != nil && m.costTracked, want)
		}
	}
}

// The activation is built lazily: rules that never reach `when` must not
// pay for it, and a rule reaching it gets consistent values.
func TestCELActivationLazy(t *testing.T) {
	a := act(t, "read_file", `{"path":"src/a"}`)
	act := &celActivation{act: a}
	if act.donePaths || act.doneArgs {
		t.Fatal("nothing may be built before use")
	}
	if _, ok := act.ResolveName("paths"); !ok || !act.donePaths || act.doneArgs || act.doneCommands {
		t.Fatal("resolving paths must build paths only")
	}
	if _, ok := act.ResolveName("nope"); ok {
		t.Fatal("unknown names must not resolve")
	}
}
