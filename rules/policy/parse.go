package policy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/heuristics"
)

// MaxPolicyBytes bounds a policy file. Real policies are a few KiB.
const MaxPolicyBytes = 1 << 20

// defaultEscalateTier is the tier of an ESCALATE default that does not
// name one: a human, the most conservative reviewer.
const defaultEscalateTier = 3

var topLevelKeys = []string{"version", "name", "description", "defaults", "heuristics", "deny", "verify", "allow"}

// LoadFile reads and parses a policy file.
func LoadFile(path string) (*Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &LoadError{Problems: []Problem{{File: path, Msg: err.Error()}}}
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxPolicyBytes+1))
	if err != nil {
		return nil, &LoadError{Problems: []Problem{{File: path, Msg: err.Error()}}}
	}
	return Parse(path, src)
}

// Parse compiles a policy. source names it in problems and in
// Policy.Source. The error, if any, is a *LoadError listing every problem.
func Parse(source string, src []byte) (*Policy, error) {
	ps := &problems{file: source}
	p := parse(ps, source, src)
	if len(ps.list) > 0 {
		slices.SortStableFunc(ps.list, func(a, b Problem) int { return a.Line - b.Line })
		return nil, &LoadError{Problems: ps.list}
	}
	return p, nil
}

func parse(ps *problems, source string, src []byte) *Policy {
	if len(src) > MaxPolicyBytes {
		ps.add(0, "", "policy is larger than %d bytes", MaxPolicyBytes)
		return nil
	}
	root := parseYAML(ps, src)
	if root == nil {
		return nil
	}
	sum := sha256.Sum256(src)
	p := &Policy{
		Name:    policyNameFromSource(source),
		Version: "sha256:" + hex.EncodeToString(sum[:]),
		Source:  source,
		Defaults: Defaults{
			NoMatch: pb.VerdictDecision_VERDICT_DECISION_ESCALATE, NoMatchTier: defaultEscalateTier,
			UnknownAction: pb.VerdictDecision_VERDICT_DECISION_ESCALATE, UnknownActionTier: defaultEscalateTier,
		},
	}
	kvs := ps.entries(root, "", "the policy")
	ps.checkKeys(kvs, topLevelKeys, "", "the policy")
	byKey := make(map[string]keyValue, len(kvs))
	for _, kv := range kvs {
		byKey[kv.key] = kv
	}

	if kv, ok := byKey["version"]; !ok {
		ps.add(root.Line, "", "missing `version: 1`")
	} else if v, ok := ps.scalar(kv.value, "", "version"); ok && v != "1" {
		ps.add(kv.value.Line, "", "unsupported version %q (this Shield reads version 1)", v)
	}
	if kv, ok := byKey["name"]; ok {
		if v, ok := ps.scalar(kv.value, "", "name"); ok {
			if strings.TrimSpace(v) == "" {
				ps.add(kv.value.Line, "", "name is empty")
			} else {
				p.Name = v
			}
		}
	}
	if kv, ok := byKey["description"]; ok {
		ps.scalar(kv.value, "", "description")
	}
	if kv, ok := byKey["defaults"]; ok {
		parseDefaults(ps, kv.value, &p.Defaults)
	}
	if kv, ok := byKey["heuristics"]; ok {
		p.Heuristics = parseHeuristics(ps, kv.value)
	}

	c := &compiler{ps: ps, trustedHosts: p.Heuristics.TrustedHosts, ids: map[string]int{}, programs: programTable{}}
	for _, s := range []struct {
		name string
		dst  *[]*rule
	}{{SectionDeny, &p.deny}, {SectionVerify, &p.verify}, {SectionAllow, &p.allow}} {
		if kv, ok := byKey[s.name]; ok {
			*s.dst = c.section(s.name, kv.value)
		}
	}
	if len(ps.list) > 0 {
		return nil
	}
	p.index = buildIndex(p.deny, p.verify, p.allow)
	p.programs = c.programs
	p.noMatchReason = noMatchReason(p)
	return p
}

// parseYAML returns the root node of the single document in src.
func parseYAML(ps *problems, src []byte) *yaml.Node {
	if len(bytes.TrimSpace(stripComments(src))) == 0 {
		ps.add(1, "", "policy is empty")
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		ps.add(yamlErrorLine(src, err), "", "invalid YAML: %s", yamlErrorMessage(err))
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		ps.add(extra.Line, "", "a policy file holds one YAML document; found another")
		return nil
	} else if !errors.Is(err, io.EOF) {
		ps.add(yamlErrorLine(src, err), "", "invalid YAML: %s", yamlErrorMessage(err))
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		ps.add(1, "", "policy is empty")
		return nil
	}
	root := doc.Content[0]
	ps.rejectAnchors(root)
	if len(ps.list) > 0 {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			ps.add(root.Line, "", "policy is empty")
		} else {
			ps.add(root.Line, "", "policy must be a mapping of keys (version, name, deny, …), got %s", kindName(root))
		}
		return nil
	}
	return root
}

// stripComments drops YAML comment lines so a file of only comments
// counts as empty.
func stripComments(src []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(src, []byte("\n")) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		out = append(out, t...)
	}
	return out
}

var yamlLineRE = regexp.MustCompile(`^line (\d+): `)

// yamlErrorLine finds the line of a YAML syntax error. The library reports
// the line where the enclosing block began, not where it broke, so the
// loader looks for the shortest prefix of the file that fails to parse:
// its last line is where the problem is.
func yamlErrorLine(src []byte, err error) int {
	lines := bytes.SplitAfter(src, []byte("\n"))
	lo, hi := 1, len(lines)
	if !yamlFails(src) {
		return yamlReportedLine(err)
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if yamlFails(bytes.Join(lines[:mid], nil)) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func yamlFails(src []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			return !errors.Is(err, io.EOF)
		}
	}
}

func yamlReportedLine(err error) int {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		if n, e := strconv.Atoi(m[1]); e == nil {
			return n
		}
	}
	return 1
}

func yamlErrorMessage(err error) string {
	return yamlLineRE.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), "")
}

func policyNameFromSource(source string) string {
	base := filepath.Base(strings.TrimPrefix(source, "embedded:"))
	return strings.TrimSuffix(base, filepath.Ext(base))
}

var defaultsKeys = []string{"no_match", "unknown_action", "no_match_tier", "unknown_action_tier"}

func parseDefaults(ps *problems, n *yaml.Node, d *Defaults) {
	kvs := ps.entries(n, "", "defaults")
	ps.checkKeys(kvs, defaultsKeys, "", "defaults")
	tierSet := map[string]int{}
	for _, kv := range kvs {
		switch kv.key {
		case "no_match", "unknown_action":
			v, ok := ps.scalar(kv.value, "", "defaults."+kv.key)
			if !ok {
				continue
			}
			o, ok := parseOutcome(v)
			if !ok {
				ps.add(kv.value.Line, "", "defaults.%s: unknown outcome %q (use allow, block or escalate)", kv.key, v)
				continue
			}
			if kv.key == "no_match" {
				d.NoMatch = o
			} else {
				d.UnknownAction = o
			}
		case "no_match_tier", "unknown_action_tier":
			t, ok := parseTier(ps, kv.value, "", "defaults."+kv.key)
			if !ok {
				continue
			}
			tierSet[kv.key] = kv.line
			if kv.key == "no_match_tier" {
				d.NoMatchTier = t
			} else {
				d.UnknownActionTier = t
			}
		}
	}
	// A tier only means something for an escalation.
	if d.NoMatch != pb.VerdictDecision_VERDICT_DECISION_ESCALATE {
		if line, ok := tierSet["no_match_tier"]; ok {
			ps.add(line, "", "defaults.no_match_tier only applies when no_match is escalate")
		}
		d.NoMatchTier = 0
	}
	if d.UnknownAction != pb.VerdictDecision_VERDICT_DECISION_ESCALATE {
		if line, ok := tierSet["unknown_action_tier"]; ok {
			ps.add(line, "", "defaults.unknown_action_tier only applies when unknown_action is escalate")
		}
		d.UnknownActionTier = 0
	}
}

func parseOutcome(s string) (pb.VerdictDecision, bool) { return pb.ParseDecision(s) }

func parseTier(ps *problems, n *yaml.Node, rule, what string) (int32, bool) {
	v, ok := ps.scalar(n, rule, what)
	if !ok {
		return 0, false
	}
	switch v {
	case "2":
		return 2, true
	case "3":
		return 3, true
	}
	ps.add(n.Line, rule, "%s must be 2 (LLM evaluator) or 3 (human), got %q", what, v)
	return 0, false
}

var heuristicsKeys = []string{"trusted_hosts", "disable", "override", "allow_secret_reads"}

func parseHeuristics(ps *problems, n *yaml.Node) heuristics.Config {
	var cfg heuristics.Config
	kvs := ps.entries(n, "", "heuristics")
	ps.checkKeys(kvs, heuristicsKeys, "", "heuristics")
	for _, kv := range kvs {
		switch kv.key {
		case "trusted_hosts":
			for _, it := range ps.stringList(kv.value, "", "heuristics.trusted_hosts") {
				h := strings.ToLower(strings.TrimSpace(it.value))
				if _, err := compileHostPattern(h); err != nil {
					ps.add(it.line, "", "heuristics.trusted_hosts: %q: %v", it.value, err)
					continue
				}
				cfg.TrustedHosts = append(cfg.TrustedHosts, h)
			}
		case "allow_secret_reads":
			for _, it := range ps.stringList(kv.value, "", "heuristics.allow_secret_reads") {
				if err := heuristics.CheckSecretReadPattern(it.value); err != nil {
					ps.add(it.line, "", "heuristics.allow_secret_reads: %q: %v", it.value, err)
					continue
				}
				cfg.AllowSecretReads = append(cfg.AllowSecretReads, it.value)
			}
		case "disable":
			for _, it := range ps.stringList(kv.value, "", "heuristics.disable") {
				if checkHeuristicID(ps, it.line, it.value, "heuristics.disable") {
					cfg.Disabled = append(cfg.Disabled, it.value)
				}
			}
		case "override":
			for _, o := range ps.entries(kv.value, "", "heuristics.override") {
				if !checkHeuristicID(ps, o.line, o.key, "heuristics.override") {
					continue
				}
				v, ok := ps.scalar(o.value, "", "heuristics.override."+o.key)
				if !ok {
					continue
				}
				out, ok := parseOutcome(v)
				if !ok {
					ps.add(o.value.Line, "", "heuristics.override.%s: unknown outcome %q (use allow, block or escalate)", o.key, v)
					continue
				}
				if cfg.Overrides == nil {
					cfg.Overrides = map[string]pb.VerdictDecision{}
				}
				cfg.Overrides[o.key] = out
			}
		}
	}
	return cfg
}

// checkHeuristicID validates a Tier 1 rule id named by the policy.
func checkHeuristicID(ps *problems, line int, id, where string) bool {
	// A typo must not silently leave a rule enabled (or its override unset).
	if !heuristics.Known(id) {
		ps.add(line, "", "%s: unknown heuristic rule %q", where, id)
		return false
	}
	return true
}

func noMatchReason(p *Policy) string {
	switch p.Defaults.NoMatch {
	case pb.VerdictDecision_VERDICT_DECISION_ALLOW:
		return fmt.Sprintf("No rule in policy %q matches this action; the policy allows unmatched actions.", p.Name)
	case pb.VerdictDecision_VERDICT_DECISION_BLOCK:
		return fmt.Sprintf("No rule in policy %q allows this action, so it is blocked; add an allow rule if it is routine.", p.Name)
	}
	return fmt.Sprintf("No rule in policy %q allows this action, so it needs review (%s); add an allow rule if it is routine.",
		p.Name, tierName(p.Defaults.NoMatchTier))
}

func tierName(t int32) string {
	if t == 2 {
		return "tier 2, the LLM evaluator"
	}
	return "tier 3, a human"
}
