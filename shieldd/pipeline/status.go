package pipeline

import (
	"sync"
	"sync/atomic"

	"github.com/parapet-dev/parapet/rules/heuristics"
)

// dailyCounters turn the all-time decision counters into counts since
// UTC midnight for GetShieldStatus: at the first verdict of a day they
// note the totals so far, and today's counts are the totals since. The
// hot path pays one atomic load, not three more shared counters.
type dailyCounters struct {
	day atomic.Int64
	mu  sync.Mutex // serialises the snapshot at a day change
	// at is the totals when the day began.
	at atomic.Pointer[decisionTotals]
}

type decisionTotals struct{ evaluations, blocks, escalations int64 }

// roll notes the totals so far when unixNow is on a new day. Call it
// before counting the verdict of unixNow.
func (c *dailyCounters) roll(unixNow int64, all *counters) {
	day := unixNow / 86400
	if c.day.Load() == day {
		return
	}
	c.mu.Lock()
	if c.day.Load() != day {
		t := all.totals()
		c.at.Store(&t)
		c.day.Store(day)
	}
	c.mu.Unlock()
}

// today returns the counts since the day of unixNow began, zero when no
// verdict was counted that day yet.
func (c *dailyCounters) today(unixNow int64, all *counters) decisionTotals {
	at := c.at.Load()
	if at == nil || c.day.Load() != unixNow/86400 {
		return decisionTotals{}
	}
	t := all.totals()
	return decisionTotals{t.evaluations - at.evaluations, t.blocks - at.blocks, t.escalations - at.escalations}
}

// Status is a snapshot of the pipeline for GetShieldStatus.
type Status struct {
	PolicyName, PolicyVersion string
	PolicyRules               int
	HeuristicRules            int
	EvaluationsToday          int64
	BlocksToday               int64
	EscalationsToday          int64
	CacheEntries              int
	// CacheOwnBytes is what the cached verdicts hold of their own
	// actions, and CacheOwnBudget the bound the cache keeps it to.
	CacheOwnBytes, CacheOwnBudget int64
	CacheHits, CacheMisses        int64
	EvaluatorConfigured           bool
	// EvaluatorProvider and EvaluatorModel name the Tier 2 model, when the
	// evaluator says (Describer).
	EvaluatorProvider, EvaluatorModel string
	// EvaluatorWaiting is the number of callers waiting on a Tier 2 answer.
	EvaluatorWaiting int64
	MaxTier          int32
}

// Status reports counters and the running policy.
func (p *Pipeline) Status() Status {
	rs := p.rules.Load()
	s := Status{
		PolicyName: rs.policy.Name, PolicyVersion: rs.policy.Version, PolicyRules: rs.policy.RuleCount(),
		HeuristicRules:      len(heuristics.Catalogue()),
		EvaluatorConfigured: p.evaluator != nil,
		MaxTier:             p.MaxTier(),
		CacheHits:           p.counters.hits.Load(),
		CacheMisses:         p.counters.misses.Load(),
	}
	if d, ok := p.evaluator.(Describer); ok {
		s.EvaluatorProvider, s.EvaluatorModel = d.Describe()
	}
	s.EvaluatorWaiting = p.flights.waiting.Load()
	today := p.daily.today(p.clock.unixNow(), &p.counters)
	s.EvaluationsToday, s.BlocksToday, s.EscalationsToday = today.evaluations, today.blocks, today.escalations
	if p.cache != nil {
		s.CacheEntries = p.cache.Len()
		s.CacheOwnBytes, s.CacheOwnBudget = p.cache.OwnBytes(), p.cache.OwnBudget()
	}
	return s
}
