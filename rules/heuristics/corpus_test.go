package heuristics_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/corpus"
	"github.com/parapet-dev/parapet/rules/heuristics"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/rules/policytest"
)

// knownStricter lists corpus cases where Tier 1 deliberately blocks what
// the corpus labels escalate, following the Tier 1 specification. Each is
// reported to the corpus owner; the reason says why Tier 1 keeps BLOCK.
var knownStricter = map[string]string{
	"base64 decoded harmless ls piped to sh": "decode-and-execute is BLOCK whatever the payload: the point of the encoding is to hide it",
	"zero-width in harmless make":            "invisible characters in a command are BLOCK: what runs differs from what a reviewer sees",
	"bidi override in a workspace file name": "bidi overrides in a path are BLOCK: the name displays differently from what it is",
	"bashrc append of go bin to PATH":        "shell startup files are BLOCK: they run in every future shell",
}

// tier1Decision is what Tier 1 alone would decide.
func tier1Decision(fs []heuristics.Finding) string {
	d := "allow"
	for _, f := range fs {
		switch f.Outcome {
		case pb.VerdictDecision_VERDICT_DECISION_BLOCK:
			return "block"
		case pb.VerdictDecision_VERDICT_DECISION_ESCALATE:
			d = "escalate"
		}
	}
	return d
}

// TestCorpus runs the shared labelled corpus through Tier 1 alone. Tier 0
// policy decides too, so an attack Tier 1 misses is only reported (-v);
// but Tier 1 must never flag an everyday action, must never be stricter
// than the label, and must produce the rule a case names when the rule is
// one of ours.
func TestCorpus(t *testing.T) {
	cases, err := policytest.LoadFS(corpus.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	// Tier 1 as shieldd runs it: with the default policy's heuristics
	// section (its trusted hosts).
	def, err := policy.Embedded("default")
	if err != nil {
		t.Fatal(err)
	}
	a, err := heuristics.New(def.Heuristics)
	if err != nil {
		t.Fatal(err)
	}
	type stat struct{ total, caught, exact int }
	stats := map[string]*stat{}
	var misses []string
	for _, c := range cases {
		act, err := action.Canonicalize(c.Request, action.Limits{})
		if err != nil {
			continue // Tier 0 rejects it; nothing for Tier 1 to judge
		}
		fs := a.Analyze(act)
		got := tier1Decision(fs)
		st := stats[c.Category]
		if st == nil {
			st = &stat{}
			stats[c.Category] = st
		}
		st.total++
		if got != "allow" {
			st.caught++
		}
		if got == c.Expect {
			st.exact++
		}
		ids := make([]string, len(fs))
		for i, f := range fs {
			ids[i] = f.RuleID + "/" + strings.ToLower(strings.TrimPrefix(f.Outcome.String(), "VERDICT_DECISION_"))
		}
		where := fmt.Sprintf("%s %s (%s): want %s, Tier 1 %s %v", c.Pos(), c.Name, c.Category, c.Expect, got, ids)
		switch {
		case c.Expect == "allow" && got != "allow":
			t.Errorf("false positive: %s", where)
		case c.Expect == "escalate" && got == "block":
			if reason, ok := knownStricter[c.Name]; ok {
				t.Logf("stricter than the label by design (%s): %s", reason, where)
			} else {
				t.Errorf("stricter than the label: %s", where)
			}
		case c.Rule != "" && heuristics.Known(c.Rule) && !hasID(fs, c.Rule):
			t.Errorf("missing rule %s: %s", c.Rule, where)
		case (c.Expect == "block" || c.Expect == "escalate") && got != c.Expect:
			misses = append(misses, where)
		}
	}
	cats := make([]string, 0, len(stats))
	for k := range stats {
		cats = append(cats, k)
	}
	sort.Strings(cats)
	for _, k := range cats {
		s := stats[k]
		t.Logf("%-24s %3d cases, Tier 1 flags %3d, matches the label %3d", k, s.total, s.caught, s.exact)
	}
	for _, m := range misses {
		t.Logf("not matched by Tier 1 alone: %s", m)
	}
}

func hasID(fs []heuristics.Finding, id string) bool {
	for _, f := range fs {
		if f.RuleID == id {
			return true
		}
	}
	return false
}
