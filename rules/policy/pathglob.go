package policy

import (
	"errors"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/parapet-dev/parapet/rules/action"
)

// pathAnchor says what a path pattern is relative to.
type pathAnchor uint8

const (
	anchorAbs       pathAnchor = iota // "/etc/**": Path.Abs
	anchorHome                        // "~/.ssh/**": the caller's home
	anchorWorkspace                   // "src/**", "$WORKSPACE/**": Path.Rel
)

// pathGlob is one compiled path pattern.
type pathGlob struct {
	anchor pathAnchor
	// pattern is the doublestar pattern for the anchored part: the whole
	// absolute path, the home-relative rest ("/.ssh/**"), or the
	// workspace-relative path.
	pattern string
	// Fast forms, so the common patterns need no doublestar call.
	kind   globKind
	prefix string // kindExact: the literal; kindTree: the literal directory
	// needs are literal runs every matching path contains, checked before
	// the doublestar call: "/home/*/.ssh/**" needs "home" and ".ssh".
	needs []string
}

type globKind uint8

const (
	kindGlob  globKind = iota // general doublestar pattern
	kindExact                 // no metacharacters
	kindTree                  // "<literal>/**": the directory and everything below
	kindAll                   // "**": everything under the anchor
)

// compilePathGlob parses a path pattern as written in a policy.
func compilePathGlob(raw string) (pathGlob, error) {
	p := strings.TrimSpace(raw)
	if p == "" {
		return pathGlob{}, errors.New("empty path pattern")
	}
	if !utf8.ValidString(p) {
		return pathGlob{}, errors.New("pattern is not valid UTF-8")
	}
	var g pathGlob
	switch {
	case p == "$WORKSPACE" || strings.HasPrefix(p, "$WORKSPACE/"):
		g.anchor = anchorWorkspace
		p = strings.TrimPrefix(strings.TrimPrefix(p, "$WORKSPACE"), "/")
		if p == "" {
			p = "."
		}
	case strings.HasPrefix(p, "$"):
		return pathGlob{}, errors.New("only $WORKSPACE may start a path pattern")
	case strings.HasPrefix(p, "/"):
		g.anchor = anchorAbs
	case p == "~" || strings.HasPrefix(p, "~/"):
		g.anchor = anchorHome
		// Matched against what follows the home directory, "/" for home itself.
		p = "/" + strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")
	case strings.HasPrefix(p, "~"):
		return pathGlob{}, errors.New("~user patterns are not supported; write the absolute path")
	default:
		g.anchor = anchorWorkspace
	}
	p = path.Clean(p)
	if g.anchor == anchorWorkspace && (p == ".." || strings.HasPrefix(p, "../")) {
		return pathGlob{}, errors.New("a workspace pattern cannot leave the workspace; use an absolute or ~/ pattern")
	}
	if !doublestar.ValidatePattern(p) {
		return pathGlob{}, errors.New("invalid glob")
	}
	g.pattern = p
	meta := func(s string) bool { return strings.ContainsAny(s, `*?[{\`) }
	switch {
	case p == "**" || p == "/**":
		g.kind = kindAll
	case !meta(p):
		g.kind, g.prefix = kindExact, p
	case strings.HasSuffix(p, "/**") && !meta(p[:len(p)-3]):
		g.kind, g.prefix = kindTree, p[:len(p)-3]
	case !strings.ContainsAny(p, `[{\`):
		// With only * and ? as metacharacters, every literal run appears
		// in a match ("/" trimmed: "a/**/b" also matches "a/b").
		for _, run := range strings.FieldsFunc(p, func(r rune) bool { return r == '*' || r == '?' }) {
			if run = strings.Trim(run, "/"); run != "" {
				g.needs = append(g.needs, run)
			}
		}
	}
	return g, nil
}

// match reports whether the pattern covers p for a caller whose home is
// home (already cleaned by canonicalisation; may be "").
func (g *pathGlob) match(p *action.Path, home string) bool {
	var subject string
	switch g.anchor {
	case anchorWorkspace:
		if !p.InWorkspace {
			return false
		}
		subject = p.Rel
	case anchorAbs:
		subject = p.Abs
		if !strings.HasPrefix(subject, "/") {
			return false
		}
	case anchorHome:
		rest, ok := homeRest(p.Abs, home)
		if !ok {
			return false
		}
		subject = rest
	}
	switch g.kind {
	case kindAll:
		return true
	case kindExact:
		return subject == g.prefix
	case kindTree:
		return subject == g.prefix || (len(subject) > len(g.prefix) &&
			subject[len(g.prefix)] == '/' && strings.HasPrefix(subject, g.prefix))
	}
	for _, n := range g.needs {
		if !strings.Contains(subject, n) {
			return false
		}
	}
	return doublestar.MatchUnvalidated(g.pattern, subject)
}

// homeRest returns abs relative to the caller's home as "/rest" ("/" for
// home itself). When the caller gave no home, canonicalisation keeps a
// literal "~" prefix, which is matched instead.
func homeRest(abs, home string) (string, bool) {
	if home != "" && home != "/" && strings.HasPrefix(abs, home) {
		rest := abs[len(home):]
		if rest == "" {
			return "/", true
		}
		if rest[0] == '/' {
			return rest, true
		}
	}
	if abs == "~" {
		return "/", true
	}
	if strings.HasPrefix(abs, "~/") {
		return abs[1:], true
	}
	return "", false
}

// pathGlobs is an OR list of path patterns.
type pathGlobs []pathGlob

func (gs pathGlobs) match(p *action.Path, home string) bool {
	for i := range gs {
		if gs[i].match(p, home) {
			return true
		}
	}
	return false
}
