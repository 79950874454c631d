package heuristics

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/parapet-dev/parapet/internal/textcut"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/action"
)

// Analyzer runs the Tier 1 rules. It is immutable after New and safe for
// concurrent use.
type Analyzer struct {
	// outcome is each rule's effective outcome; ALLOW means disabled.
	outcome [numRules]pb.VerdictDecision
	trusted hostSet
	// allowedReads are Config.AllowSecretReads.
	allowedReads []string
}

// New validates cfg and builds an Analyzer. It fails on an unknown rule id,
// a malformed trusted-host pattern or an override outcome other than BLOCK,
// ESCALATE or ALLOW (ALLOW disables the rule).
func New(cfg Config) (*Analyzer, error) {
	a := &Analyzer{}
	for i := range rules {
		a.outcome[i] = rules[i].Outcome
	}
	for _, id := range cfg.Disabled {
		i, ok := ruleByID[id]
		if !ok {
			return nil, fmt.Errorf("heuristics: disabled rule %q is not a known rule id", id)
		}
		a.outcome[i] = allow
	}
	// Sorted so the error for several bad overrides is deterministic.
	ids := make([]string, 0, len(cfg.Overrides))
	for id := range cfg.Overrides {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		i, ok := ruleByID[id]
		if !ok {
			return nil, fmt.Errorf("heuristics: override for %q: not a known rule id", id)
		}
		switch o := cfg.Overrides[id]; o {
		case block, escalate:
			if a.outcome[i] != allow { // Disabled wins over an override.
				a.outcome[i] = o
			}
		case allow:
			a.outcome[i] = allow
		default:
			return nil, fmt.Errorf("heuristics: override for %q: outcome %s is not BLOCK, ESCALATE or ALLOW", id, o)
		}
	}
	for _, p := range cfg.AllowSecretReads {
		if err := CheckSecretReadPattern(p); err != nil {
			return nil, fmt.Errorf("heuristics: allowed secret read %q: %w", p, err)
		}
	}
	a.allowedReads = slices.Clone(cfg.AllowSecretReads)
	hs, err := newHostSet(cfg.TrustedHosts)
	if err != nil {
		return nil, err
	}
	a.trusted = hs
	return a, nil
}

// Analyze runs every enabled rule on act. The result is deterministic: one
// finding per rule id, BLOCK before ESCALATE, then higher severity first,
// then by rule id. A nil action, or a command without a parse, yields an
// "unanalysable" finding: what cannot be read is never silently allowed.
func (a *Analyzer) Analyze(act *action.Action) []Finding {
	return a.AnalyzeContext(context.Background(), act)
}

// AnalyzeContext is Analyze that stops early once ctx is done. What it
// returns then is incomplete: the caller must check ctx and refuse the
// action (the pipeline answers BLOCK), never treat it as a full analysis.
func (a *Analyzer) AnalyzeContext(ctx context.Context, act *action.Action) []Finding {
	return a.AnalyzeAppend(ctx, act, nil)
}

// AnalyzeAppend is AnalyzeContext writing the findings into dst's
// storage (dst[:0]), growing it when they do not fit: a caller done with
// the findings before its next analysis can lend one buffer to them all.
func (a *Analyzer) AnalyzeAppend(ctx context.Context, act *action.Action, dst []Finding) []Finding {
	s := scan{an: a, act: act, ctx: ctx, findings: dst[:0]}
	if act == nil {
		// Not subject to configuration: disabling a rule must never turn
		// "nothing to analyse" into an ALLOW.
		s.collectOnly = true
		s.add(rEvUnanalysable, "no action to analyse: refuse it and report the bug", "")
		return s.findings
	}
	s.run()
	if len(s.findings) > 1 {
		slices.SortFunc(s.findings, compareFindings)
	}
	return s.findings
}

func compareFindings(x, y Finding) int {
	if rx, ry := x.Outcome.Rank(), y.Outcome.Rank(); rx != ry {
		return ry - rx // most severe first
	}
	if x.Severity != y.Severity {
		return int(y.Severity) - int(x.Severity)
	}
	switch {
	case x.RuleID < y.RuleID:
		return -1
	case x.RuleID > y.RuleID:
		return 1
	}
	return 0
}

// scan is the state of one Analyze call.
type scan struct {
	an       *Analyzer
	act      *action.Action
	findings []Finding
	seen     [numRules]bool
	// collectOnly runs rules with their default outcomes whatever the
	// configuration, to judge a decoded layer (see checkDecodedLayers).
	collectOnly bool
	// nested counts how deep shell text inside shell text is being judged.
	nested int
	// ctx bounds the analysis (see expired).
	ctx context.Context
	// codeText and codeBits remember the codeMarkers of the last
	// written file's text: its web-shell and weakening checks share one
	// pass over it.
	codeText string
	codeBits uint32
}

// expired reports whether the analysis should stop: the request's
// deadline has passed or it was cancelled. Checked between rule groups
// and every few commands, so a stop comes within a fraction of the work.
func (s *scan) expired() bool {
	return s.ctx != nil && s.ctx.Err() != nil
}

// enabled reports whether rule r can still produce a finding.
func (s *scan) enabled(r ruleIndex) bool {
	return !s.seen[r] && (s.collectOnly || s.an.outcome[r] != allow)
}

// add records a finding for rule r unless the rule is disabled or already
// reported (the first occurrence wins).
func (s *scan) add(r ruleIndex, msg, evidence string) {
	if !s.enabled(r) {
		return
	}
	s.seen[r] = true
	rule := &rules[r]
	if cap(s.findings) == 0 {
		// Most actions that match at all match a few rules: one
		// allocation instead of growing 1, 2, 4.
		s.findings = make([]Finding, 0, 4)
	}
	s.findings = append(s.findings, Finding{
		RuleID:   rule.ID,
		Category: rule.Category,
		Severity: rule.Severity,
		Outcome:  s.outcome(r),
		Message:  textcut.Truncate(msg, maxMessage),
		Evidence: textcut.Cut(evidence, maxEvidence),
	})
}

func (s *scan) outcome(r ruleIndex) pb.VerdictDecision {
	if s.collectOnly {
		return rules[r].Outcome
	}
	return s.an.outcome[r]
}

// run dispatches on the action type.
func (s *scan) run() {
	act := s.act
	s.checkEvasions()
	if act.Type == "execute_command" {
		s.checkCommandAction()
	}
	if s.expired() {
		return
	}
	s.checkFilePaths()
	s.checkScriptWrites()
	s.checkHookWrites()
	s.checkSourceWrites()
	s.checkSecretWrites()
	s.checkCloudMetadata()
	s.checkOutbound()
	s.checkInjection()
	s.checkStandingExfil()
	s.checkEnvAssignments()
}

const maxEvidence = 120

// maxMessage bounds a finding's message. Messages quote what the action
// names (a path, a host, an argument) and the verdict's reasoning repeats
// them: unbounded, a path near the payload limit made a verdict of
// megabytes, on the wire and in the cache. The corpus's longest message
// is 280 bytes.
const maxMessage = 512

// evJoin joins args with spaces for a finding's evidence, stopping once
// the evidence is longer than add keeps: a rule matching each of thousands
// of arguments must not copy the whole line each time (quadratic work).
func evJoin(args []string) string {
	n := 0
	for i, a := range args {
		n += len(a) + 1
		if n > maxEvidence {
			args = args[:i+1]
			break
		}
	}
	s := strings.Join(args, " ")
	if len(s) > maxEvidence+1 {
		s = s[:maxEvidence+1] // add cuts it to a rune boundary
	}
	return s
}
