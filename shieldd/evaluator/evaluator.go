// Package evaluator is the Shield's Tier 2: an independent LLM that judges
// an action the deterministic tiers escalated. Any OpenAI-compatible chat
// completions endpoint or Anthropic Messages can serve as the model.
//
// Every call carries a fresh random canary that must come back in the
// model's JSON verdict; an answer without it is treated as manipulated and
// blocks. An unreadable answer blocks. When no answer can be had (timeout,
// network, 429 or 5xx after bounded retries, or the daily call budget is
// spent) the configured on_unavailable outcome applies: ESCALATE by
// default, BLOCK on request, ALLOW only when an operator says so.
package evaluator

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultMaxActionBytes = 16 << 10
	// maxAnswerTokens bounds the model's answer: one short JSON object.
	maxAnswerTokens = 512
)

// Rule ids in Tier 2 verdicts.
const (
	RuleLLM         = "tier2.llm"         // the model's own verdict
	RuleCanary      = "tier2.canary"      // the canary did not come back
	RuleBadAnswer   = "tier2.bad-answer"  // the answer could not be read
	RuleUnavailable = "tier2.unavailable" // no answer: timeout, network, 429, 5xx
	RuleBudget      = "tier2.budget"      // the daily call budget is spent
	RuleError       = "tier2.error"       // refused request, bad credentials
)

// ReasonPrefix starts every Tier 2 verdict's reasoning, so users see that
// the LLM evaluator decided.
const ReasonPrefix = "LLM evaluator: "

const (
	allow    = pb.VerdictDecision_VERDICT_DECISION_ALLOW
	block    = pb.VerdictDecision_VERDICT_DECISION_BLOCK
	escalate = pb.VerdictDecision_VERDICT_DECISION_ESCALATE
)

// Config configures an Evaluator.
type Config struct {
	// LLM selects the model: Provider ("openai" for any OpenAI-compatible
	// endpoint, or "anthropic"), BaseURL, Model, and APIKeyEnv, the
	// environment variable holding the key. Its Timeout is replaced by
	// Timeout below; MaxAttempts and the retry delays are used as given.
	LLM llm.Config
	// Timeout bounds one evaluation's model call, retries included.
	// Default DefaultTimeout.
	Timeout time.Duration
	// OnUnavailable is the decision when no answer can be had or the
	// budget is spent. Unset means ESCALATE; ALLOW must be set explicitly.
	OnUnavailable pb.VerdictDecision
	// DailyBudget caps model calls per UTC day; 0 is unlimited.
	DailyBudget int
	// StateFile keeps today's call count across restarts; required with a
	// DailyBudget. One file per shieldd process.
	StateFile string
	// MaxActionBytes caps the action arguments sent to the model; longer
	// arguments are cut with a marker. Default DefaultMaxActionBytes.
	MaxActionBytes int
	Logger         *slog.Logger
	// Now is the clock for the budget's day (tests); default time.Now.
	Now func() time.Time
}

// Evaluator is a Tier 2 evaluator; it implements pipeline.Evaluator and
// pipeline.Describer and is safe for concurrent use.
type Evaluator struct {
	provider      llm.Provider
	onUnavailable pb.VerdictDecision
	timeout       time.Duration
	maxArgs       int
	budget        *budget
	log           *slog.Logger
	// modelDown records that the last model call failed as unavailable
	// (timeout, network, 429, 5xx), for GetShieldStatus.llm_connected.
	modelDown atomic.Bool
}

var (
	_ pipeline.Evaluator = (*Evaluator)(nil)
	_ pipeline.Describer = (*Evaluator)(nil)
)

// ParseOnUnavailable reads an on_unavailable setting: "escalate" (also
// the empty string), "block" or "allow".
func ParseOnUnavailable(s string) (pb.VerdictDecision, error) {
	if strings.TrimSpace(s) == "" {
		return escalate, nil
	}
	if d, ok := pb.ParseDecision(s); ok {
		return d, nil
	}
	return 0, fmt.Errorf("on_unavailable %q: want escalate, block or allow", s)
}

// New builds an evaluator, checking its configuration and opening the
// budget's state file.
func New(cfg Config) (*Evaluator, error) {
	switch p := strings.ToLower(strings.TrimSpace(cfg.LLM.Provider)); p {
	case llm.ProviderOpenAI, llm.ProviderAnthropic:
	default:
		return nil, fmt.Errorf("evaluator provider %q: want openai or anthropic", cfg.LLM.Provider)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("evaluator timeout %v is negative", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	switch cfg.OnUnavailable {
	case pb.VerdictDecision_VERDICT_DECISION_UNSPECIFIED:
		cfg.OnUnavailable = escalate
	case allow, block, escalate:
	default:
		return nil, fmt.Errorf("evaluator on_unavailable %v: want ESCALATE, BLOCK or ALLOW", cfg.OnUnavailable)
	}
	if cfg.DailyBudget < 0 {
		return nil, fmt.Errorf("evaluator daily budget %d is negative (0 means unlimited)", cfg.DailyBudget)
	}
	if cfg.DailyBudget > 0 && cfg.StateFile == "" {
		return nil, fmt.Errorf("evaluator daily budget %d needs a state file to survive restarts (or a budget of 0 for unlimited)", cfg.DailyBudget)
	}
	if cfg.MaxActionBytes <= 0 {
		cfg.MaxActionBytes = DefaultMaxActionBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}

	lc := cfg.LLM
	lc.Timeout = cfg.Timeout
	if lc.MaxRetryWait <= 0 {
		lc.MaxRetryWait = cfg.Timeout / 2 // a longer Retry-After can't be honoured within the timeout
	}
	if lc.MaxResponseBytes <= 0 {
		lc.MaxResponseBytes = 1 << 20 // the answer is one small JSON object
	}
	noStream := false
	lc.Stream = &noStream
	provider, err := llm.New(lc)
	if err != nil {
		return nil, fmt.Errorf("evaluator: %w", err)
	}
	b, err := openBudget(cfg.DailyBudget, cfg.StateFile, cfg.Now, cfg.Logger)
	if err != nil {
		return nil, err
	}
	return &Evaluator{
		provider: provider, onUnavailable: cfg.OnUnavailable, timeout: cfg.Timeout,
		maxArgs: cfg.MaxActionBytes, budget: b, log: cfg.Logger,
	}, nil
}

// Describe names the provider and model, for GetShieldStatus.
func (e *Evaluator) Describe() (provider, model string) {
	return e.provider.Name(), e.provider.Model()
}

// Available reports whether the last model call got through: false once
// a call fails as unavailable (timeout, network error, 429, 5xx after the
// retries), true again once a call is answered or fails otherwise, and
// true before the first call.
func (e *Evaluator) Available() bool { return !e.modelDown.Load() }

// CallsToday is the number of model calls counted against today's budget
// (0 without a budget).
func (e *Evaluator) CallsToday() int { return e.budget.used() }

// Evaluate judges one action that the deterministic tiers sent to Tier 2.
// It returns an error only when ctx ends; every other failure is a
// verdict (see the package comment). transient marks the verdicts that
// were reached without the model's answer, which the pipeline does not
// cache.
func (e *Evaluator) Evaluate(ctx context.Context, a *action.Action, _ pipeline.Input, prior *pb.Verdict) (*pb.Verdict, bool, error) {
	// Tier 2 only decides what was sent to it: a BLOCK, or what must go
	// to a human, is never overturned (the pipeline does not send them).
	if prior.GetDecision() == block || prior.GetRequiredTier() > pipeline.TierEvaluator {
		return prior, false, nil
	}
	switch err := e.budget.reserve(); {
	case errors.Is(err, errBudgetSpent):
		return e.unavailable(prior, RuleBudget, "the daily call budget is spent"), true, nil
	case err != nil:
		return e.unavailable(prior, RuleBudget, "the call budget could not be recorded"), true, nil
	}

	canary := rand.Text() // 26 base32 characters: 130 random bits
	boundary := rand.Text()
	resp, err := e.provider.Complete(ctx, llm.Request{
		System:      systemPrompt(canary, boundary),
		Messages:    []llm.Message{{Role: llm.RoleUser, Content: userPrompt(a, prior, boundary, e.maxArgs)}},
		MaxTokens:   maxAnswerTokens,
		Temperature: new(0.0),
		JSON:        true, // OpenAI's json_object mode; Anthropic has none and is told in the prompt
	}, nil)
	if err != nil {
		return e.failed(ctx, a, prior, err)
	}
	e.modelDown.Store(false)
	ans, err := parseAnswer(resp.Text, canary)
	switch {
	case errors.Is(err, errNoCanary):
		e.log.Warn("tier 2: the model's answer did not carry the canary; blocking", "action_hash", prior.GetActionHash(), "action_type", a.Type)
		return e.verdict(prior, block, 1.0, RuleCanary,
			"the model's answer did not carry this call's canary, so the evaluator was likely manipulated by the action's content; blocked"), false, nil
	case err != nil:
		e.log.Warn("tier 2: unreadable answer; blocking", "action_hash", prior.GetActionHash(), "err", err)
		return e.verdict(prior, block, 1.0, RuleBadAnswer,
			fmt.Sprintf("the model's answer could not be read (%v); blocked", err)), false, nil
	}
	reason := ans.reason
	if reason == "" {
		reason = "(the model gave no reason)"
	}
	return e.verdict(prior, ans.decision, ans.confidence, RuleLLM, reason), false, nil
}

// failed turns a failed model call into a verdict.
func (e *Evaluator) failed(ctx context.Context, a *action.Action, prior *pb.Verdict, err error) (*pb.Verdict, bool, error) {
	var le *llm.Error
	if !errors.As(err, &le) {
		if ctx.Err() != nil {
			return nil, false, fmt.Errorf("tier 2 evaluation: %w", ctx.Err()) // the caller gave up
		}
		le = &llm.Error{Kind: errors.New("unexpected error"), Err: err}
	}
	e.log.Warn("tier 2: model call failed", "action_hash", prior.GetActionHash(), "action_type", a.Type, "err", err)
	what := describeFailure(le, e.timeout)
	down := errors.Is(le, llm.ErrRateLimited) || errors.Is(le, llm.ErrUnavailable)
	e.modelDown.Store(down)
	switch {
	case down:
		return e.unavailable(prior, RuleUnavailable, "the model is unavailable ("+what+")"), true, nil
	case errors.Is(le, llm.ErrBadResponse):
		return e.verdict(prior, block, 1.0, RuleBadAnswer, "the model's response could not be read ("+what+"); blocked"), true, nil
	}
	// Bad credentials, a refused request (e.g. a content filter the
	// action's text tripped) or anything unknown: never the operator's
	// on_unavailable, which may be ALLOW, since the action may have caused it.
	return e.verdict(prior, block, 1.0, RuleError, "the model call failed ("+what+"); blocked"), true, nil
}

// describeFailure says what went wrong in words fit for a verdict: the
// kind, status and attempts, not the provider's message (which is logged).
func describeFailure(le *llm.Error, timeout time.Duration) string {
	var b strings.Builder
	switch {
	case errors.Is(le, llm.ErrTimeout):
		fmt.Fprintf(&b, "no answer within %v", timeout)
	case le.Kind != nil:
		b.WriteString(le.Kind.Error())
	}
	if le.Status != 0 {
		fmt.Fprintf(&b, ", HTTP %d", le.Status)
	}
	if le.Attempts > 1 {
		fmt.Fprintf(&b, ", after %d attempts", le.Attempts)
	}
	return b.String()
}

// unavailable is the on_unavailable outcome, explained.
func (e *Evaluator) unavailable(prior *pb.Verdict, rule, why string) *pb.Verdict {
	var then string
	switch e.onUnavailable {
	case allow:
		then = "allowed because the operator set on_unavailable to allow"
	case block:
		then = "blocked (on_unavailable is block)"
	default:
		then = "a human must decide"
	}
	return e.verdict(prior, e.onUnavailable, 1.0, rule, why+"; "+then)
}

// verdict builds a Tier 2 verdict on top of the prior tiers' one: same
// action, findings kept, with one Tier 2 finding added.
func (e *Evaluator) verdict(prior *pb.Verdict, d pb.VerdictDecision, confidence float64, rule, reason string) *pb.Verdict {
	reason = ReasonPrefix + reason
	return &pb.Verdict{
		Decision: d, Tier: pipeline.TierEvaluator, Confidence: confidence, Reasoning: reason,
		ActionHash: prior.GetActionHash(), EvaluatedAt: prior.GetEvaluatedAt(), RuleIds: []string{rule},
		PolicyVersion: prior.GetPolicyVersion(), ActionType: prior.GetActionType(),
		RequiredTier: prior.GetRequiredTier(),
		Findings: append(slices.Clip(prior.GetFindings()), &pb.Finding{
			RuleId: rule, Category: "llm", Severity: d.Severity(), Outcome: d, Message: reason,
			Tier: pipeline.TierEvaluator,
		}),
	}
}
