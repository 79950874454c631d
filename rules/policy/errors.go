package policy

import (
	"fmt"
	"strings"
)

// LoadError lists every problem found while loading a policy. A policy
// with any problem does not load: a half-understood policy is not enforced.
type LoadError struct {
	Problems []Problem
}

// Error returns one "file:line: message" line per problem.
func (e *LoadError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Problem is one thing wrong with a policy file.
type Problem struct {
	File string
	// Line is 1-based; 0 when the problem has no position.
	Line int
	// Rule is the rule id, "deny[2]" style when the rule has no id, or ""
	// outside rules.
	Rule string
	Msg  string
}

// String renders "file:line: rule <id>: msg", without the rule part
// outside rules.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Rule != "" {
		b.WriteString("rule ")
		b.WriteString(p.Rule)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}
