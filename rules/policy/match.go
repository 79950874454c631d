package policy

import (
	"go.yaml.in/yaml/v3"
)

var matchKeys = []string{"action", "path", "path_not", "access", "command", "url", "fields", "when"}

// match compiles a rule's `match:` mapping into r.actions and r.cond.
func (c *compiler) match(r *rule, label string, n *yaml.Node) {
	kvs := c.ps.entries(n, label, "match")
	if n.Kind == yaml.MappingNode && len(kvs) == 0 {
		c.ps.add(n.Line, label, "match is empty (a rule without conditions would match everything)")
		return
	}
	c.ps.checkKeys(kvs, matchKeys, label, "match")
	every := r.section == SectionAllow
	get := func(k string) *yaml.Node {
		for _, kv := range kvs {
			if kv.key == k {
				return kv.value
			}
		}
		return nil
	}
	if v := get("action"); v != nil {
		r.actions = c.actionMatcher(label, v)
	}
	if pathNode, notNode, accessNode := get("path"), get("path_not"), get("access"); pathNode != nil || notNode != nil || accessNode != nil {
		r.cond.path = c.pathMatcher(label, pathNode, notNode, accessNode, every)
	}
	if v := get("command"); v != nil {
		r.cond.command = c.commandMatcher(label, v, every)
	}
	if v := get("url"); v != nil {
		r.cond.url = c.urlMatcher(label, v, every)
	}
	if v := get("fields"); v != nil {
		r.cond.fields = c.fieldsMatcher(label, v, every)
	}
	if v := get("when"); v != nil {
		r.cond.when = c.celMatcher(label, v, every)
	}
}
