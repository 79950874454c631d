package pipeline

import (
	"sync"
	"sync/atomic"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/heuristics"
)

// dailyCounters count verdicts since UTC midnight for GetShieldStatus.
type dailyCounters struct {
	day         atomic.Int64
	mu          sync.Mutex // serialises the reset at a day change
	evaluations atomic.Int64
	blocks      atomic.Int64
	escalations atomic.Int64
}

func (c *dailyCounters) record(d pb.VerdictDecision, unixNow int64) {
	day := unixNow / 86400
	if c.day.Load() != day {
		c.mu.Lock()
		if c.day.Load() != day {
			c.evaluations.Store(0)
			c.blocks.Store(0)
			c.escalations.Store(0)
			c.day.Store(day)
		}
		c.mu.Unlock()
	}
	c.evaluations.Add(1)
	switch d {
	case block:
		c.blocks.Add(1)
	case escalate:
		c.escalations.Add(1)
	}
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
	CacheHits, CacheMisses    int64
	EvaluatorConfigured       bool
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
	if p.daily.day.Load() == p.clock.unixNow()/86400 {
		s.EvaluationsToday = p.daily.evaluations.Load()
		s.BlocksToday = p.daily.blocks.Load()
		s.EscalationsToday = p.daily.escalations.Load()
	}
	if p.cache != nil {
		s.CacheEntries = p.cache.Len()
	}
	return s
}
