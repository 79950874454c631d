package pipeline

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/internal/worstcase"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/policy"
)

// countdownCtx is a context that ends after its Err has been asked a set
// number of times, so a test can stop an evaluation at each of the points
// where it checks, without depending on how fast the machine is.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

// An evaluation that ends at any of its checkpoints is BLOCK, never the
// ALLOW the full evaluation gives, and it is not cached.
func TestDeadlineStopsEvaluationAsBlock(t *testing.T) {
	p := newTestPipeline(t, Config{Policy: defaultPolicy(t)})
	shape, ok := worstcase.Build("long-urls", 64<<10)
	if !ok {
		t.Fatal("no shape")
	}
	in := Input{Request: action.Request{Type: "execute_command", Payload: shape.Payload, Caller: caller}}
	// Stop the evaluation at the k-th check, for growing k, until one
	// finishes. Had a deadline verdict been cached, the next k would be
	// served that BLOCK although its context never ended.
	stopped, finished := 0, false
	for k := int64(0); k < 10000 && !finished; k++ {
		ctx := &countdownCtx{Context: context.Background()}
		ctx.left.Store(k)
		v, err := p.Evaluate(ctx, in)
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		if ctx.left.Load() < 0 { // the context ended during the evaluation
			stopped++
			if v.Decision != block || !slices.Contains(v.RuleIds, DeadlineRuleID) {
				t.Fatalf("k=%d: deadline passed but the verdict is %s %v", k, v.Decision, v.RuleIds)
			}
			continue
		}
		if v.Decision != allow {
			t.Fatalf("k=%d: context never ended but the verdict is %s %v", k, v.Decision, v.RuleIds)
		}
		finished = true
	}
	if stopped < 3 || !finished {
		t.Fatalf("stopped %d times, finished %v: the pipeline does not check its context between stages", stopped, finished)
	}
	// The finished evaluation was the request's first sighting; its
	// second is cached, its third served from the cache.
	eval(t, p, in)
	if v := eval(t, p, in); v.Decision != allow || !v.CacheHit {
		t.Fatalf("after the deadlines: %s %v cache hit %v", v.Decision, v.RuleIds, v.CacheHit)
	}
}

func TestExpiredContextIsBlock(t *testing.T) {
	p := newTestPipeline(t, Config{Policy: defaultPolicy(t)})
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel()
	v, err := p.Evaluate(ctx, input("execute_command", `{"command":"ls -la"}`))
	if err != nil {
		t.Fatal(err)
	}
	if v.Decision != pb.VerdictDecision_VERDICT_DECISION_BLOCK || v.RuleIds[0] != DeadlineRuleID || v.Reasoning == "" {
		t.Fatalf("expired context: %s %v %q", v.Decision, v.RuleIds, v.Reasoning)
	}
}

// FuzzWorstCaseShapes evaluates the worst-case shapes at fuzzed sizes:
// never a panic, always a decision or an input error.
func FuzzWorstCaseShapes(f *testing.F) {
	for i := range worstcase.Kinds {
		f.Add(uint8(i), uint32(4096))
	}
	p, err := New(Config{CacheSize: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, kind uint8, size uint32) {
		k := worstcase.Kinds[int(kind)%len(worstcase.Kinds)]
		s, ok := worstcase.Build(k, int(size%(worstcase.MaxPayload+1)))
		if !ok {
			return
		}
		in := Input{Request: action.Request{Type: "execute_command", Payload: s.Payload, Caller: caller}}
		v, err := p.Evaluate(context.Background(), in)
		if err != nil {
			return // invalid or oversized input is an error, never an allow
		}
		if v.Decision == pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED {
			t.Fatalf("%s at %d bytes: no decision", k, len(s.Payload))
		}
	})
}

func defaultPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	pol, err := policy.Embedded("default")
	if err != nil {
		t.Fatal(err)
	}
	return pol
}
