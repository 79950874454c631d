package policy

import (
	"fmt"
	"strings"

	"regexp"

	"go.yaml.in/yaml/v3"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// rule is one compiled rule.
type rule struct {
	id      string
	section string
	line    int
	// actions restricts the action types; nil means any type.
	actions *actionMatcher
	cond    conditions
	// decision is what a match returns, built at load so Evaluate does
	// not allocate.
	decision Decision
}

// conditions are a rule's matchers, nil where the rule has none of that
// kind; all must hold. They run in field order, cheapest first and CEL
// last, so most rules are decided by string comparisons. Typed fields
// rather than a list of interfaces let Evaluate call them directly, so
// its evalState stays on the stack.
type conditions struct {
	path    *pathMatcher
	command *commandMatcher
	url     *urlMatcher
	fields  *fieldsMatcher
	when    *celMatcher
}

// hold reports whether every condition holds (the action type was
// already checked through the index).
func (c *conditions) hold(st *evalState) bool {
	if c.path != nil {
		if ok, _ := c.path.eval(st); !ok {
			return false
		}
	}
	if c.command != nil {
		if ok, _ := c.command.eval(st); !ok {
			return false
		}
	}
	if c.url != nil {
		if ok, _ := c.url.eval(st); !ok {
			return false
		}
	}
	if c.fields != nil {
		if ok, _ := c.fields.eval(st); !ok {
			return false
		}
	}
	if c.when != nil {
		if ok, _ := c.when.eval(st); !ok {
			return false
		}
	}
	return true
}

// list returns the conditions in the order they run, for Explain.
func (c *conditions) list() []matcher {
	var out []matcher
	if c.path != nil {
		out = append(out, c.path)
	}
	if c.command != nil {
		out = append(out, c.command)
	}
	if c.url != nil {
		out = append(out, c.url)
	}
	if c.fields != nil {
		out = append(out, c.fields)
	}
	if c.when != nil {
		out = append(out, c.when)
	}
	return out
}

// matcher is one condition of a rule, as Explain sees it. every is fixed
// when it is compiled: deny and verify rules hold when ANY
// path/command/URL matches, allow rules only when EVERY one does.
type matcher interface {
	// kind names the matcher in explanations ("path", "command", …).
	kind() string
	// eval reports whether the matcher holds and names the element that
	// decided it (the matching one, or for allow rules the one that did
	// not match); "" when there is none.
	eval(st *evalState) (bool, string)
}

var ruleKeys = map[string][]string{
	SectionDeny:   {"id", "description", "reason", "match"},
	SectionVerify: {"id", "description", "reason", "tier", "match", "confine"},
	SectionAllow:  {"id", "description", "reason", "match", "second_opinion", "confine"},
}

// compiler turns rule nodes into rules, collecting problems.
type compiler struct {
	ps           *problems
	trustedHosts []string
	// ids maps a rule id to the line that first defined it.
	ids map[string]int
	// programs numbers the literal program names of command matchers.
	programs programTable
}

func (c *compiler) section(name string, n *yaml.Node) []*rule {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // "deny:" with nothing under it
	}
	if n.Kind != yaml.SequenceNode {
		c.ps.add(n.Line, "", "%s must be a list of rules, got %s", name, kindName(n))
		return nil
	}
	var out []*rule
	for i, rn := range n.Content {
		if r := c.rule(name, i, rn); r != nil {
			out = append(out, r)
		}
	}
	return out
}

func (c *compiler) rule(section string, index int, n *yaml.Node) *rule {
	label := fmt.Sprintf("%s[%d]", section, index)
	if n.Kind != yaml.MappingNode {
		c.ps.add(n.Line, label, "a rule must be a mapping with id and match, got %s", kindName(n))
		return nil
	}
	// Find the id first so every other problem names the rule.
	r := &rule{section: section, line: n.Line}
	kvs := c.ps.entries(n, label, "the rule")
	for _, kv := range kvs {
		if kv.key != "id" {
			continue
		}
		if v, ok := c.ps.scalar(kv.value, label, "id"); ok {
			v = strings.TrimSpace(v)
			switch {
			case v == "":
				c.ps.add(kv.value.Line, label, "id is empty")
			case !ruleIDRE.MatchString(v):
				c.ps.add(kv.value.Line, label, "id %q may only use letters, digits, '.', '_' and '-'", v)
			case c.ids[v] != 0:
				c.ps.add(kv.value.Line, v, "duplicate rule id (first defined at line %d)", c.ids[v])
			default:
				c.ids[v] = kv.value.Line
			}
			r.id = v
			if r.id != "" {
				label = r.id
			}
		}
	}
	if r.id == "" && !hasKey(kvs, "id") {
		c.ps.add(n.Line, label, "missing id")
	}
	c.ps.checkKeys(kvs, ruleKeys[section], label, "the rule")

	var reason, description string
	tier := int32(0)
	secondOpinion := false
	var matchNode *yaml.Node
	var grant *pb.Confinement
	for _, kv := range kvs {
		switch kv.key {
		case "description":
			description, _ = c.ps.scalar(kv.value, label, "description")
		case "reason":
			reason, _ = c.ps.scalar(kv.value, label, "reason")
		case "tier":
			if section == SectionVerify {
				tier, _ = parseTier(c.ps, kv.value, label, "tier")
			}
		case "match":
			matchNode = kv.value
		case "second_opinion":
			if v, ok := c.ps.scalar(kv.value, label, "second_opinion"); ok {
				switch v {
				case "true":
					secondOpinion = true
				case "false":
				default:
					c.ps.add(kv.value.Line, label, "second_opinion must be true or false, got %q", v)
				}
			}
		case "confine":
			if section != SectionDeny {
				grant = c.confine(kv.value, label)
			}
		}
	}
	if section == SectionVerify && !hasKey(kvs, "tier") {
		c.ps.add(n.Line, label, "verify rules need `tier: 2` (LLM evaluator) or `tier: 3` (human)")
	}
	if matchNode == nil {
		c.ps.add(n.Line, label, "missing match (a rule without conditions would match everything)")
		return nil
	}
	c.match(r, label, matchNode)
	r.decision = ruleDecision(r, section, tier, reason, description)
	r.decision.SecondOpinion = secondOpinion
	r.decision.Confine = grant
	return r
}

var ruleIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

func hasKey(kvs []keyValue, k string) bool {
	for _, kv := range kvs {
		if kv.key == k {
			return true
		}
	}
	return false
}

// ruleDecision builds the decision a rule returns, with a reason a user
// can act on when the author wrote none.
func ruleDecision(r *rule, section string, tier int32, reason, description string) Decision {
	d := Decision{Section: section, RuleID: r.id, Reason: strings.TrimSpace(reason)}
	what := strings.TrimSuffix(strings.TrimSpace(description), ".")
	switch section {
	case SectionDeny:
		d.Outcome = pb.VerdictDecision_VERDICT_DECISION_BLOCK
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("Blocked by policy rule %q", r.id)
			if what != "" {
				d.Reason += ": " + what
			}
			d.Reason += ". Change the action, or ask the policy owner to change the rule."
		}
	case SectionVerify:
		d.Outcome = pb.VerdictDecision_VERDICT_DECISION_ESCALATE
		d.RequiredTier = tier
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("Policy rule %q needs review (%s)", r.id, tierName(tier))
			if what != "" {
				d.Reason += ": " + what
			}
			d.Reason += "."
		}
	case SectionAllow:
		d.Outcome = pb.VerdictDecision_VERDICT_DECISION_ALLOW
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("Allowed by policy rule %q", r.id)
			if what != "" {
				d.Reason += ": " + what
			}
			d.Reason += "."
		}
	}
	return d
}
