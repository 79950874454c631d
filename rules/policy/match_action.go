package policy

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/parapet-dev/parapet/rules/action"
)

// actionMatcher restricts a rule to action types. Names are resolved
// through action.ResolveType at load, so `bash` and `execute_command` are
// the same entry.
type actionMatcher struct {
	// all is set by "*": every type, known or not (deny/verify only; allow
	// rules never apply to unknown types through "*").
	all bool
	// types are canonical known types.
	types []string
	// custom are tool names outside the known set, written `custom:name`.
	custom []string
}

// covers reports whether the matcher admits type t.
func (m *actionMatcher) covers(t string) bool {
	return m.all || slices.Contains(m.types, t) || slices.Contains(m.custom, t)
}

// namesExplicitly reports whether t is listed by name, not through "*".
func (m *actionMatcher) namesExplicitly(t string) bool {
	return slices.Contains(m.types, t) || slices.Contains(m.custom, t)
}

func (m *actionMatcher) String() string {
	var parts []string
	if m.all {
		parts = append(parts, "*")
	}
	parts = append(parts, m.types...)
	for _, c := range m.custom {
		parts = append(parts, "custom:"+c)
	}
	return strings.Join(parts, ", ")
}

func (c *compiler) actionMatcher(label string, n *yaml.Node) *actionMatcher {
	m := &actionMatcher{}
	for _, it := range c.ps.stringList(n, label, "action") {
		v := strings.TrimSpace(it.value)
		switch {
		case v == "*":
			m.all = true
		case strings.HasPrefix(v, "custom:"):
			name := strings.TrimSpace(strings.TrimPrefix(v, "custom:"))
			t, known := action.ResolveType(name)
			switch {
			case t == "":
				c.ps.add(it.line, label, "action %q names no tool", v)
			case known:
				c.ps.add(it.line, label, "action %q is a known type (%s); list it without custom:", v, t)
			default:
				m.custom = appendUnique(m.custom, t)
			}
		default:
			t, known := action.ResolveType(v)
			if !known {
				c.ps.add(it.line, label, "unknown action type %q (write custom:%s for a tool outside the known set)", v, v)
				continue
			}
			m.types = appendUnique(m.types, t)
		}
	}
	return m
}

func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
