package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// kind is the JSON type of one argument. The subset is deliberately small:
// every tool argument is one of these, so the validator can be exact.
type kind int

const (
	kString kind = iota
	kInteger
	kBoolean
	kStringArray // array of strings
	kStringMap   // object whose values are all strings (HTTP headers)
)

// prop describes one argument. The JSON Schema sent to the model and the
// validator are both derived from it, so they cannot disagree.
type prop struct {
	name     string
	kind     kind
	desc     string
	required bool
	enum     []string // strings, or items of a string array
	upper    bool     // compare and store the string upper-cased (HTTP methods)
	min, max int64    // integers; checked when hasMin / hasMax
	hasMin   bool
	hasMax   bool
	nonEmpty bool // strings: at least one character; arrays: at least one item
	allowNUL bool // file contents may hold NUL; names, paths and commands may not
}

// schemaJSON renders props as a JSON Schema (draft 2020-12 subset).
func schemaJSON(props []prop) json.RawMessage {
	properties := make(map[string]any, len(props))
	required := []string{}
	for _, p := range props {
		s := map[string]any{"description": p.desc}
		switch p.kind {
		case kString:
			s["type"] = "string"
			if len(p.enum) > 0 {
				s["enum"] = p.enum
			}
			if p.nonEmpty {
				s["minLength"] = 1
			}
		case kInteger:
			s["type"] = "integer"
			if p.hasMin {
				s["minimum"] = p.min
			}
			if p.hasMax {
				s["maximum"] = p.max
			}
		case kBoolean:
			s["type"] = "boolean"
		case kStringArray:
			items := map[string]any{"type": "string"}
			if len(p.enum) > 0 {
				items["enum"] = p.enum
			}
			s["type"] = "array"
			s["items"] = items
			if p.nonEmpty {
				s["minItems"] = 1
			}
		case kStringMap:
			s["type"] = "object"
			s["additionalProperties"] = map[string]any{"type": "string"}
		}
		properties[p.name] = s
		if p.required {
			required = append(required, p.name)
		}
	}
	doc := map[string]any{
		"type":                 "object",
		"properties":           properties,
		"required":             required,
		"additionalProperties": false,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic("tools: schema does not marshal: " + err.Error()) // static data
	}
	return b
}

// args holds validated arguments with Go types: string, int64, bool,
// []string or map[string]string. Absent optional arguments are absent.
type args map[string]any

func (a args) str(name string) string {
	s, _ := a[name].(string)
	return s
}

func (a args) has(name string) bool {
	_, ok := a[name]
	return ok
}

func (a args) integer(name string, def int64) int64 {
	if v, ok := a[name].(int64); ok {
		return v
	}
	return def
}

func (a args) boolean(name string) bool {
	b, _ := a[name].(bool)
	return b
}

func (a args) strs(name string) []string {
	s, _ := a[name].([]string)
	return s
}

func (a args) strMap(name string) map[string]string {
	m, _ := a[name].(map[string]string)
	return m
}

// maxArgsBytes bounds the argument document before any parsing.
const maxArgsBytes = 32 << 20

// parseArgs validates data against props and returns the typed arguments.
// Unknown names, duplicate names, wrong types, missing required arguments,
// invalid UTF-8 and trailing data are all errors naming what is wrong.
// An empty document means {}; null for an optional argument means absent.
func parseArgs(props []prop, data []byte) (args, error) {
	if len(data) > maxArgsBytes {
		return nil, fmt.Errorf("arguments are %d bytes, more than the %d allowed", len(data), maxArgsBytes)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		data = []byte("{}")
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data)) // rejects duplicate names and invalid UTF-8
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if tok.Kind() != '{' {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", kindName(tok.Kind()))
	}
	out := args{}
	for dec.PeekKind() == '"' {
		nameTok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		name := nameTok.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		i := slices.IndexFunc(props, func(p prop) bool { return p.name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown argument %q (allowed: %s)", name, propNames(props))
		}
		p := props[i]
		if val.Kind() == 'n' {
			if p.required {
				return nil, fmt.Errorf("argument %q is required and cannot be null", name)
			}
			continue
		}
		v, err := p.decode(val)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return nil, errors.New("arguments are not valid JSON: unexpected data after the object")
	}
	for _, p := range props {
		if p.required && !out.has(p.name) {
			return nil, fmt.Errorf("missing required argument %q", p.name)
		}
	}
	return out, nil
}

func (p prop) decode(val jsontext.Value) (any, error) {
	switch p.kind {
	case kString:
		s, err := p.str(p.name, val)
		if err != nil {
			return nil, err
		}
		return s, nil
	case kInteger:
		if val.Kind() != '0' {
			return nil, fmt.Errorf("argument %q: expected an integer, got %s", p.name, kindName(val.Kind()))
		}
		n, err := parseInteger(string(val))
		if err != nil {
			return nil, fmt.Errorf("argument %q: expected an integer, got %s", p.name, val)
		}
		if p.hasMin && n < p.min {
			return nil, fmt.Errorf("argument %q must be at least %d, got %d", p.name, p.min, n)
		}
		if p.hasMax && n > p.max {
			return nil, fmt.Errorf("argument %q must be at most %d, got %d", p.name, p.max, n)
		}
		return n, nil
	case kBoolean:
		switch val.Kind() {
		case 't':
			return true, nil
		case 'f':
			return false, nil
		}
		return nil, fmt.Errorf("argument %q: expected a boolean (true or false), got %s", p.name, kindName(val.Kind()))
	case kStringArray:
		if val.Kind() != '[' {
			return nil, fmt.Errorf("argument %q: expected an array of strings, got %s", p.name, kindName(val.Kind()))
		}
		var items []jsontext.Value
		if err := jsonv2.Unmarshal(val, &items); err != nil {
			return nil, fmt.Errorf("argument %q: %v", p.name, err)
		}
		if p.nonEmpty && len(items) == 0 {
			return nil, fmt.Errorf("argument %q must hold at least one item", p.name)
		}
		out := make([]string, len(items))
		for i, item := range items {
			s, err := p.str(fmt.Sprintf("%s[%d]", p.name, i), item)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case kStringMap:
		if val.Kind() != '{' {
			return nil, fmt.Errorf("argument %q: expected an object with string values, got %s", p.name, kindName(val.Kind()))
		}
		var items map[string]jsontext.Value
		if err := jsonv2.Unmarshal(val, &items); err != nil {
			return nil, fmt.Errorf("argument %q: %v", p.name, err)
		}
		out := make(map[string]string, len(items))
		for k, item := range items {
			if item.Kind() != '"' {
				return nil, fmt.Errorf("argument %q: value of %q must be a string, got %s", p.name, k, kindName(item.Kind()))
			}
			var s string
			if err := jsonv2.Unmarshal(item, &s); err != nil {
				return nil, fmt.Errorf("argument %q: value of %q: %v", p.name, k, err)
			}
			if strings.ContainsRune(k, 0) || strings.ContainsRune(s, 0) {
				return nil, fmt.Errorf("argument %q: %q must not contain NUL characters", p.name, k)
			}
			out[k] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("argument %q has no known type", p.name) // unreachable with the static table
}

// str decodes one string value (an argument or an array item) and applies
// the string rules of p.
func (p prop) str(label string, val jsontext.Value) (string, error) {
	if val.Kind() != '"' {
		return "", fmt.Errorf("argument %s: expected a string, got %s", quoteLabel(label), kindName(val.Kind()))
	}
	var s string
	if err := jsonv2.Unmarshal(val, &s); err != nil {
		return "", fmt.Errorf("argument %s: %v", quoteLabel(label), err)
	}
	if !p.allowNUL && strings.ContainsRune(s, 0) {
		return "", fmt.Errorf("argument %s must not contain NUL characters", quoteLabel(label))
	}
	if p.kind == kString && p.nonEmpty && s == "" {
		return "", fmt.Errorf("argument %s must not be empty", quoteLabel(label))
	}
	if p.upper {
		s = strings.ToUpper(s)
	}
	if len(p.enum) > 0 && !slices.Contains(p.enum, s) {
		return "", fmt.Errorf("argument %s: %q is not one of %s", quoteLabel(label), s, strings.Join(p.enum, ", "))
	}
	return s, nil
}

func quoteLabel(label string) string { return `"` + label + `"` }

// parseInteger accepts integral JSON numbers, including forms such as 10.0
// or 1e3 that models sometimes produce, and refuses fractions and overflow.
func parseInteger(raw string) (int64, error) {
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, errors.New("not an integer in range")
	}
	return int64(f), nil
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "invalid JSON"
}

func propNames(props []prop) string {
	if len(props) == 0 {
		return "none"
	}
	names := make([]string, len(props))
	for i, p := range props {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// canonicalJSON encodes validated arguments deterministically (sorted keys),
// so the shield judges exactly the values that will be executed.
func canonicalJSON(a args) ([]byte, error) {
	return jsonv2.Marshal(map[string]any(a), jsonv2.Deterministic(true))
}
