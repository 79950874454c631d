package policytest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// Evaluator judges one request, as the Shield pipeline does. minTier is the
// tier the caller asks for before the action may be allowed.
type Evaluator func(ctx context.Context, req action.Request, minTier int32) (*pb.Verdict, error)

// Result is the outcome of one case.
type Result struct {
	Case    Case
	Verdict *pb.Verdict
	Err     error
	Pass    bool
	// Why says what was wrong when Pass is false, or what happened when it
	// is true, e.g. "want block, got allow (tier 1, rules x: reason)".
	Why string
}

// Allowed reports whether the action would have run. An error or a missing
// verdict is not an allow: the Shield fails closed.
func (r Result) Allowed() bool {
	return r.Err == nil && r.Verdict != nil && r.Verdict.GetDecision() == pb.VerdictDecision_VERDICT_DECISION_ALLOW
}

// Run evaluates every case in order. It stops evaluating when ctx is done;
// the remaining cases are recorded as failed with ctx's error.
func Run(ctx context.Context, cases []Case, eval Evaluator) Report {
	rep := Report{Results: make([]Result, 0, len(cases))}
	for _, c := range cases {
		res := Result{Case: c}
		if err := ctx.Err(); err != nil {
			res.Err = err
			res.Why = "not run: " + err.Error()
		} else {
			res.Verdict, res.Err = safeEval(ctx, eval, c)
			res.Pass, res.Why = judge(c, res.Verdict, res.Err)
		}
		rep.Results = append(rep.Results, res)
	}
	return rep
}

// safeEval turns an evaluator panic into an error on that case, so one bad
// case cannot hide the results of all the others.
func safeEval(ctx context.Context, eval Evaluator, c Case) (v *pb.Verdict, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("evaluator panicked: %v", r)
		}
	}()
	return eval(ctx, c.Request, c.MinTier)
}

func judge(c Case, v *pb.Verdict, err error) (bool, string) {
	want := "want " + c.Expect
	if c.Expect == ExpectError {
		if err != nil {
			return true, "error: " + err.Error()
		}
		if v == nil {
			return false, want + ", got no verdict and no error"
		}
		return false, want + ", got " + describe(v)
	}
	if err != nil {
		return false, want + ", got error: " + err.Error()
	}
	if v == nil {
		return false, want + ", got no verdict"
	}
	got := decisionName(v.GetDecision())
	if got != c.Expect {
		return false, want + ", got " + describe(v)
	}
	if c.Network != nil && !slices.Equal(c.Network, v.GetConfinement().GetConnectPorts()) {
		return false, fmt.Sprintf("want network %v, got %v (%s)", c.Network, v.GetConfinement().GetConnectPorts(), describe(v))
	}
	if c.Rule != "" && !slices.Contains(v.GetRuleIds(), c.Rule) {
		return false, fmt.Sprintf("want rule %s, got %s", c.Rule, describe(v))
	}
	return true, describe(v)
}

func decisionName(d pb.VerdictDecision) string {
	if !d.Decided() {
		return "unspecified decision"
	}
	return d.Word()
}

// describe renders a verdict as "allow (tier 1, rules a, b: reason)".
func describe(v *pb.Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (tier %d", decisionName(v.GetDecision()), v.GetTier())
	if ids := v.GetRuleIds(); len(ids) > 0 {
		fmt.Fprintf(&b, ", rules %s", strings.Join(ids, ", "))
	}
	if r := strings.TrimSpace(v.GetReasoning()); r != "" {
		b.WriteString(": ")
		b.WriteString(oneLine(r, 200))
	}
	b.WriteByte(')')
	return b.String()
}

// oneLine keeps a report to one line per case whatever the reasoning holds.
func oneLine(s string, max int) string {
	return truncate(strings.Join(strings.Fields(s), " "), max)
}
