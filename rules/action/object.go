package action

import (
	"slices"
	"strings"
)

// Object is a decoded JSON object: its members sorted by name (byte
// order), names unique. A sorted slice, not a map: most payloads have a
// handful of arguments, and a map costs several times more to build than
// to read for the few lookups a decision makes.
type Object []Member

// Member is one name and value of an Object. Value is an Object, []any,
// string, Number, bool or nil.
type Member struct {
	Key   string
	Value any
}

// Get returns the value of member key.
func (o Object) Get(key string) (any, bool) {
	if len(o) <= 8 {
		for i := range o {
			if o[i].Key == key {
				return o[i].Value, true
			}
		}
		return nil, false
	}
	i, ok := slices.BinarySearchFunc(o, key, func(m Member, k string) int { return strings.Compare(m.Key, k) })
	if !ok {
		return nil, false
	}
	return o[i].Value, true
}

// Map returns o as a map, for code that wants one (CEL); nested objects
// stay Objects.
func (o Object) Map() map[string]any {
	m := make(map[string]any, len(o))
	for _, mb := range o {
		m[mb.Key] = mb.Value
	}
	return m
}

// jsonKind names the JSON type of a parsed value, for error messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case Object:
		return "an object"
	}
	return "an unknown value"
}
