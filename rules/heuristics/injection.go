package heuristics

import (
	"path"
	"strings"
)

// Prompt injection: text in an action that tries to steer an agent, either
// this one (content it is about to act on) or the next one (file contents
// and messages it writes for others).
//
// Findings are ESCALATE, never BLOCK: the wording alone is never proof
// (security docs, test fixtures and this product's own code quote it), and
// a person can tell a quotation from an attack at a glance. Outbound
// actions that also carry secrets or sensitive files are blocked by the
// exfiltration and secret rules regardless.
//
// The scan is one pass over each string: a byte table picks the few
// positions where a phrase can start, and only there are words compared.

var injectionStart = func() (t [256]bool) {
	// The first bytes of injectionPrefixes, in either case.
	for _, p := range injectionPrefixes {
		t[p[0]], t[upperByte(p[0])] = true, true
	}
	return t
}()

// injectionPrefixes are the first two bytes (ignoring case) of every
// phrase findInjection looks for; "<" stands for any chat-template token
// (chatToken). TestInjectionPrefixesCoverPhrases holds the list to the
// phrases in findInjection's code.
var injectionPrefixes = []string{"ig", "di", "do", "fo", "yo", "ne", "no", "pr", "wi", "sy", "sk", "hu", "as", "ac", "[i", "[/", "[s", "##", "<",
	"ai", "ag", "au", "ll", "la", "cl", "co", "ge", "ia", "ki", "mo"} // from "ai": agentWord (ai, agent, automated, llm, language model, claude, copilot, codex, coderabbit, gemini, IA, KI, model:)

// injectionPairs has bit foldPair(a, b) set for each pair of bytes a
// phrase can start with: at most word starts none can, and the phrases
// themselves are not compared.
var injectionPairs = func() (t [1 << 16 / 64]uint64) {
	for _, p := range injectionPrefixes {
		for b := range 256 {
			if len(p) == 1 || lowerByte(byte(b)) == p[1] {
				k := foldPair(p[0], byte(b))
				t[k>>6] |= 1 << (k & 63)
			}
		}
	}
	return t
}()

// mayStartPhrase reports whether a phrase can start at s[i]. Every
// phrase is at least two bytes long.
func mayStartPhrase(s string, i int) bool {
	if i+1 >= len(s) {
		return false
	}
	k := foldPair(s[i], s[i+1])
	return injectionPairs[k>>6]&(1<<(k&63)) != 0
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}

func hasPrefixFold(s, lower string) bool {
	return len(s) >= len(lower) && equalFoldASCII(s[:len(lower)], lower)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// nextWord returns the word starting at or after j (letters and
// apostrophes) and the index after it.
func nextWord(s string, j int) (string, int) {
	for j < len(s) && !isLetter(s[j]) {
		if s[j] == '\n' && j+1 < len(s) && s[j+1] == '\n' {
			return "", len(s) // a paragraph break ends the phrase
		}
		j++
	}
	k := j
	for k < len(s) && (isLetter(s[k]) || s[k] == '\'') {
		k++
	}
	return s[j:k], k
}

// wordIs reports whether w is the lower-case word x, ignoring case.
func wordIs(w, x string) bool { return len(w) == len(x) && equalFoldASCII(w, x) }

func wordIn(w string, set []string) bool {
	for _, x := range set {
		if len(w) == len(x) && wordIs(w, x) {
			return true
		}
	}
	return false
}

var (
	injTime    = []string{"previous", "prior", "above", "earlier", "preceding", "former", "original", "initial", "system", "existing"}
	injTarget  = []string{"instructions", "instruction", "prompt", "prompts", "rules", "directions", "directives", "guidelines", "guardrails", "constraints", "messages", "context", "commands", "orders"}
	injFillers = []string{"all", "any", "the", "your", "my", "of", "these", "those", "every", "everything", "and", "that", "you", "were", "have", "been", "given", "above",
		"user's", "users'", "safety", "security", "developer's", "operator's", "shield's", "other", "current"}
	injRoles     = []string{"dan", "jailbroken", "unrestricted", "unfiltered", "uncensored", "developer", "evil", "ai", "assistant", "chatbot", "model", "bot", "gpt", "chatgpt", "claude", "different", "no", "freed", "liberated"}
	injUnbound   = []string{"bound", "restricted", "limited", "constrained", "required", "obligated", "subject"}
	injJailRoles = []string{"dan", "jailbroken", "unrestricted", "unfiltered", "uncensored", "evil"}
	injConfirm   = []string{"for", "before", "the", "permission", "confirmation", "questions", "whether"}
	injTell      = []string{"tell", "inform", "mention", "reveal", "show", "alert", "notify", "warn", "ask"}
	injRevealV   = []string{"reveal", "print", "show", "output", "repeat", "leak", "dump", "display", "share", "give", "what", "disclose"}
)

// overridePhrase checks "ignore/disregard/forget … previous … instructions"
// starting after the verb at j.
func overridePhrase(s string, j int, needTarget bool) bool {
	sawQualifier := false
	for n := 0; n < 6; n++ {
		w, k := nextWord(s, j)
		if w == "" {
			return false
		}
		j = k
		switch {
		case wordIn(w, injTarget):
			return sawQualifier
		case wordIn(w, injTime):
			sawQualifier = true
			if !needTarget && (wordIs(w, "above") || wordIs(w, "previous") || wordIs(w, "prior")) {
				return true
			}
		case wordIs(w, "all") || wordIs(w, "your") || wordIs(w, "any") || wordIs(w, "everything"):
			sawQualifier = true
		case wordIn(w, injFillers):
		default:
			return false
		}
	}
	return false
}

// findInjection returns the rule and the matching fragment, or ok=false.
func findInjection(s string) (ruleIndex, string, bool) {
	r, frag, ok, _ := scanInjection(s)
	return r, frag, ok
}

// scanInjection is findInjection that also says whether s names an AI
// agent as a word (ai, agent, assistant, llm), the prefilter of
// findAgentDirective, found in the same pass. When ok is true the scan
// stopped early and agent may miss a later word.
func scanInjection(s string) (r ruleIndex, frag string, ok, agent bool) {
	human, assistant := -1, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !injectionStart[c] {
			continue
		}
		if i > 0 && isLetter(s[i-1]) && c != '<' && c != '[' && c != '#' && !(i > 1 && s[i-2] == '\\' && (s[i-1] == 'n' || s[i-1] == 't' || s[i-1] == 'r')) {
			continue // not at a word start (after printf's \n, it is)
		}
		if !mayStartPhrase(s, i) {
			continue
		}
		lineStart := i == 0 || s[i-1] == '\n'
		rest := s[i:]
		switch lowerByte(c) {
		case 'k', 'm':
			agent = agent || agentWord(rest) // KI (German), model
		case 'i':
			agent = agent || agentWord(rest) // IA (Spanish, French, Portuguese, Italian)
			if hasPrefixFold(rest, "ignore") && len(rest) > 6 && !isLetter(rest[6]) && overridePhrase(s, i+6, true) {
				return rInjectOverride, around(s, i), true, agent
			}
			// A few other languages' "ignore all previous instructions".
			if hasPrefixFold(rest, "ignorez toutes les instructions") || hasPrefixFold(rest, "ignora todas las instrucciones") ||
				hasPrefixFold(rest, "ignoriere alle vorherigen anweisungen") || hasPrefixFold(rest, "ignora tutte le istruzioni") {
				return rInjectOverride, around(s, i), true, agent
			}
		case 'd':
			switch {
			case hasPrefixFold(rest, "disregard") && len(rest) > 9 && !isLetter(rest[9]) && overridePhrase(s, i+9, false):
				return rInjectOverride, around(s, i), true, agent
			case hasPrefixFold(rest, "do not ") || hasPrefixFold(rest, "don't ") || hasPrefixFold(rest, "dont "):
				if keepSecretFromUser(s, i) {
					return rInjectOverride, around(s, i), true, agent
				}
			}
		case 'f':
			if hasPrefixFold(rest, "forget ") && overridePhrase(s, i+6, false) {
				return rInjectOverride, around(s, i), true, agent
			}
		case 'y':
			if hasPrefixFold(rest, "you are now ") {
				w, k := nextWord(s, i+12)
				if wordIs(w, "a") || wordIs(w, "an") || wordIs(w, "in") || wordIs(w, "the") {
					w, _ = nextWord(s, k)
				}
				if wordIn(w, injRoles) {
					return rInjectOverride, around(s, i), true, agent
				}
			}
			if hasPrefixFold(rest, "you are no longer ") {
				w, _ := nextWord(s, i+18)
				if wordIn(w, injUnbound) {
					return rInjectOverride, around(s, i), true, agent
				}
			}
		case 'n':
			if hasPrefixFold(rest, "new instructions:") || hasPrefixFold(rest, "new system prompt") {
				return rInjectOverride, around(s, i), true, agent
			}
			if hasPrefixFold(rest, "never ask ") || hasPrefixFold(rest, "no need to confirm") || hasPrefixFold(rest, "never confirm") {
				if w, _ := nextWord(s, i+10); hasPrefixFold(rest, "no need") || wordIn(w, injConfirm) {
					return rInjectOverride, around(s, i), true, agent
				}
			}
		case 'p':
			if hasPrefixFold(rest, "pre-approved") || hasPrefixFold(rest, "preapproved") || hasPrefixFold(rest, "pre-authorized") || hasPrefixFold(rest, "pre-authorised") {
				return rInjectOverride, around(s, i), true, agent
			}
		case 'w':
			if hasPrefixFold(rest, "without telling ") || hasPrefixFold(rest, "without informing ") || hasPrefixFold(rest, "without notifying ") {
				_, j := nextWord(s, i)
				_, j = nextWord(s, j)
				if userWithin(s, j, 3) {
					return rInjectOverride, around(s, i), true, agent
				}
			}
		case 's':
			if lineStart && (hasPrefixFold(rest, "system:") && rest[0] == 'S' && rest[1] == 'Y') {
				return rInjectTemplate, around(s, i), true, agent
			}
			if hasPrefixFold(rest, "system prompt") && asksToReveal(s, i) {
				return rInjectOverride, around(s, i), true, agent
			}
			if hasPrefixFold(rest, "skip all checks") || hasPrefixFold(rest, "skip all confirmations") || hasPrefixFold(rest, "skip the security") || hasPrefixFold(rest, "skip the safety") {
				return rInjectOverride, around(s, i), true, agent
			}
		case 'h':
			if lineStart && hasPrefixFold(rest, "human:") {
				human = i
			}
		case 'a':
			agent = agent || agentWord(rest)
			if lineStart && hasPrefixFold(rest, "assistant:") {
				assistant = i
			}
			if hasPrefixFold(rest, "act as ") {
				w, k := nextWord(s, i+7)
				if wordIs(w, "a") || wordIs(w, "an") {
					w, _ = nextWord(s, k)
				}
				if wordIn(w, injJailRoles) {
					return rInjectOverride, around(s, i), true, agent
				}
			}
		case 'c':
			// claude, copilot, codex, coderabbit: most words starting
			// "co" (commit, config) are none, and cost no word compare.
			if len(rest) > 2 && (lowerByte(rest[1]) == 'l' || lowerByte(rest[2]) == 'p' || lowerByte(rest[2]) == 'd') {
				agent = agent || agentWord(rest)
			}
		case 'l', 'g':
			agent = agent || agentWord(rest)
		case '<':
			if tok := chatToken(rest); tok != "" {
				return rInjectTemplate, tok, true, agent
			}
		case '[':
			if hasPrefixFold(rest, "[inst]") || hasPrefixFold(rest, "[/inst]") || hasPrefixFold(rest, "[system]") {
				return rInjectTemplate, around(s, i), true, agent
			}
		case '#':
			if hasPrefixFold(rest, "### system:") || hasPrefixFold(rest, "###system:") || hasPrefixFold(rest, "### instruction:") {
				return rInjectTemplate, around(s, i), true, agent
			}
		}
	}
	if human >= 0 && assistant > human {
		return rInjectTemplate, around(s, human), true, agent
	}
	return 0, "", false, agent
}

// chatToken matches special tokens of chat templates: <|im_start|>,
// <|system|>, <|start_header_id|>, <<SYS>>, <|endoftext|>.
func chatToken(s string) string {
	if len(s) >= 7 && s[:7] == "<<SYS>>" {
		return s[:7]
	}
	// <system>…</system> holding a sentence (Maven's <system>GitHub</system>
	// holds a name), or a closing </user> tag spoofing the end of a turn.
	if hasPrefixFold(s, "</user>") || hasPrefixFold(s, "</human>") {
		return s[:len("</user>")]
	}
	if hasPrefixFold(s, "<system>") {
		body := s[len("<system>"):]
		if end := strings.Index(body, "</"); end >= 0 {
			body = body[:end]
		}
		if len(body) >= 24 && strings.Count(body, " ") >= 3 {
			return s[:min(len(s), 60)]
		}
	}
	if len(s) < 4 || s[1] != '|' {
		return ""
	}
	j := 2
	for j < len(s) && j < 24 && (s[j] >= 'a' && s[j] <= 'z' || s[j] == '_') {
		j++
	}
	if j > 2 && j+1 < len(s) && s[j] == '|' && s[j+1] == '>' {
		return s[:j+2]
	}
	return ""
}

// keepSecretFromUser matches "do not tell the user", "don't mention this to
// the user", …: the verb right after the negation, a user within 4 words.
func keepSecretFromUser(s string, i int) bool {
	w, j := nextWord(s, i) // "do" or "don't"
	if wordIs(w, "do") {
		_, j = nextWord(s, j) // "not"
	}
	w, k := nextWord(s, j)
	if !wordIn(w, injTell) {
		return false
	}
	return userWithin(s, k, 4)
}

func userWithin(s string, j, n int) bool {
	for ; n > 0; n-- {
		w, k := nextWord(s, j)
		if w == "" {
			return false
		}
		if wordIs(w, "user") || wordIs(w, "users") || wordIs(w, "human") || wordIs(w, "operator") || wordIs(w, "owner") {
			return true
		}
		j = k
	}
	return false
}

// asksToReveal reports whether a verb such as reveal/print/show appears in
// the few words before "system prompt" at i.
func asksToReveal(s string, i int) bool {
	lo := max(0, i-40)
	window := s[lo:i]
	if p := strings.LastIndex(window, "\n\n"); p >= 0 {
		window = window[p+2:]
	}
	for j := 0; j < len(window); {
		w, k := nextWord(window, j)
		if w == "" {
			break
		}
		if wordIn(w, injRevealV) {
			return true
		}
		j = k
	}
	return false
}

// checkInjection scans every string the action carries, decoded layers
// included. Wording found in a message or HTTP body that leaves the
// machine, or in a file agents load as instructions, is planted for
// another agent and is blocked; elsewhere (files, queries, memory) it is
// escalated.
func (s *scan) checkInjection() {
	if !s.enabled(rInjectOverride) && !s.enabled(rInjectTemplate) && !s.enabled(rInjectOutbound) && !s.enabled(rInjectAgentRules) &&
		!s.enabled(rInjectAgentDirective) {
		return
	}
	rulesFile := s.writesAgentRulesFile()
	for i := range s.act.Strings {
		str := &s.act.Strings[i]
		r, frag, ok, agent := scanInjection(str.Value)
		if (agent || ok) && s.enabled(rInjectAgentDirective) {
			if dfrag, found := agentDirective(str.Value); found {
				s.add(rInjectAgentDirective, "addresses AI agents and asks them for credentials, fetched code, an approval or silence: "+
					"text planted for the next agent that reads it; check it before approving", dfrag)
			}
		}
		if rulesFile != "" && s.enabled(rInjectAgentRules) && harmfulDirective(str.Value, true) {
			s.add(rInjectAgentRules, "tells every future agent reading "+rulesFile+" to hand out credentials, run fetched code or act "+
				"without the user: refuse it", str.Value)
		}
		if !ok {
			continue
		}
		where := "the " + fieldLabel(str.Field) + " field"
		if str.Layer > 0 {
			where = "a " + str.Encoding + "-encoded part of the " + fieldLabel(str.Field) + " field"
		}
		switch {
		case rulesFile != "":
			s.add(rInjectAgentRules, "writes instructions aimed at agents into "+rulesFile+
				", which every future agent session loads: refuse it and review the file by hand", frag)
		case s.sendsOut(str.Field):
			s.add(rInjectOutbound, "sends text with prompt-injection wording ("+where+
				") to other people or agents: refuse it; if it is a quotation, send it as an attachment or rephrase", frag)
		}
		msg := "contains prompt-injection wording in " + where + ": check whether this text is trying to steer an agent before approving"
		if r == rInjectTemplate {
			msg = "contains chat-template or role markers in " + where + " that could make a model treat it as a system or assistant turn: check it before approving"
		}
		s.add(r, msg, frag)
	}
	if rulesFile != "" && s.enabled(rInjectAgentRules) {
		s.checkAgentRulesCommands(rulesFile)
	}
}

// agentRulesFiles are files coding agents read as standing instructions.
var agentRulesFiles = map[string]bool{
	"AGENTS.md": true, "CLAUDE.md": true, "GEMINI.md": true, ".cursorrules": true, ".windsurfrules": true,
	".clinerules": true, "copilot-instructions.md": true, ".goosehints": true, "AGENT.md": true, ".roorules": true,
}

// instructionDirs hold files agents load as instructions: rules, and
// custom commands, subagents and prompt files, loaded as the agent's
// orders when invoked.
var instructionDirs = []string{"/.cursor/rules/", "/.claude/commands/", "/.claude/agents/", "/.github/prompts/",
	"/.github/instructions/", "/.cursor/commands/", "/.windsurf/rules/", "/.clinerules/"}

// memoryFileName reports the names an agent's memory file takes.
func memoryFileName(base string) bool {
	switch strings.ToLower(base) {
	case "memory.md", "memories.md", "memory.json", "memories.json":
		return true
	}
	return false
}

// agentInstructionFile reports a file coding agents load as standing
// instructions: a rules file (agentRulesFiles, .cursor/rules/), or an
// agent's memory kept as a file (.agent/memory.md, ~/.claude/memory.md),
// which later sessions read as what the user once said.
func agentInstructionFile(abs string) bool {
	base := baseName(abs)
	if agentRulesFiles[base] {
		return true
	}
	for _, dir := range instructionDirs {
		if strings.Contains(abs, dir) {
			return true
		}
	}
	if !memoryFileName(base) {
		return false
	}
	switch baseName(parentDir(abs)) {
	case ".agent", ".agents", ".claude", ".cursor", ".codex", ".gemini", ".windsurf", ".continue", ".aider", ".cline", ".roo", ".goose", "memory":
		return true
	}
	return false
}

// toolDefinitionFile reports a JSON or YAML file that defines tools for
// agents (under tools/ or mcp/, or named for them): the descriptions in
// it are read by every agent that is offered the tool, as instructions.
func toolDefinitionFile(abs string) bool {
	ext := path.Ext(abs)
	if ext != ".json" && ext != ".yaml" && ext != ".yml" {
		return false
	}
	base := strings.ToLower(baseName(abs))
	return strings.Contains(abs, "/tools/") || strings.Contains(abs, "/mcp/") || strings.HasPrefix(base, "tool") || strings.Contains(base, "mcp")
}

// judgeToolDescription judges the text written into a tool definition:
// a description that tells the agent using the tool to read credentials
// and hand them over (tool poisoning) is a rules file's directive.
func (s *scan) judgeToolDescription(abs, content string) {
	if !s.enabled(rInjectAgentRules) || !strings.Contains(content, "description") || !harmfulDirective(content, true) {
		return
	}
	s.add(rInjectAgentRules, "writes a tool description into "+baseName(abs)+" that tells every agent offered the tool to hand out credentials, run fetched code or act without the user: refuse it",
		abs)
}

// checkFetchedInstructions flags text fetched from the network written
// into a file agents load as instructions (curl URL >> CLAUDE.md, wget
// -qO- URL | tee -a .cursorrules): whoever serves it writes the next
// session's orders, and can change them after any review.
func (s *scan) checkFetchedInstructions(cs *cmdScan, v *cmdView) {
	if !s.enabled(rInjectAgentRules) {
		return
	}
	file := ""
	for _, t := range cs.writeTargets(v) {
		if abs := cs.resolveIn(v.c, t).Abs; agentInstructionFile(abs) {
			file = baseName(abs)
			break
		}
	}
	if file == "" {
		return
	}
	fetched := isFetcher(v)
	for _, i := range cs.before(v) {
		if u := cs.view(i); u != nil && isFetcher(u) {
			fetched = true
		}
	}
	if fetched {
		s.add(rInjectAgentRules, "writes text fetched from the network into "+file+", which every future agent session loads as instructions: whoever serves it writes them; review the text and add it by hand",
			v.prog+" "+evJoin(v.args))
	}
}

// writesAgentRulesFile returns the base name of an agent instruction file
// the action writes, or "".
func (s *scan) writesAgentRulesFile() string {
	if s.act.Type != "write_file" && s.act.Type != "edit_file" {
		return ""
	}
	for i := range s.act.Paths {
		p := &s.act.Paths[i]
		b := baseName(p.Abs)
		if p.Access == actionWrite && agentInstructionFile(p.Abs) {
			return b
		}
	}
	return ""
}

// checkAgentRulesCommands judges shell snippets (`…`) in an agent rules
// file: a standing order to run curl | sh is as bad as running it.
func (s *scan) checkAgentRulesCommands(file string) {
	for i := range s.act.Strings {
		str := &s.act.Strings[i]
		if str.Layer == 0 && s.judgeAgentRulesSnippets(file, str.Value) {
			return
		}
	}
}

// judgeAgentRulesSnippets judges the `…` snippets of text meant for an
// agent rules file, and reports whether one would be refused.
func (s *scan) judgeAgentRulesSnippets(file, v string) bool {
	for {
		a := strings.IndexByte(v, '`')
		if a < 0 {
			return false
		}
		b := strings.IndexByte(v[a+1:], '`')
		if b < 0 {
			return false
		}
		snippet := v[a+1 : a+1+b]
		v = v[a+2+b:]
		if f, bad := s.judgeShell(snippet); bad {
			s.add(rInjectAgentRules, "tells every future agent reading "+file+" to run a command that would be refused ("+f.Message+"): refuse it", snippet)
			return true
		}
		// Code fetched from where no one vouches for it, as a standing
		// order: each session would install it again, and a person asked
		// once may not be asked the next time.
		if s.nested < maxNested && looksLikeShell(snippet) {
			for _, f := range s.nestedFindings(snippet, nil) {
				switch f.RuleID {
				case "rce.package-from-url", "supply-chain.package-source", "supply-chain.lookalike-package", "supply-chain.verification-off":
					s.add(rInjectAgentRules, "tells every future agent reading "+file+" to fetch code from a source no one vouches for ("+f.Message+"): refuse it", snippet)
					return true
				}
			}
		}
	}
}

// judgeAgentRulesText judges text a command line writes into an agent
// rules file (echo … >> AGENTS.md): its commands and its wording, as the
// file tools' writes are judged by checkInjection.
func (s *scan) judgeAgentRulesText(abs, content string) {
	file := baseName(abs)
	if !agentInstructionFile(abs) || !s.enabled(rInjectAgentRules) {
		return
	}
	if _, frag, ok := findInjection(content); ok {
		s.add(rInjectAgentRules, "writes instructions aimed at agents into "+file+", which every future agent session loads: refuse it and review the file by hand", frag)
		return
	}
	if harmfulDirective(content, true) {
		s.add(rInjectAgentRules, "tells every future agent reading "+file+" to hand out credentials, run fetched code or act "+
			"without the user: refuse it", content)
		return
	}
	if imp, label := s.secretImport(content); imp != "" {
		s.add(rInjectAgentRules, file+" imports "+imp+" ("+label+"): every future session would load it into the agent's context; refuse it", imp)
		return
	}
	s.judgeAgentRulesSnippets(file, content)
}

// secretImport returns an @path import in an instruction file's text
// (CLAUDE.md's @~/.aws/credentials) that names a secret, and its label.
func (s *scan) secretImport(content string) (string, string) {
	for i := strings.IndexByte(content, '@'); i >= 0; {
		rest := content[i+1:]
		if i == 0 || content[i-1] == ' ' || content[i-1] == '\n' || content[i-1] == '\t' || content[i-1] == '\'' || content[i-1] == '"' {
			end := strings.IndexAny(rest, " \t\n'\"`),")
			if end < 0 {
				end = len(rest)
			}
			if p := rest[:end]; strings.HasPrefix(p, "~/") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "./") || strings.HasPrefix(p, ".") {
				abs := p // an import is relative to the file: here, the workspace
				switch {
				case strings.HasPrefix(p, "~/"):
					abs = path.Join(s.act.Caller.Home, p[2:])
				case !strings.HasPrefix(p, "/"):
					abs = path.Join(s.act.Caller.WorkspaceRoot, p)
				}
				if sens, label := classify(abs, s.act.Caller.Home); sens != sensNone && sens != sensLeakOnly {
					return "@" + p, label
				}
			}
		}
		j := strings.IndexByte(rest, '@')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return "", ""
}

// sendsOut reports whether the string in field leaves the machine as a
// message or request body (not a URL, whose query is escalated only).
func (s *scan) sendsOut(field string) bool {
	top, _, _ := strings.Cut(field, ".")
	switch s.act.Type {
	case "send_email", "send_message":
		switch top {
		case "to", "cc", "bcc", "channel", "recipient", "recipients", "user", "thread_ts":
			return false
		}
		return true
	case "http_request", "browser_type":
		switch top {
		case "url", "method", "uri", "endpoint":
			return false
		}
		return true
	case "execute_command":
		buf := getViews()
		defer putViews(buf)
		cs := newCmdScan(s.act.Script, s.act, buf)
		for i := range cs.views {
			if sendsData(&cs.views[i]) {
				return true
			}
		}
	}
	return false
}

// sendsData reports network commands that upload a body.
func sendsData(v *cmdView) bool {
	switch v.netKind() {
	case "mail", "socket", "upload", "code":
		return true
	case "http":
		for _, a := range v.args {
			if a == "-d" || a == "-F" || a == "-T" || strings.HasPrefix(a, "--data") || strings.HasPrefix(a, "--form") ||
				strings.HasPrefix(a, "--json") || strings.HasPrefix(a, "--upload-file") || strings.HasPrefix(a, "--post-") || strings.HasPrefix(a, "--body") {
				return true
			}
		}
	}
	return false
}

func fieldLabel(f string) string {
	if f == "" {
		return "argument"
	}
	return f
}
