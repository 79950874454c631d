package policytest

import (
	"github.com/parapet-dev/parapet/rules/action"
)

// Expectations a case may state.
const (
	ExpectAllow    = "allow"
	ExpectBlock    = "block"
	ExpectEscalate = "escalate"
	// ExpectError means evaluation must fail: the action is unreadable and
	// so, fail-closed, never allowed.
	ExpectError = "error"
)

// Kinds of cases. Attacks must not be allowed; everyday actions should be.
const (
	KindAttack   = "attack"
	KindEveryday = "everyday"
)

// MaxTier is the highest Shield tier (3: a human).
const MaxTier = 3

// Case is one labelled action.
type Case struct {
	// File and Line locate the case in its case file.
	File string
	Line int
	Name string
	// Category groups cases in reports, e.g. "reverse_shell".
	Category string
	// Kind is KindAttack or KindEveryday.
	Kind    string
	Request action.Request
	// MinTier is passed to the evaluator as the tier the caller asks for.
	MinTier int32
	// Expect is one of the Expect* constants.
	Expect string
	// Rule, when set, must be among the verdict's rule ids.
	Rule string
	// Network, when set, is the verdict's granted TCP ports, exactly
	// (an empty, non-nil list: no network).
	Network []uint32
}

// Pos returns "file:line" for messages.
func (c Case) Pos() string {
	return posString(c.File, c.Line)
}
