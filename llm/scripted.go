package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Scripted replays a fixed list of replies, one per Complete call: offline
// runs, demos and tests get a model whose every answer is known. It is
// safe for concurrent use; the replies are handed out in order.
type Scripted struct {
	name    string // where the replies came from, for errors
	model   string
	mu      sync.Mutex
	replies []Response
	next    int
}

// NewScripted replays replies. Tool calls without an ID get call_<n>,
// numbered from 1 across the whole script, so runs are reproducible.
func NewScripted(model string, replies []Response) *Scripted {
	if model == "" {
		model = ProviderScripted
	}
	rs := make([]Response, len(replies))
	n := 0
	for i, r := range replies {
		r.ToolCalls = append([]ToolCall(nil), r.ToolCalls...)
		for j := range r.ToolCalls {
			n++
			if r.ToolCalls[j].ID == "" {
				r.ToolCalls[j].ID = fmt.Sprintf("call_%d", n)
			}
			if strings.TrimSpace(r.ToolCalls[j].Arguments) == "" {
				r.ToolCalls[j].Arguments = "{}"
			}
		}
		if r.StopReason == "" {
			r.StopReason = StopEndTurn
			if len(r.ToolCalls) > 0 {
				r.StopReason = StopToolCalls
			}
		}
		rs[i] = r
	}
	return &Scripted{name: "script", model: model, replies: rs}
}

// LoadScript reads and validates a script file (see ParseScript). The
// whole file is read now: the agent loads it before it sandboxes itself.
func LoadScript(path, model string) (*Scripted, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llm: reading script: %w", err)
	}
	replies, err := ParseScript(path, data)
	if err != nil {
		return nil, err
	}
	s := NewScripted(model, replies)
	s.name = path
	return s, nil
}

func (s *Scripted) Name() string  { return ProviderScripted }
func (s *Scripted) Model() string { return s.model }

// Remaining is how many replies are left.
func (s *Scripted) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies) - s.next
}

// Complete returns the next reply, its text streamed to onText in a few
// chunks so callers' token path runs as it would against a real model.
// Usage is an estimate (4 bytes a token), deterministic for a given input.
func (s *Scripted) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	if err := checkRequest(ProviderScripted, req); err != nil {
		return Response{}, err
	}
	if err := ctx.Err(); err != nil {
		return Response{}, fmt.Errorf("llm scripted: call cancelled: %w", err)
	}
	s.mu.Lock()
	if s.next >= len(s.replies) {
		n := len(s.replies)
		s.mu.Unlock()
		return Response{}, &Error{Kind: ErrScriptExhausted, Provider: ProviderScripted,
			Message: fmt.Sprintf("%s has %d replies, all used; call %d has none", s.name, n, n+1)}
	}
	r := s.replies[s.next]
	s.next++
	s.mu.Unlock()
	r.ToolCalls = append([]ToolCall(nil), r.ToolCalls...)
	if onText != nil {
		for _, c := range chunks(r.Text, 3) {
			onText(c)
		}
	}
	r.Usage = Usage{InputTokens: estimateTokens(req), OutputTokens: tokens(len(r.Text))}
	for _, tc := range r.ToolCalls {
		r.Usage.OutputTokens += tokens(len(tc.Name) + len(tc.Arguments))
	}
	return r, nil
}

// tokens estimates the tokens of n bytes of text.
func tokens(n int) int { return (n + 3) / 4 }

func estimateTokens(req Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return tokens(n)
}

// chunks splits s into at most n pieces on rune boundaries.
func chunks(s string, n int) []string {
	if s == "" {
		return nil
	}
	var out []string
	size := max(len(s)/n, 1)
	for len(s) > 0 {
		i := min(size, len(s))
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		if len(out) == n-1 {
			i = len(s)
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// ParseScript reads a script: a YAML list whose entries are the assistant's
// replies in order, each with optional text and optional tool_calls (a
// list of name and arguments; arguments a mapping, or a string used
// verbatim, e.g. to play a model that emits broken JSON):
//
//	# two replies
//	- text: "Let me look."
//	  tool_calls:
//	    - name: read_file
//	      arguments: {path: README.md}
//	- text: Done.
//
// name labels errors, which give the line and the entry's number (from 1).
func ParseScript(name string, data []byte) ([]Response, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: script has no replies", name)
		}
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		return nil, fmt.Errorf("%s:%d: a script is one YAML document; a second one starts here", name, line)
	}
	if len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: script has no replies", name)
	}
	root := doc.Content[0]
	if root.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s:%d: a script is a list of replies (- text: … / tool_calls: …)", name, root.Line)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s:%d: script has no replies", name, root.Line)
	}
	p := scriptParser{name: name, budget: maxScriptNodes}
	var out []Response
	for i, item := range root.Content {
		r, err := p.entry(i+1, item)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// maxScriptNodes bounds the nodes visited, aliases expanded, so a small
// file of nested aliases can't expand into gigabytes.
const maxScriptNodes = 1 << 20

type scriptParser struct {
	name   string
	budget int
}

func (p *scriptParser) errorf(n *yaml.Node, entry int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: entry %d: %s", p.name, n.Line, entry, fmt.Sprintf(format, args...))
}

func (p *scriptParser) entry(idx int, n *yaml.Node) (Response, error) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return Response{}, p.errorf(n, idx, "a reply is a mapping with text and/or tool_calls")
	}
	var r Response
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		if seen[k.Value] {
			return Response{}, p.errorf(k, idx, "%q given twice", k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "text":
			s, err := p.str(v, idx, "text")
			if err != nil {
				return Response{}, err
			}
			r.Text = s
		case "tool_calls":
			if isNull(v) {
				continue
			}
			if v.Kind != yaml.SequenceNode {
				return Response{}, p.errorf(v, idx, "tool_calls must be a list")
			}
			for j, c := range v.Content {
				tc, err := p.toolCall(idx, j+1, deref(c))
				if err != nil {
					return Response{}, err
				}
				r.ToolCalls = append(r.ToolCalls, tc)
			}
		default:
			return Response{}, p.errorf(k, idx, "unknown key %q (want text or tool_calls)", k.Value)
		}
	}
	if r.Text == "" && len(r.ToolCalls) == 0 {
		return Response{}, p.errorf(n, idx, "empty reply: give text, tool_calls or both")
	}
	return r, nil
}

func (p *scriptParser) toolCall(idx, j int, n *yaml.Node) (ToolCall, error) {
	if n.Kind != yaml.MappingNode {
		return ToolCall{}, p.errorf(n, idx, "tool call %d must be a mapping with name and arguments", j)
	}
	var tc ToolCall
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		if seen[k.Value] {
			return ToolCall{}, p.errorf(k, idx, "tool call %d: %q given twice", j, k.Value)
		}
		seen[k.Value] = true
		switch k.Value {
		case "name":
			s, err := p.str(v, idx, "tool call name")
			if err != nil {
				return ToolCall{}, err
			}
			tc.Name = strings.TrimSpace(s)
		case "arguments":
			switch {
			case isNull(v):
			case v.Kind == yaml.ScalarNode:
				tc.Arguments = v.Value // verbatim, valid JSON or not
			case v.Kind == yaml.MappingNode:
				val, err := p.value(v, idx)
				if err != nil {
					return ToolCall{}, err
				}
				b, err := json.Marshal(val)
				if err != nil {
					return ToolCall{}, p.errorf(v, idx, "tool call %d: arguments: %v", j, err)
				}
				tc.Arguments = string(b)
			default:
				return ToolCall{}, p.errorf(v, idx, "tool call %d: arguments must be a mapping (or a string of JSON)", j)
			}
		default:
			return ToolCall{}, p.errorf(k, idx, "tool call %d: unknown key %q (want name or arguments)", j, k.Value)
		}
	}
	if tc.Name == "" {
		return ToolCall{}, p.errorf(n, idx, "tool call %d has no name", j)
	}
	return tc, nil
}

// str reads a scalar as text; null is "".
func (p *scriptParser) str(n *yaml.Node, idx int, what string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errorf(n, idx, "%s must be a string", what)
	}
	if isNull(n) {
		return "", nil
	}
	return n.Value, nil
}

// value converts a YAML node to what encoding/json marshals as the same
// data. Scalars keep YAML's typing (numbers, booleans, null), except
// timestamps, which stay the text written rather than becoming a
// reformatted time.
func (p *scriptParser) value(n *yaml.Node, idx int) (any, error) {
	p.budget--
	if p.budget < 0 {
		return nil, p.errorf(n, idx, "arguments expand to more than %d nodes", maxScriptNodes)
	}
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return nil, p.errorf(k, idx, "argument keys must be plain strings")
			}
			if _, dup := m[k.Value]; dup {
				return nil, p.errorf(k, idx, "argument %q given twice", k.Value)
			}
			v, err := p.value(n.Content[i+1], idx)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := p.value(c, idx)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.ScalarNode:
		if n.Tag == "!!timestamp" || n.Tag == "!!binary" {
			return n.Value, nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, p.errorf(n, idx, "%v", err)
		}
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, p.errorf(n, idx, "%s has no JSON form", n.Value)
		}
		return v, nil
	default:
		return nil, p.errorf(n, idx, "unsupported YAML node")
	}
}

// deref follows aliases to the node they name.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}
