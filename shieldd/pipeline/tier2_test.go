package pipeline

import (
	"context"
	"testing"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// evaluatorFunc adapts a function to Evaluator. The real evaluator is
// tested in shieldd/evaluator against a model server; these check what
// the pipeline does with a broken one.
type evaluatorFunc func(prior *pb.Verdict) (*pb.Verdict, bool, error)

func (f evaluatorFunc) Evaluate(_ context.Context, _ *action.Action, _ Input, prior *pb.Verdict) (*pb.Verdict, bool, error) {
	return f(prior)
}

func TestBrokenEvaluatorFailsClosed(t *testing.T) {
	in := input("http_request", `{"url":"https://example.com"}`) // no match: tier 2
	t.Run("no verdict", func(t *testing.T) {
		p := newTestPipeline(t, Config{Evaluator: evaluatorFunc(func(*pb.Verdict) (*pb.Verdict, bool, error) { return nil, false, nil })})
		if v, err := p.Evaluate(context.Background(), in); err == nil {
			t.Fatalf("got %v, want an error", v)
		}
	})
	t.Run("panic", func(t *testing.T) {
		p := newTestPipeline(t, Config{Evaluator: evaluatorFunc(func(*pb.Verdict) (*pb.Verdict, bool, error) { panic("boom") })})
		if v, err := p.Evaluate(context.Background(), in); err == nil {
			t.Fatalf("got %v, want an error", v)
		}
	})
	t.Run("unset decision and another action's identity", func(t *testing.T) {
		var sent *pb.Verdict
		p := newTestPipeline(t, Config{Evaluator: evaluatorFunc(func(prior *pb.Verdict) (*pb.Verdict, bool, error) {
			sent = prior
			return &pb.Verdict{Tier: TierEvaluator, ActionHash: "00", RequiredTier: 0, Reasoning: "?"}, false, nil
		})})
		v := eval(t, p, in)
		if v.Decision != block || v.ActionHash != sent.ActionHash || v.RequiredTier != TierEvaluator || v.PolicyVersion != sent.PolicyVersion {
			t.Fatalf("got %v; want BLOCK keeping the action's identity and required tier", v)
		}
		if sent.Reasoning == "" || sent.Decision != escalate {
			t.Fatalf("the evaluator was not told why the action was escalated: %v", sent)
		}
	})
	t.Run("transient verdicts are not cached", func(t *testing.T) {
		calls := 0
		p := newTestPipeline(t, Config{Evaluator: evaluatorFunc(func(prior *pb.Verdict) (*pb.Verdict, bool, error) {
			calls++
			return &pb.Verdict{Decision: escalate, Tier: TierEvaluator, Reasoning: "unavailable"}, true, nil
		})})
		eval(t, p, in)
		if v := eval(t, p, in); v.CacheHit || calls != 2 {
			t.Fatalf("hit %v after %d calls; a transient verdict was cached", v.CacheHit, calls)
		}
	})
}
