package openparallaxv1

import "strings"

// The decision vocabulary, spelled once. Every package that names, ranks
// or parses a verdict's decision uses these, so that "an unset decision is
// a BLOCK" holds everywhere by construction rather than by a dozen
// switch statements that each remember it.

// Effective is the decision to act on: ALLOW and ESCALATE as they are,
// everything else — BLOCK, UNSPECIFIED, a number no enum value has — is
// BLOCK. An unset decision must never read as ALLOW.
func (d VerdictDecision) Effective() VerdictDecision {
	switch d {
	case VerdictDecision_VERDICT_DECISION_ALLOW, VerdictDecision_VERDICT_DECISION_ESCALATE:
		return d
	}
	return VerdictDecision_VERDICT_DECISION_BLOCK
}

// Decided reports whether d is one of the three decisions a verdict may
// carry. A verdict that is not Decided is an error of whoever produced it.
func (d VerdictDecision) Decided() bool {
	switch d {
	case VerdictDecision_VERDICT_DECISION_ALLOW, VerdictDecision_VERDICT_DECISION_BLOCK, VerdictDecision_VERDICT_DECISION_ESCALATE:
		return true
	}
	return false
}

// Rank orders decisions by severity, BLOCK (2) > ESCALATE (1) > ALLOW (0);
// an undecided value ranks as BLOCK.
func (d VerdictDecision) Rank() int {
	switch d.Effective() {
	case VerdictDecision_VERDICT_DECISION_ALLOW:
		return 0
	case VerdictDecision_VERDICT_DECISION_ESCALATE:
		return 1
	}
	return 2
}

// Stricter returns the more severe of d and o.
func (d VerdictDecision) Stricter(o VerdictDecision) VerdictDecision {
	if o.Rank() > d.Rank() {
		return o.Effective()
	}
	return d.Effective()
}

// Word is the lower-case name used in policies, metrics labels, audit
// records and JSON output: "allow", "block" or "escalate". An undecided
// value is "block" (see Effective); use Label to show it as it is.
func (d VerdictDecision) Word() string {
	switch d.Effective() {
	case VerdictDecision_VERDICT_DECISION_ALLOW:
		return "allow"
	case VerdictDecision_VERDICT_DECISION_ESCALATE:
		return "escalate"
	}
	return "block"
}

// Label is the upper-case name shown to people: "ALLOW", "BLOCK",
// "ESCALATE", and "UNSPECIFIED" for an unset value (a display must not
// hide that the verdict was broken, even though it acts as BLOCK).
func (d VerdictDecision) Label() string {
	if !d.Decided() {
		return "UNSPECIFIED"
	}
	return strings.ToUpper(d.Word())
}

// ParseDecision reads "allow", "block" or "escalate" in any case, with
// surrounding space; anything else is not a decision.
func ParseDecision(s string) (VerdictDecision, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "allow":
		return VerdictDecision_VERDICT_DECISION_ALLOW, true
	case "block":
		return VerdictDecision_VERDICT_DECISION_BLOCK, true
	case "escalate":
		return VerdictDecision_VERDICT_DECISION_ESCALATE, true
	}
	return VerdictDecision_VERDICT_DECISION_UNSPECIFIED, false
}

// Severity is the finding severity a decision implies when its producer
// has no finer measure (policy rules, the LLM evaluator): BLOCK is HIGH,
// ESCALATE MEDIUM, ALLOW LOW.
func (d VerdictDecision) Severity() Severity {
	switch d.Effective() {
	case VerdictDecision_VERDICT_DECISION_ALLOW:
		return Severity_SEVERITY_LOW
	case VerdictDecision_VERDICT_DECISION_ESCALATE:
		return Severity_SEVERITY_MEDIUM
	}
	return Severity_SEVERITY_HIGH
}

// Label is the severity's upper-case name without the enum prefix: "LOW",
// "MEDIUM", "HIGH", "CRITICAL" or "UNSPECIFIED".
func (s Severity) Label() string {
	return strings.TrimPrefix(s.String(), "SEVERITY_")
}

// The outcomes of an escalation, as recorded in the audit log and the
// session store and reported through ReportOutcome.
const (
	OutcomeApproved    = "approved"
	OutcomeDenied      = "denied"
	OutcomeTimeout     = "timeout"
	OutcomeCancelled   = "cancelled"
	OutcomeRateLimited = "rate_limited"
)

// ParseOutcome reads an escalation outcome, accepting the spellings
// callers use ("timed_out", "canceled", any case); ok is false for
// anything else.
func ParseOutcome(s string) (outcome string, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "approved":
		return OutcomeApproved, true
	case "denied":
		return OutcomeDenied, true
	case "timeout", "timed_out":
		return OutcomeTimeout, true
	case "cancelled", "canceled":
		return OutcomeCancelled, true
	case "rate_limited":
		return OutcomeRateLimited, true
	}
	return "", false
}
