package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// tier2 asks the evaluator about an action the deterministic tiers sent
// to Tier 2. Concurrent identical requests (same cache key) share one
// call: a model call is slow and costs money, and N agents retrying the
// same command at once should cost one. The flight caches its verdict
// before it ends, and re-checks the cache when it starts, so a request
// either joins the running flight or finds its verdict cached.
func (p *Pipeline) tier2(ctx context.Context, key cacheKey, in Input, act *action.Action, prior *pb.Verdict) (*pb.Verdict, error) {
	return p.flights.do(ctx, key, func(ctx context.Context) (*pb.Verdict, error) {
		if p.cache != nil {
			if v, ok := p.cache.get(key, p.clock.unixNow()); ok {
				return v, nil // an identical flight ended between our miss and now
			}
		}
		v, transient, err := p.evaluator.Evaluate(ctx, act, in, prior)
		if err != nil {
			return nil, fmt.Errorf("tier 2 evaluator: %w", err)
		}
		if v == nil {
			return nil, errors.New("tier 2 evaluator returned no verdict")
		}
		settleTier2(prior, v)
		if p.cache != nil && !transient {
			v = p.cache.putForeign(key, v, &act.Hash)
		}
		return v, nil
	})
}

// settleTier2 keeps what Tier 2 may not change: which action was judged,
// under which policy, and the tier the request requires. A decision that
// is not one of the three reads as BLOCK.
func settleTier2(prior, v *pb.Verdict) {
	v.ActionHash, v.ActionType, v.PolicyVersion = prior.ActionHash, prior.ActionType, prior.PolicyVersion
	v.Confinement = prior.Confinement // only the policy grants; Tier 2 neither widens nor replaces it
	v.RequiredTier = max(v.RequiredTier, prior.RequiredTier)
	if v.EvaluatedAt == 0 {
		v.EvaluatedAt = prior.EvaluatedAt
	}
	if d := v.Decision; d != allow && d != escalate {
		v.Decision = block
	}
}

// tier2Flights are the Tier 2 calls in progress, by cache key.
type tier2Flights struct {
	mu sync.Mutex
	m  map[cacheKey]*tier2Flight
	// waiting counts callers waiting on a flight, for Status.
	waiting atomic.Int64
}

type tier2Flight struct {
	done chan struct{}
	v    *pb.Verdict
	err  error
}

// do returns the verdict of the flight for key, starting one if none is
// running. fn runs on its own goroutine under a context no single caller
// can cancel: a caller that gives up gets its context's error, while the
// others (and the cache) still get the answer. The evaluator bounds its
// own calls. Every caller gets its own copy of the verdict.
func (f *tier2Flights) do(ctx context.Context, key cacheKey, fn func(context.Context) (*pb.Verdict, error)) (*pb.Verdict, error) {
	f.mu.Lock()
	fl, ok := f.m[key]
	if !ok {
		if f.m == nil {
			f.m = make(map[cacheKey]*tier2Flight)
		}
		fl = &tier2Flight{done: make(chan struct{})}
		f.m[key] = fl
		go f.run(context.WithoutCancel(ctx), key, fl, fn)
	}
	f.mu.Unlock()

	f.waiting.Add(1)
	defer f.waiting.Add(-1)
	select {
	case <-fl.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the tier 2 evaluator: %w", ctx.Err())
	}
	if fl.err != nil {
		return nil, fl.err
	}
	return proto.Clone(fl.v).(*pb.Verdict), nil
}

func (f *tier2Flights) run(ctx context.Context, key cacheKey, fl *tier2Flight, fn func(context.Context) (*pb.Verdict, error)) {
	defer func() {
		// A panic here would take the daemon down; the callers fail closed instead.
		if r := recover(); r != nil {
			fl.v, fl.err = nil, fmt.Errorf("tier 2 evaluator panicked: %v", r)
		}
		f.mu.Lock()
		delete(f.m, key)
		f.mu.Unlock()
		close(fl.done)
	}()
	fl.v, fl.err = fn(ctx)
}
