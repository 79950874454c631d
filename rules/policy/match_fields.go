package policy

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fieldsMatcher matches Go regexps against named argument fields. Each
// field is checked against the normalised strings canonicalisation
// recorded for it (action.Strings with that Field); all fields must hold.
type fieldsMatcher struct {
	fields []fieldRegexp
	every  bool
}

type fieldRegexp struct {
	name string
	re   *regexp.Regexp
}

func (m *fieldsMatcher) kind() string { return "fields" }

func (m *fieldsMatcher) eval(st *evalState) (bool, string) {
	witness := ""
	for i := range m.fields {
		ok, w := m.fieldHolds(st, &m.fields[i])
		if !ok {
			return false, m.fields[i].name
		}
		witness = w
	}
	return true, witness
}

// fieldHolds: for deny/verify, any value of the field, decoded layers
// included (so base64 cannot hide a match); for allow, every value as
// sent (layer 0), and the field must be present.
func (m *fieldsMatcher) fieldHolds(st *evalState, f *fieldRegexp) (bool, string) {
	seen := false
	for i := range st.act.Strings {
		s := &st.act.Strings[i]
		if s.Field != f.name {
			continue
		}
		if m.every {
			if s.Layer != 0 {
				continue
			}
			seen = true
			if !f.re.MatchString(s.Value) {
				return false, s.Value
			}
			continue
		}
		if f.re.MatchString(s.Value) {
			return true, s.Value
		}
	}
	return m.every && seen, ""
}

func (c *compiler) fieldsMatcher(label string, n *yaml.Node, every bool) *fieldsMatcher {
	kvs := c.ps.entries(n, label, "fields")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	if len(kvs) == 0 {
		c.ps.add(n.Line, label, "fields is empty (give field: regexp pairs)")
		return nil
	}
	m := &fieldsMatcher{every: every}
	for _, kv := range kvs {
		name := strings.TrimSpace(kv.key)
		if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
			c.ps.add(kv.line, label, "fields: bad field name %q (use a dotted path such as headers.Authorization)", kv.key)
			continue
		}
		v, ok := c.ps.scalar(kv.value, label, "fields."+name)
		if !ok {
			continue
		}
		re, err := regexp.Compile(v)
		if err != nil {
			c.ps.add(kv.value.Line, label, "fields.%s: bad regexp: %v", name, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			continue
		}
		m.fields = append(m.fields, fieldRegexp{name: name, re: re})
	}
	return m
}
