package policy

import (
	"go.yaml.in/yaml/v3"

	"github.com/parapet-dev/parapet/rules/action"
)

// pathMatcher holds for one path when the path matches a `path:` pattern
// (any path if none is given), matches no `path_not:` pattern, and has one
// of the `access:` kinds (any if none is given).
type pathMatcher struct {
	include, exclude pathGlobs
	// access is a bit set of action.Access values; 0 admits every access.
	access uint8
	every  bool
}

func (m *pathMatcher) kind() string { return "path" }

func (m *pathMatcher) holdsFor(p *action.Path, home string) bool {
	if m.access != 0 && m.access&(1<<p.Access) == 0 {
		return false
	}
	if m.include != nil && !m.include.match(p, home) {
		return false
	}
	return !m.exclude.match(p, home)
}

func (m *pathMatcher) eval(st *evalState) (bool, string) {
	paths := st.act.Paths
	home := st.act.Caller.Home
	if m.every {
		if len(paths) == 0 {
			return false, ""
		}
		for i := range paths {
			if !m.holdsFor(&paths[i], home) {
				return false, paths[i].Abs
			}
		}
		return true, ""
	}
	for i := range paths {
		if m.holdsFor(&paths[i], home) {
			return true, paths[i].Abs
		}
	}
	return false, ""
}

var accessNames = map[string]action.Access{
	"read": action.AccessRead, "write": action.AccessWrite, "delete": action.AccessDelete,
	"exec": action.AccessExec, "unknown": action.AccessUnknown,
}

func (c *compiler) pathMatcher(label string, pathNode, notNode, accessNode *yaml.Node, every bool) *pathMatcher {
	m := &pathMatcher{every: every}
	globs := func(n *yaml.Node, key string) pathGlobs {
		var out pathGlobs
		for _, it := range c.ps.stringList(n, label, key) {
			g, err := compilePathGlob(it.value)
			if err != nil {
				c.ps.add(it.line, label, "%s: bad pattern %q: %v", key, it.value, err)
				continue
			}
			out = append(out, g)
		}
		return out
	}
	if pathNode != nil {
		m.include = globs(pathNode, "path")
	}
	if notNode != nil {
		m.exclude = globs(notNode, "path_not")
	}
	if accessNode != nil {
		for _, it := range c.ps.stringList(accessNode, label, "access") {
			a, ok := accessNames[it.value]
			if !ok {
				c.ps.add(it.line, label, "access: unknown access %q (use read, write, delete, exec or unknown)", it.value)
				continue
			}
			m.access |= 1 << a
		}
	}
	return m
}
