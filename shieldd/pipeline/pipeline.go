// Package pipeline is the Shield's evaluation pipeline: canonicalise →
// cache → Tier 0 (policy) → Tier 1 (heuristics) → Tier 2 hook → verdict.
// Severity order is BLOCK > ESCALATE > ALLOW and every error fails closed:
// Evaluate returns an error (never an ALLOW) when the action cannot be read.
package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/heuristics"
	"github.com/parapet-dev/parapet/rules/policy"
)

// Tier numbers as they appear in verdicts.
const (
	TierPolicy     int32 = 0
	TierHeuristics int32 = 1
	TierEvaluator  int32 = 2
	TierHuman      int32 = 3
)

// Input is one action to evaluate.
type Input struct {
	Request action.Request
	// MinTier is the lowest tier that must judge the action before it may
	// be allowed (0-3).
	MinTier int32
	// Context is free-form caller context, passed to Tier 2.
	Context map[string]string
}

// Evaluator is the Tier 2 hook: an independent judge of actions that the
// deterministic tiers could not settle. Until one is configured, what
// would go to Tier 2 goes to a human (ESCALATE).
//
// prior is the Tier 0/1 verdict (ESCALATE, or ALLOW with a required tier
// of 2), its Reasoning filled in. The pipeline keeps the action's identity
// and required tier whatever the evaluator returns. transient marks a
// verdict that stands for this call only because the evaluator could not
// judge (model unreachable, budget spent): it is answered but not cached,
// so the model judges the action once it can. A non-nil error means the
// action must not run.
type Evaluator interface {
	Evaluate(ctx context.Context, a *action.Action, in Input, prior *pb.Verdict) (v *pb.Verdict, transient bool, err error)
}

// Describer is implemented by evaluators that can name the model they
// ask, for GetShieldStatus.
type Describer interface {
	Describe() (provider, model string)
}

// Config configures a Pipeline. Zero values take the defaults.
type Config struct {
	// Policy is the Tier 0 policy; nil means the embedded default policy.
	Policy *policy.Policy
	// CacheSize bounds cached verdicts (default 100 000; negative disables).
	CacheSize int
	// CacheTTL bounds a cached verdict's life (default 5 minutes).
	CacheTTL time.Duration
	Limits   action.Limits
	// Evaluator is the optional Tier 2 hook.
	Evaluator Evaluator
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Pipeline evaluates actions. It is safe for concurrent use; SetPolicy
// and SetTenantPolicies swap policies atomically.
type Pipeline struct {
	rules atomic.Pointer[ruleset]
	// tenants holds the rulesets of tenants with their own policy; every
	// other tenant is judged by rules. Nil when there are none.
	tenants   atomic.Pointer[map[string]*ruleset]
	cache     *verdictCache
	limits    action.Limits
	evaluator Evaluator
	flights   tier2Flights
	clock     *clock
	daily     dailyCounters
	counters  counters
	// tracer makes stage spans; see tracerFor.
	tracer atomic.Pointer[cachedTracer]
}

// ruleset is one compiled policy with its Tier 1 analyser; swapped whole.
type ruleset struct {
	policy   *policy.Policy
	analyzer *heuristics.Analyzer
	// tier0 holds what each policy decision puts into a verdict, in the
	// order of policy.RuleDecisions (see Policy.Decide).
	tier0 []*tier0Verdict
}

func newRuleset(pol *policy.Policy) (*ruleset, error) {
	analyzer, err := heuristics.New(pol.Heuristics)
	if err != nil {
		return nil, fmt.Errorf("policy %s: heuristics: %w", pol.Source, err)
	}
	return &ruleset{policy: pol, analyzer: analyzer, tier0: prepareTier0(pol)}, nil
}

// New builds a pipeline.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Policy == nil {
		p, err := policy.Embedded("default")
		if err != nil {
			return nil, fmt.Errorf("embedded default policy: %w", err)
		}
		cfg.Policy = p
	}
	if cfg.CacheSize == 0 {
		cfg.CacheSize = 100_000
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = 5 * time.Minute
	}
	p := &Pipeline{
		limits:    cfg.Limits,
		evaluator: cfg.Evaluator,
		clock:     newClock(cfg.Now),
	}
	if cfg.CacheSize > 0 {
		p.cache = newVerdictCache(cfg.CacheSize, cfg.CacheTTL)
	}
	if err := p.SetPolicy(cfg.Policy); err != nil {
		return nil, err
	}
	return p, nil
}

// SetPolicy compiles the policy's Tier 1 settings and swaps it in. On error
// the running policy stays. Cached verdicts of the old policy can no longer
// be served: the policy version is part of the cache key.
func (p *Pipeline) SetPolicy(pol *policy.Policy) error {
	rs, err := newRuleset(pol)
	if err != nil {
		return err
	}
	p.rules.Store(rs)
	if p.cache != nil {
		p.cache.shapes.reset()
	}
	return nil
}

// SetTenantPolicies compiles a policy per tenant and swaps the whole set
// in; tenants without one keep the default policy. On error the running
// set stays. The cache key holds the tenant and the policy version, so no
// tenant is served another's verdicts, old or new.
func (p *Pipeline) SetTenantPolicies(pols map[string]*policy.Policy) error {
	if len(pols) == 0 {
		p.tenants.Store(nil)
		return nil
	}
	m := make(map[string]*ruleset, len(pols))
	for tenant, pol := range pols {
		rs, err := newRuleset(pol)
		if err != nil {
			return fmt.Errorf("tenant %s: %w", tenant, err)
		}
		m[tenant] = rs
	}
	p.tenants.Store(&m)
	if p.cache != nil {
		p.cache.shapes.reset()
	}
	return nil
}

// rulesFor is the ruleset that judges tenant's actions.
func (p *Pipeline) rulesFor(tenant string) *ruleset {
	if m := p.tenants.Load(); m != nil {
		if rs, ok := (*m)[tenant]; ok {
			return rs
		}
	}
	return p.rules.Load()
}

// Policy returns the running default policy.
func (p *Pipeline) Policy() *policy.Policy { return p.rules.Load().policy }

// PolicyFor returns the policy that judges tenant's actions.
func (p *Pipeline) PolicyFor(tenant string) *policy.Policy { return p.rulesFor(tenant).policy }

// TenantPolicies is the number of tenants with their own policy.
func (p *Pipeline) TenantPolicies() int {
	if m := p.tenants.Load(); m != nil {
		return len(*m)
	}
	return 0
}

// MaxTier is the highest tier this pipeline can decide at itself.
func (p *Pipeline) MaxTier() int32 {
	if p.evaluator != nil {
		return TierEvaluator
	}
	return TierHeuristics
}

// EvaluatorConfigured reports whether a Tier 2 evaluator is set.
func (p *Pipeline) EvaluatorConfigured() bool { return p.evaluator != nil }

// Evaluate judges one action. A non-nil error means the action must not
// run; it is an *action.Error for malformed or oversized input.
func (p *Pipeline) Evaluate(ctx context.Context, in Input) (*pb.Verdict, error) {
	start := p.clock.read()
	rs := p.rulesFor(in.Request.Caller.Tenant)
	if in.MinTier < 0 || in.MinTier > TierHuman {
		return nil, &action.Error{Kind: action.Invalid, Msg: fmt.Sprintf("min_tier must be between 0 and 3, got %d", in.MinTier)}
	}
	// Checked before the cache key is built, so an oversized payload is
	// never hashed; Canonicalize checks it again for its other callers.
	if limit := p.limits.MaxPayloadBytesOrDefault(); len(in.Request.Payload) > limit {
		return nil, &action.Error{Kind: action.TooLarge, Msg: fmt.Sprintf("payload_json is %d bytes, limit %d", len(in.Request.Payload), limit)}
	}
	if err := action.CheckAttachments(in.Request.Attachments); err != nil {
		return nil, err
	}

	// Stage spans only under a recording span: checked once, here.
	spans := p.startStageSpans(ctx)

	var key cacheKey
	if p.cache != nil {
		var sp trace.Span
		if spans != nil {
			_, sp = spans.start(SpanCache)
		}
		key = makeCacheKey(rs.policy.Version, &in)
		v, ok := p.cache.get(key, start.unix)
		if spans != nil {
			endCache(sp, v)
		}
		if ok {
			p.counters.hits.Add(1)
			p.finish(v, start)
			return v, nil
		}
		p.counters.misses.Add(1)
	}

	v, err := p.decide(ctx, rs, in, start, key, spans)
	if err != nil {
		p.counters.errors.Add(1)
		return nil, err
	}
	p.finish(v, start)
	return v, nil
}

func (p *Pipeline) finish(v *pb.Verdict, start instant) {
	p.daily.roll(start.unix, &p.counters)
	p.counters.recordDecision(v, p.clock.since(start))
}
