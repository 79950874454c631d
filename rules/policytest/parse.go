package policytest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/parapet-dev/parapet/rules/action"
)

// defaults are the file-level values every case inherits.
type defaults struct {
	category, kind string
	caller         action.Caller
}

// parser walks the YAML node tree by hand rather than decoding into
// structs: that way every error carries the line it is about, and unknown
// or duplicate keys (which yaml.v3 accepts when decoding into a Node) are
// rejected instead of silently ignored.
type parser struct {
	file string
	errs []error
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf("%s: %s", posString(p.file, n.Line), fmt.Sprintf(format, args...)))
}

func posString(file string, line int) string {
	if line <= 0 {
		return file
	}
	return file + ":" + strconv.Itoa(line)
}

// parseFile parses one case file; file is the name used in messages.
func parseFile(file string, data []byte) ([]Case, error) {
	p := &parser{file: file}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty case file", file)
		}
		return nil, p.yamlError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, p.yamlError(err)
		}
		return nil, fmt.Errorf("%s: only one YAML document per case file", posString(file, extra.Line))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%s: empty case file", file)
	}
	cases := p.parseRoot(doc.Content[0])
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return cases, nil
}

// yamlError rewrites "yaml: line N: msg" as "file:N: msg".
func (p *parser) yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				return fmt.Errorf("%s: %s", posString(p.file, n), tail)
			}
		}
	}
	return fmt.Errorf("%s: %s", p.file, msg)
}

func (p *parser) parseRoot(root *yaml.Node) []Case {
	m := p.mapping(root, "case file", "category", "kind", "caller", "cases")
	if m == nil {
		return nil
	}
	var def defaults
	if n := m["category"]; n != nil {
		def.category, _ = p.str(n, "category")
	}
	if n := m["kind"]; n != nil {
		def.kind = p.kind(n)
	}
	if n := m["caller"]; n != nil {
		p.caller(n, &def.caller)
	}
	list := m["cases"]
	if list == nil {
		p.errorf(root, "no cases: key")
		return nil
	}
	if list.Kind != yaml.SequenceNode {
		p.errorf(list, "cases must be a list, got %s", nodeKind(list))
		return nil
	}
	if len(list.Content) == 0 {
		p.errorf(list, "cases is empty")
		return nil
	}
	var cases []Case
	seen := make(map[string]int)
	for _, n := range list.Content {
		c, ok := p.parseCase(n, def)
		if !ok {
			continue
		}
		// Failure reports identify cases by name; two alike would be ambiguous.
		if first, dup := seen[c.Name]; dup {
			p.errorf(n, "duplicate case name %q (first at line %d)", c.Name, first)
			continue
		}
		seen[c.Name] = c.Line
		cases = append(cases, c)
	}
	return cases
}

func (p *parser) parseCase(n *yaml.Node, def defaults) (Case, bool) {
	before := len(p.errs)
	m := p.mapping(n, "case", "name", "category", "kind", "caller", "action", "expect", "rule", "min_tier", "network")
	if m == nil {
		return Case{}, false
	}
	c := Case{File: p.file, Line: n.Line, Category: def.category, Kind: def.kind}
	c.Request.Caller = def.caller

	if v := m["name"]; v == nil {
		p.errorf(n, "case has no name")
	} else if name, ok := p.str(v, "name"); ok {
		if strings.TrimSpace(name) == "" {
			p.errorf(v, "name is empty")
		}
		c.Name = name
	}
	if v := m["category"]; v != nil {
		c.Category, _ = p.str(v, "category")
	}
	if v := m["kind"]; v != nil {
		c.Kind = p.kind(v)
	}
	if c.Category == "" {
		p.errorf(n, "%s has no category (set category: in the file or the case)", caseLabel(c.Name))
	}
	if c.Kind == "" {
		p.errorf(n, "%s has no kind (set kind: attack or everyday in the file or the case)", caseLabel(c.Name))
	}
	if v := m["caller"]; v != nil {
		p.caller(v, &c.Request.Caller)
	}
	if v := m["expect"]; v == nil {
		p.errorf(n, "%s has no expect: (allow, block, escalate or error)", caseLabel(c.Name))
	} else if s, ok := p.str(v, "expect"); ok {
		switch s {
		case ExpectAllow, ExpectBlock, ExpectEscalate, ExpectError:
			c.Expect = s
		default:
			p.errorf(v, "expect must be allow, block, escalate or error, not %q", s)
		}
	}
	if v := m["action"]; v == nil {
		p.errorf(n, "%s has no action", caseLabel(c.Name))
	} else {
		p.action(v, &c)
	}
	if v := m["rule"]; v != nil {
		c.Rule, _ = p.str(v, "rule")
	}
	if v := m["min_tier"]; v != nil {
		c.MinTier = p.tier(v)
	}
	if v := m["network"]; v != nil {
		c.Network = p.ports(v)
	}
	return c, len(p.errs) == before
}

func caseLabel(name string) string {
	if name == "" {
		return "case"
	}
	return "case " + strconv.Quote(name)
}

func (p *parser) action(n *yaml.Node, c *Case) {
	m := p.mapping(n, "action", "type", "args", "args_json", "attachments")
	if m == nil {
		return
	}
	if v := m["type"]; v == nil {
		p.errorf(n, "action has no type")
	} else if s, ok := p.str(v, "action type"); ok {
		// An empty type is a malformed request worth testing, but only
		// deliberately: anywhere else it is a typo in the case file.
		if strings.TrimSpace(s) == "" && c.Expect != ExpectError {
			p.errorf(v, "action type is empty (allowed only with expect: error)")
		}
		c.Request.Type = s
	}
	args, raw := m["args"], m["args_json"]
	switch {
	case args != nil && raw != nil:
		p.errorf(raw, "action has both args and args_json; use one")
	case args != nil:
		if args.Kind != yaml.MappingNode {
			p.errorf(args, "args must be a mapping, got %s (use args_json for other JSON)", nodeKind(args))
			return
		}
		if b, ok := p.argsJSON(args); ok {
			c.Request.Payload = b
		}
	case raw != nil:
		if s, ok := p.str(raw, "args_json"); ok {
			c.Request.Payload = []byte(s)
		}
	}
	if v := m["attachments"]; v != nil {
		p.attachments(v, c)
	}
}

// attachments reads the files a caller attaches: a list of
// {path, content, unreadable}.
func (p *parser) attachments(n *yaml.Node, c *Case) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "attachments must be a list, got %s", nodeKind(n))
		return
	}
	for _, item := range n.Content {
		m := p.mapping(item, "attachment", "path", "content", "unreadable")
		if m == nil {
			continue
		}
		var at action.Attachment
		if v := m["path"]; v == nil {
			p.errorf(item, "attachment has no path")
		} else {
			at.Path, _ = p.str(v, "path")
		}
		if v := m["content"]; v != nil {
			at.Content, _ = p.str(v, "content")
		}
		if v := m["unreadable"]; v != nil {
			if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
				p.errorf(v, "unreadable must be true or false")
			} else {
				at.Unreadable = v.Value == "true"
			}
		}
		c.Request.Attachments = append(c.Request.Attachments, at)
	}
}

func (p *parser) kind(n *yaml.Node) string {
	s, ok := p.str(n, "kind")
	if !ok {
		return ""
	}
	if s != KindAttack && s != KindEveryday {
		p.errorf(n, "kind must be attack or everyday, not %q", s)
		return ""
	}
	return s
}

func (p *parser) tier(n *yaml.Node) int32 {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		p.errorf(n, "min_tier must be an integer 0..%d", MaxTier)
		return 0
	}
	t, err := strconv.ParseInt(n.Value, 10, 32)
	if err != nil || t < 0 || t > MaxTier {
		p.errorf(n, "min_tier must be an integer 0..%d, not %s", MaxTier, n.Value)
		return 0
	}
	return int32(t)
}

// caller sets the fields present in n; absent fields keep their value, so a
// case's caller is merged over the file's.
func (p *parser) caller(n *yaml.Node, c *action.Caller) {
	fields := map[string]*string{
		"tenant": &c.Tenant, "workspace_id": &c.WorkspaceID, "engine_id": &c.EngineID,
		"user_id": &c.UserID, "session_id": &c.SessionID, "agent_name": &c.AgentName,
		"workspace_root": &c.WorkspaceRoot, "home": &c.Home,
	}
	m := p.mapping(n, "caller", "tenant", "workspace_id", "engine_id", "user_id",
		"session_id", "agent_name", "workspace_root", "home")
	for k, v := range m {
		if s, ok := p.str(v, "caller."+k); ok {
			*fields[k] = s
		}
	}
}

// mapping checks that n is a mapping whose keys are all in allowed and
// unique, and returns the value nodes by key. It returns nil if n is not a
// mapping.
func (p *parser) mapping(n *yaml.Node, what string, allowed ...string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a mapping, got %s", what, nodeKind(n))
		return nil
	}
	m := make(map[string]*yaml.Node, len(n.Content)/2)
	keyLine := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "%s has a non-scalar key", what)
			continue
		}
		if !slices.Contains(allowed, k.Value) {
			p.errorf(k, "unknown key %q in %s (known: %s)", k.Value, what, strings.Join(allowed, ", "))
			continue
		}
		if first, dup := keyLine[k.Value]; dup {
			p.errorf(k, "duplicate key %q in %s (first at line %d)", k.Value, what, first)
			continue
		}
		if v.Kind == yaml.AliasNode {
			p.errorf(v, "YAML aliases are not supported in case files")
			continue
		}
		keyLine[k.Value] = k.Line
		m[k.Value] = v
	}
	return m
}

// str returns a scalar's text. Null (a key with no value) is not a string.
func (p *parser) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		p.errorf(n, "%s must be a string, got %s", what, nodeKind(n))
		return "", false
	}
	return n.Value, true
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing (null)"
		}
		return "the scalar " + strconv.Quote(truncate(n.Value, 40))
	}
	return "a document"
}

// truncate shortens s to at most n runes for messages.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}

// ports reads `network:`: `none` or a list of TCP ports.
func (p *parser) ports(n *yaml.Node) []uint32 {
	if n.Kind == yaml.ScalarNode && n.Value == "none" {
		return []uint32{}
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(n, "network must be none or a non-empty list of TCP ports")
		return nil
	}
	out := []uint32{}
	for _, c := range n.Content {
		v, err := strconv.ParseUint(c.Value, 10, 16)
		if c.Kind != yaml.ScalarNode || err != nil || v == 0 {
			p.errorf(c, "network: %q is not a TCP port", c.Value)
			continue
		}
		out = append(out, uint32(v))
	}
	slices.Sort(out)
	return out
}
