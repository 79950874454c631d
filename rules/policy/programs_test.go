package policy

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/corpus"
	"github.com/parapet-dev/parapet/rules/policytest"
)

// unnumbered parses src with every command matcher comparing program
// names as patterns, as before programs were numbered: the reference the
// numbered policy must agree with.
func unnumbered(t *testing.T, source, src string) *Policy {
	t.Helper()
	p, err := Parse(source, []byte(src))
	if err != nil {
		t.Fatalf("parse:\n%v", err)
	}
	for _, section := range [][]*rule{p.deny, p.verify, p.allow} {
		for _, r := range section {
			m := r.cond.command
			if m == nil {
				continue
			}
			m.programs, m.open = 0, true
			for i := range m.alts {
				m.alts[i].programBits, m.alts[i].programRest = 0, m.alts[i].program
			}
		}
	}
	p.programs = nil
	return p
}

// manyPrograms is a policy with more literal program names than the
// programTable numbers (64), next to patterns and specs without a
// program, so that every way a spec can admit a program is exercised.
func manyPrograms() string {
	var b strings.Builder
	b.WriteString("version: 1\ndeny:\n")
	for i := range 70 {
		fmt.Fprintf(&b, "  - id: d%d\n    match: {command: {program: [prog%d], args_any: [\"--bad\"]}}\n", i, i)
	}
	b.WriteString("verify:\n  - id: v-glob\n    tier: 2\n    match: {command: [{program: [\"py*\", prog3]}, {program: [prog68], subcommand: [up]}]}\n")
	b.WriteString("  - id: v-any\n    tier: 3\n    match: {command: {args_any: [\"--verify\"]}}\n")
	b.WriteString("allow:\n  - id: a-mixed\n    match: {command: [{program: [prog1, prog66, \"tool-?\"]}, {program: [git], subcommand: [status, log]}]}\n")
	b.WriteString("  - id: a-late\n    match: {command: {program: [prog69]}}\n")
	return b.String()
}

var programLines = []string{
	"prog3 --bad", "prog65 --bad", "prog69 --bad", "prog69 ok", "prog1 && prog66 x", "prog1; tool-a; git status",
	"prog1; tool-ab", "python3 x.py", "prog68 up", "prog68 down", "ls --verify", "git -C x log", "git push",
	"a; b; c; d; e; f; g; h; i; prog67 --bad", "prog1; prog1; prog1; prog1; prog1; prog1; prog1; prog1; prog1; git status",
	"prog1; prog1; prog1; prog1; prog1; prog1; prog1; prog1; prog1; git push", "$X --bad", "bash -c 'prog64 --bad'",
}

// Numbering programs changes no decision: every embedded policy and
// manyPrograms decide the corpus and programLines as their unnumbered
// references do, and Decide's index names the decision in RuleDecisions.
func TestProgramNumberingKeepsDecisions(t *testing.T) {
	requireShellParser(t)
	cases, err := policytest.LoadFS(corpus.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	var actions []*action.Action
	for _, c := range cases {
		a, err := action.Canonicalize(c.Request, action.Limits{})
		if err != nil {
			continue // the corpus's malformed cases never reach the policy
		}
		actions = append(actions, a)
	}
	for _, line := range programLines {
		actions = append(actions, cmd(t, line))
	}
	sources := map[string]string{"manyPrograms": manyPrograms()}
	for _, name := range EmbeddedNames() {
		src, _ := EmbeddedSource(name)
		sources[name] = string(src)
	}
	for name, src := range sources {
		p, ref := mustParse(t, src), unnumbered(t, "test.yaml", src)
		decisions := p.RuleDecisions()
		for _, a := range actions {
			d, i := p.Decide(a)
			want, wantIndex := ref.Decide(a)
			if !sameDecision(d, want) || i != wantIndex {
				t.Errorf("%s on %s %q: %s (%d), unnumbered %s (%d)", name, a.Type, a.Command, d.RuleID, i, want.RuleID, wantIndex)
			}
			switch {
			case i >= 0 && decisions[i] != d:
				t.Errorf("%s on %s %q: index %d names %s, decision is %s", name, a.Type, a.Command, i, decisions[i].RuleID, d.RuleID)
			case i < 0 && a.Known:
				t.Errorf("%s on %s %q: no index for a known type's decision %s", name, a.Type, a.Command, d.RuleID)
			}
		}
	}
}

// The decisions manyPrograms must reach, so that the comparison above
// does not pass by both sides matching nothing.
func TestManyPrograms(t *testing.T) {
	requireShellParser(t)
	p := mustParse(t, manyPrograms())
	if len(p.programs) != 64 {
		t.Fatalf("%d programs numbered, want 64", len(p.programs))
	}
	for line, want := range map[string]string{
		"prog3 --bad":                        "d3",
		"prog65 --bad":                       "d65", // past the 64th name: compared as a pattern
		"prog69 ok":                          "a-late",
		"prog1 && prog66 x; tool-z; git log": "a-mixed",
		"prog1; tool-ab":                     RuleNoMatch,
		"python3 x.py":                       "v-glob",
		"prog68 up":                          "v-glob",
		"prog68 down":                        RuleNoMatch,
		"ls --verify":                        "v-any",
		"a; b; c; d; e; f; g; h; i; prog67 --bad":                                   "d67",
		"prog1; prog1; prog1; prog1; prog1; prog1; prog1; prog1; prog1; git status": "a-mixed",
		"prog1; prog1; prog1; prog1; prog1; prog1; prog1; prog1; prog1; git push":   RuleNoMatch,
	} {
		if got := p.Evaluate(cmd(t, line)).RuleID; got != want {
			t.Errorf("%q: %s, want %s", line, got, want)
		}
	}
}

// sameDecision compares decisions of two parses of one policy, whose
// confinements are equal but not the same pointer.
func sameDecision(a, b Decision) bool {
	if !proto.Equal(a.Confine, b.Confine) {
		return false
	}
	a.Confine, b.Confine = nil, nil
	return a == b
}
