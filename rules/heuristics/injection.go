package heuristics

import "strings"

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
	for _, c := range "idfynswhaDFIYNSWHA<[#" {
		t[c] = true
	}
	return t
}()

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
	injFillers = []string{"all", "any", "the", "your", "my", "of", "these", "those", "every", "everything", "and", "that", "you", "were", "have", "been", "given", "above"}
	injRoles   = []string{"dan", "jailbroken", "unrestricted", "unfiltered", "uncensored", "developer", "evil", "ai", "assistant", "chatbot", "model", "bot", "gpt", "chatgpt", "claude", "different", "no", "freed", "liberated"}
	injTell    = []string{"tell", "inform", "mention", "reveal", "show", "alert", "notify", "warn", "ask"}
	injRevealV = []string{"reveal", "print", "show", "output", "repeat", "leak", "dump", "display", "share", "give", "what", "disclose"}
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
	human, assistant := -1, -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !injectionStart[c] {
			continue
		}
		if i > 0 && isLetter(s[i-1]) && c != '<' && c != '[' && c != '#' {
			continue // not at a word start
		}
		lineStart := i == 0 || s[i-1] == '\n'
		rest := s[i:]
		switch lowerByte(c) {
		case 'i':
			if hasPrefixFold(rest, "ignore ") && overridePhrase(s, i+6, true) {
				return rInjectOverride, around(s, i), true
			}
		case 'd':
			switch {
			case hasPrefixFold(rest, "disregard ") && overridePhrase(s, i+9, false):
				return rInjectOverride, around(s, i), true
			case hasPrefixFold(rest, "do not ") || hasPrefixFold(rest, "don't ") || hasPrefixFold(rest, "dont "):
				if keepSecretFromUser(s, i) {
					return rInjectOverride, around(s, i), true
				}
			}
		case 'f':
			if hasPrefixFold(rest, "forget ") && overridePhrase(s, i+6, false) {
				return rInjectOverride, around(s, i), true
			}
		case 'y':
			if hasPrefixFold(rest, "you are now ") {
				w, k := nextWord(s, i+12)
				if wordIs(w, "a") || wordIs(w, "an") || wordIs(w, "in") || wordIs(w, "the") {
					w, _ = nextWord(s, k)
				}
				if wordIn(w, injRoles) {
					return rInjectOverride, around(s, i), true
				}
			}
		case 'n':
			if hasPrefixFold(rest, "new instructions:") || hasPrefixFold(rest, "new system prompt") {
				return rInjectOverride, around(s, i), true
			}
		case 'w':
			if hasPrefixFold(rest, "without telling ") || hasPrefixFold(rest, "without informing ") || hasPrefixFold(rest, "without notifying ") {
				_, j := nextWord(s, i)
				_, j = nextWord(s, j)
				if userWithin(s, j, 3) {
					return rInjectOverride, around(s, i), true
				}
			}
		case 's':
			if lineStart && (hasPrefixFold(rest, "system:") && rest[0] == 'S' && rest[1] == 'Y') {
				return rInjectTemplate, around(s, i), true
			}
			if hasPrefixFold(rest, "system prompt") && asksToReveal(s, i) {
				return rInjectOverride, around(s, i), true
			}
		case 'h':
			if lineStart && hasPrefixFold(rest, "human:") {
				human = i
			}
		case 'a':
			if lineStart && hasPrefixFold(rest, "assistant:") {
				assistant = i
			}
		case '<':
			if tok := chatToken(rest); tok != "" {
				return rInjectTemplate, tok, true
			}
		case '[':
			if hasPrefixFold(rest, "[inst]") || hasPrefixFold(rest, "[/inst]") || hasPrefixFold(rest, "[system]") {
				return rInjectTemplate, around(s, i), true
			}
		case '#':
			if hasPrefixFold(rest, "### system:") || hasPrefixFold(rest, "###system:") || hasPrefixFold(rest, "### instruction:") {
				return rInjectTemplate, around(s, i), true
			}
		}
	}
	if human >= 0 && assistant > human {
		return rInjectTemplate, around(s, human), true
	}
	return 0, "", false
}

// chatToken matches special tokens of chat templates: <|im_start|>,
// <|system|>, <|start_header_id|>, <<SYS>>, <|endoftext|>.
func chatToken(s string) string {
	if len(s) >= 7 && s[:7] == "<<SYS>>" {
		return s[:7]
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
// included.
func (s *scan) checkInjection() {
	if !s.enabled(rInjectOverride) && !s.enabled(rInjectTemplate) {
		return
	}
	for i := range s.act.Strings {
		str := &s.act.Strings[i]
		r, frag, ok := findInjection(str.Value)
		if !ok {
			continue
		}
		where := "the " + fieldLabel(str.Field) + " field"
		if str.Layer > 0 {
			where = "a " + str.Encoding + "-encoded part of the " + fieldLabel(str.Field) + " field"
		}
		msg := "contains prompt-injection wording in " + where + ": check whether this text is trying to steer an agent before approving"
		if r == rInjectTemplate {
			msg = "contains chat-template or role markers in " + where + " that could make a model treat it as a system or assistant turn: check it before approving"
		}
		s.add(r, msg, frag)
	}
}

func fieldLabel(f string) string {
	if f == "" {
		return "argument"
	}
	return f
}
