package policytest

import (
	"context"
	"errors"
	"strings"
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

const (
	allow    = pb.VerdictDecision_VERDICT_DECISION_ALLOW
	block    = pb.VerdictDecision_VERDICT_DECISION_BLOCK
	escalate = pb.VerdictDecision_VERDICT_DECISION_ESCALATE
)

// fakeEval decides by action type, so each test case picks its outcome.
func fakeEval(_ context.Context, req action.Request, minTier int32) (*pb.Verdict, error) {
	switch req.Type {
	case "allow":
		return &pb.Verdict{Decision: allow, Tier: minTier}, nil
	case "block":
		return &pb.Verdict{Decision: block, Tier: 1, RuleIds: []string{"shell.a", "shell.b"}, Reasoning: "bad\nthing"}, nil
	case "escalate":
		return &pb.Verdict{Decision: escalate, Tier: 0}, nil
	case "unset":
		return &pb.Verdict{}, nil
	case "nil":
		return nil, nil
	case "panic":
		panic("boom")
	}
	return nil, errors.New("invalid request")
}

func mk(name, typ, expect string) Case {
	return Case{File: "f.yaml", Line: 3, Name: name, Category: "cat", Kind: KindAttack,
		Request: action.Request{Type: typ}, Expect: expect}
}

func TestRunJudges(t *testing.T) {
	withRule := func(c Case, rule string) Case { c.Rule = rule; return c }
	tests := []struct {
		c    Case
		pass bool
		why  string
	}{
		{mk("a", "allow", ExpectAllow), true, "allow (tier 0)"},
		{mk("b", "block", ExpectBlock), true, "block (tier 1, rules shell.a, shell.b: bad thing)"},
		{mk("c", "escalate", ExpectEscalate), true, "escalate (tier 0)"},
		{mk("d", "other", ExpectError), true, "error: invalid request"},
		{mk("e", "allow", ExpectBlock), false, "want block, got allow (tier 0)"},
		{mk("f", "block", ExpectEscalate), false, "want escalate, got block (tier 1, rules shell.a, shell.b: bad thing)"},
		{mk("g", "other", ExpectBlock), false, "want block, got error: invalid request"},
		{mk("h", "allow", ExpectError), false, "want error, got allow (tier 0)"},
		{mk("i", "unset", ExpectAllow), false, "want allow, got unspecified decision (tier 0)"},
		{mk("j", "nil", ExpectAllow), false, "want allow, got no verdict"},
		{mk("k", "nil", ExpectError), false, "want error, got no verdict and no error"},
		{mk("l", "panic", ExpectBlock), false, "want block, got error: evaluator panicked: boom"},
		{mk("m", "panic", ExpectError), true, "error: evaluator panicked: boom"},
		{withRule(mk("n", "block", ExpectBlock), "shell.b"), true, "block (tier 1, rules shell.a, shell.b: bad thing)"},
		{withRule(mk("o", "block", ExpectBlock), "shell.z"), false, "want rule shell.z, got block (tier 1, rules shell.a, shell.b: bad thing)"},
	}
	cases := make([]Case, len(tests))
	for i, tt := range tests {
		cases[i] = tt.c
	}
	rep := Run(context.Background(), cases, fakeEval)
	if len(rep.Results) != len(tests) {
		t.Fatalf("%d results for %d cases", len(rep.Results), len(tests))
	}
	failed := 0
	for i, tt := range tests {
		r := rep.Results[i]
		if r.Case.Name != tt.c.Name {
			t.Errorf("result %d is for case %q, want %q", i, r.Case.Name, tt.c.Name)
		}
		if r.Pass != tt.pass || r.Why != tt.why {
			t.Errorf("case %s: pass=%v why=%q; want pass=%v why=%q", tt.c.Name, r.Pass, r.Why, tt.pass, tt.why)
		}
		if !tt.pass {
			failed++
		}
	}
	if rep.Failed() != failed || rep.Passed() != len(tests)-failed {
		t.Errorf("Failed()=%d Passed()=%d, want %d and %d", rep.Failed(), rep.Passed(), failed, len(tests)-failed)
	}
}

func TestRunPassesMinTier(t *testing.T) {
	c := mk("a", "allow", ExpectAllow)
	c.MinTier = 2
	rep := Run(context.Background(), []Case{c}, fakeEval)
	if got := rep.Results[0].Verdict.GetTier(); got != 2 {
		t.Errorf("evaluator saw min tier %d, want 2", got)
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	eval := func(ctx context.Context, req action.Request, minTier int32) (*pb.Verdict, error) {
		calls++
		cancel()
		return fakeEval(ctx, req, minTier)
	}
	rep := Run(ctx, []Case{mk("a", "allow", ExpectAllow), mk("b", "other", ExpectError), mk("c", "allow", ExpectAllow)}, eval)
	if calls != 1 {
		t.Errorf("evaluator called %d times after cancel, want 1", calls)
	}
	if !rep.Results[0].Pass {
		t.Errorf("case before cancel failed: %s", rep.Results[0].Why)
	}
	// A case that expects an error must not pass just because it never ran.
	for _, r := range rep.Results[1:] {
		if r.Pass || !errors.Is(r.Err, context.Canceled) || !strings.HasPrefix(r.Why, "not run: ") {
			t.Errorf("case %s after cancel: pass=%v err=%v why=%q", r.Case.Name, r.Pass, r.Err, r.Why)
		}
	}
}
