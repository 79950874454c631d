package mcpproxy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/heuristics"
)

// inspectToolList checks each tool a tools/list answer offers and
// withholds the ones that carry instructions to the model, hide
// characters, or changed since first seen. An answer it cannot read is
// not passed on.
func (s *session) inspectToolList(m *Message) *Message {
	res, err := decodeObject(m.Result)
	if err != nil {
		return errorResponse(m.ID, codeInternalError, "Parapet MCP proxy: the server's tools/list answer is not a JSON object; not passed on")
	}
	list, ok := res["tools"].([]any)
	if !ok {
		return errorResponse(m.ID, codeInternalError, "Parapet MCP proxy: the server's tools/list answer has no tools array; not passed on")
	}
	kept := make([]any, 0, len(list))
	withheld := map[string]string{}
	var keptNames []string
	count := map[string]int{}
	for _, t := range list {
		if def, ok := t.(map[string]any); ok {
			name, _ := def["name"].(string)
			count[name]++
		}
	}
	for _, t := range list {
		def, ok := t.(map[string]any)
		name, _ := def["name"].(string)
		if !ok || name == "" {
			s.cfg.Log.Warn("mcp-proxy: tool without a name withheld", "server", s.cfg.Server)
			continue
		}
		if count[name] > 1 {
			// Which of the two would the client show, which run? Neither.
			s.cfg.Log.Warn("mcp-proxy: tool offered twice withheld", "server", s.cfg.Server, "tool", name)
			withheld[name] = "the server offered two tools of this name"
			continue
		}
		if why := s.judgeTool(name, def); why != "" {
			withheld[name] = why
			continue
		}
		kept = append(kept, def)
		keptNames = append(keptNames, name)
	}
	s.mu.Lock()
	for _, n := range keptNames {
		delete(s.withheld, n)
	}
	for n, why := range withheld {
		s.withheld[n] = why
	}
	s.mu.Unlock()
	if len(withheld) == 0 && len(kept) == len(list) {
		return m // unchanged: pass the server's bytes on
	}
	res["tools"] = kept
	return response(m.ID, res)
}

// judgeTool returns why a tool is withheld, or "".
func (s *session) judgeTool(name string, def map[string]any) string {
	var withhold []string
	problems, evidence := s.cfg.toolProblems(def)
	if len(problems) > 0 {
		trusted := slices.Contains(s.cfg.TrustedTools, name)
		s.cfg.Log.Warn("mcp-proxy: suspicious tool description", "server", s.cfg.Server, "tool", name,
			"problems", strings.Join(problems, "; "), "evidence", strings.Join(evidence, "; "), "withheld", !trusted)
		if !trusted {
			withhold = append(withhold, "its description "+strings.Join(problems, "; ")+
				" (tool poisoning; pass --trust-tool "+name+" if you have read it and trust it)")
		}
	}
	hash := toolHash(def)
	st, old, err := s.cfg.Pins.Check(name, hash, s.cfg.AllowChanged)
	if err != nil {
		s.cfg.Log.Error("mcp-proxy: could not save the tool pin; a later change of this tool may go unnoticed", "server", s.cfg.Server, "tool", name, "err", err)
	}
	switch st {
	case pinChanged:
		s.cfg.Log.Warn("mcp-proxy: tool definition changed since first seen", "server", s.cfg.Server, "tool", name,
			"first_seen", old.FirstSeen, "pinned", old.SHA256[:12], "now", hash[:12], "withheld", true)
		withhold = append(withhold, fmt.Sprintf("its definition changed since it was first seen on %s (pinned sha256 %s…, now %s…; "+
			"a rug pull? restart the proxy with --allow-changed to accept the new one)", old.FirstSeen.Format("2006-01-02"), old.SHA256[:12], hash[:12]))
	case pinRepinned:
		s.cfg.Log.Warn("mcp-proxy: tool definition changed since first seen; accepted (--allow-changed) and pinned", "server", s.cfg.Server,
			"tool", name, "pinned", old.SHA256[:12], "now", hash[:12])
	case pinNew:
		s.cfg.Log.Info("mcp-proxy: tool pinned", "server", s.cfg.Server, "tool", name, "sha256", hash[:12])
	}
	return strings.Join(withhold, "; ")
}

// toolProblems reads every string of a tool definition (name, title,
// description, schemas, annotations) the way the model will, and reports
// instructions aimed at the model, hidden characters, and pointers to
// credential files. It reuses Tier 1's analyses. problems may be shown to
// the model and never quote the text; evidence is for the log.
func (c *Config) toolProblems(def map[string]any) (problems, evidence []string) {
	seen := map[string]bool{}
	add := func(p string, ev ...string) {
		if !seen[p] {
			seen[p] = true
			problems = append(problems, p)
			evidence = append(evidence, ev...)
		}
	}
	walkStrings(def, "", nil, func(path, s string) string {
		norm, evs := action.Normalize(s)
		for _, ev := range evs {
			switch ev.Kind {
			case "zero-width", "bidi", "tag", "control":
				add(fmt.Sprintf("hides %s characters (%s) in %s", ev.Kind, ev.Evidence, path))
			}
		}
		for _, text := range []string{norm, hiddenTagText(s)} {
			if rule, frag, ok := heuristics.InjectionIn(text); ok {
				add(fmt.Sprintf("carries instructions to the model in %s (%s)", path, rule), fmt.Sprintf("%s: %q", path, clip(frag, 100)))
			}
		}
		for _, f := range c.credentialPointers(norm) {
			add(fmt.Sprintf("points the model at %s in %s", f, path))
		}
		return s
	})
	return problems, evidence
}

// hiddenTagText decodes Unicode tag characters back to the ASCII they
// mirror: the message a model can read and a person cannot see.
func hiddenTagText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0xE0020 && r <= 0xE007E {
			b.WriteByte(byte(r - 0xE0000))
		}
	}
	return b.String()
}

// credentialPointers finds paths in text that Tier 1 treats as credential
// stores (~/.ssh/id_rsa, ~/.aws/credentials, .env, a client's mcp.json
// holding API keys …): a tool's description has no reason to send the
// model there. Each path is judged as a read_file of it would be.
func (c *Config) credentialPointers(text string) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '`' || r == '"' || r == '\'' || r == '(' || r == ')' ||
			r == ',' || r == ';' || r == '<' || r == '>' || r == '[' || r == ']' || r == '{' || r == '}'
	}) {
		tok = strings.TrimRight(tok, ".:!?")
		if !looksLikePath(tok) {
			continue
		}
		args, _ := json.Marshal(map[string]string{"path": tok})
		act, err := action.Canonicalize(action.Request{Type: "read_file", Payload: args,
			Caller: action.Caller{WorkspaceRoot: c.Workspace, Home: c.Home}}, action.Limits{})
		if err != nil {
			continue
		}
		for _, f := range c.analyzer.Analyze(act) {
			if f.Category == heuristics.CategoryCredentialAccess {
				out = append(out, fmt.Sprintf("%s (%s)", clip(tok, 80), f.RuleID))
				break
			}
		}
		act.Release()
	}
	return out
}

// looksLikePath keeps the tokens worth judging as paths: anchored at the
// root, a home or a variable, or a dotfile or directory path.
func looksLikePath(t string) bool {
	if len(t) < 2 || len(t) > 512 || !utf8.ValidString(t) || strings.Contains(t, "://") {
		return false
	}
	switch t[0] {
	case '/', '~', '$', '%', '.':
		return true
	}
	return strings.Contains(t, "/.") || strings.HasPrefix(t, ".")
}
