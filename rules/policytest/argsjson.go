package policytest

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// maxArgsDepth bounds nesting in args; deeper structures belong in
// args_json, and the bound keeps the recursive walk safe on hostile input.
const maxArgsDepth = 64

// argsJSON converts an args mapping to a JSON object.
func (p *parser) argsJSON(n *yaml.Node) ([]byte, bool) {
	before := len(p.errs)
	v := p.jsonValue(n, 0)
	if len(p.errs) != before {
		return nil, false
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Keep <, > and & literal: payloads should read as an agent sends them.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		p.errorf(n, "args cannot be encoded as JSON: %v", err)
		return nil, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}

// jsonValue turns a YAML node into a value encoding/json can encode:
// map[string]any, []any, string, numbers, bool or nil.
func (p *parser) jsonValue(n *yaml.Node, depth int) any {
	if depth > maxArgsDepth {
		p.errorf(n, "args nest deeper than %d levels; use args_json", maxArgsDepth)
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		lines := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				p.errorf(k, "args keys must be scalars")
				continue
			}
			// Duplicate keys are a malformed request; test them with args_json.
			if first, dup := lines[k.Value]; dup {
				p.errorf(k, "duplicate key %q in args (first at line %d)", k.Value, first)
				continue
			}
			lines[k.Value] = k.Line
			m[k.Value] = p.jsonValue(v, depth+1)
		}
		return m
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, v := range n.Content {
			list = append(list, p.jsonValue(v, depth+1))
		}
		return list
	case yaml.ScalarNode:
		return p.scalar(n)
	case yaml.AliasNode:
		p.errorf(n, "YAML aliases are not supported in case files")
		return nil
	}
	p.errorf(n, "unexpected YAML node in args")
	return nil
}

func (p *parser) scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!str":
		return n.Value
	case "!!timestamp":
		// A date in args means the text as written, not a time value.
		return n.Value
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			p.errorf(n, "bad boolean %q", n.Value)
		}
		return b
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return u
		}
		p.errorf(n, "integer %q out of range; quote it or use args_json", n.Value)
		return nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			p.errorf(n, "number %q has no JSON form", n.Value)
			return nil
		}
		return f
	}
	p.errorf(n, "unsupported YAML tag %s in args; quote the value", strconv.Quote(n.ShortTag()))
	return nil
}
