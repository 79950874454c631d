package policy

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The loader walks yaml.Node trees itself rather than decoding into
// structs: Node.Decode silently ignores unknown keys, and a typo such as
// `dney:` must never turn a deny section into nothing.

// problems collects every problem in a file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(line int, rule, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Rule: rule, Msg: fmt.Sprintf(format, args...)})
}

// keyValue is one entry of a mapping node.
type keyValue struct {
	key   string
	line  int
	value *yaml.Node
}

// entries returns a mapping's entries, reporting non-scalar and duplicate
// keys. where names the mapping in messages ("match", "the policy").
func (ps *problems) entries(n *yaml.Node, rule, where string) []keyValue {
	if n.Kind != yaml.MappingNode {
		ps.add(n.Line, rule, "%s must be a mapping, got %s", where, kindName(n))
		return nil
	}
	out := make([]keyValue, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			ps.add(k.Line, rule, "%s has a key that is not a plain string", where)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			ps.add(k.Line, rule, "duplicate key %q in %s (first at line %d)", k.Value, where, first)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, keyValue{key: k.Value, line: k.Line, value: v})
	}
	return out
}

// checkKeys reports every key not in allowed.
func (ps *problems) checkKeys(kvs []keyValue, allowed []string, rule, where string) {
	for _, kv := range kvs {
		if !slices.Contains(allowed, kv.key) {
			ps.add(kv.line, rule, "unknown key %q in %s (allowed: %s)", kv.key, where, strings.Join(allowed, ", "))
		}
	}
}

// scalar returns a scalar node's value.
func (ps *problems) scalar(n *yaml.Node, rule, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		ps.add(n.Line, rule, "%s must be a single value, got %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

// listItem is one string of a list with its line.
type listItem struct {
	value string
	line  int
}

// stringList accepts a scalar or a sequence of scalars. An empty list is
// a problem: a matcher that lists nothing would silently match nothing
// (or, in an exclusion, everything).
func (ps *problems) stringList(n *yaml.Node, rule, what string) []listItem {
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			ps.add(n.Line, rule, "%s is empty", what)
			return nil
		}
		return []listItem{{n.Value, n.Line}}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			ps.add(n.Line, rule, "%s is empty", what)
			return nil
		}
		out := make([]listItem, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Tag == "!!null" {
				ps.add(c.Line, rule, "%s entries must be strings, got %s", what, kindName(c))
				continue
			}
			out = append(out, listItem{c.Value, c.Line})
		}
		return out
	}
	ps.add(n.Line, rule, "%s must be a string or a list of strings, got %s", what, kindName(n))
	return nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "something else"
}

// rejectAnchors reports anchors and aliases anywhere in the tree. A policy
// must read the same to a reviewer as to the loader, and aliases also open
// the door to exponential expansion.
func (ps *problems) rejectAnchors(n *yaml.Node) {
	if n == nil {
		return
	}
	if n.Kind == yaml.AliasNode {
		ps.add(n.Line, "", "YAML aliases (*name) are not supported in policies")
		return
	}
	if n.Anchor != "" {
		ps.add(n.Line, "", "YAML anchors (&name) are not supported in policies")
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Tag == "!!merge" {
				ps.add(n.Content[i].Line, "", "YAML merge keys (<<) are not supported in policies")
			}
		}
	}
	for _, c := range n.Content {
		ps.rejectAnchors(c)
	}
}
