package heuristics

import "strings"

// Free text an agent will read rather than an action it proposes: an MCP
// server's tool descriptions and tool results. The detectors are the ones
// Analyze runs over an action's strings; these entry points let a gateway
// judge text that belongs to no action.

// InjectionIn reports prompt-injection wording in text (normalise it
// first with action.Normalize to see through hidden characters): the rule
// id (injection.instruction-override or injection.chat-template) and the
// fragment that matched.
func InjectionIn(text string) (ruleID, fragment string, ok bool) {
	r, frag, ok := findInjection(text)
	if !ok {
		return "", "", false
	}
	return rules[r].ID, frag, true
}

// SecretMatch is one recognised secret in a text.
type SecretMatch struct {
	RuleID string // e.g. secret.github-token
	// Kind names the secret for people: "a GitHub token".
	Kind string
	// Text is the secret as it appears in the text.
	Text string
}

// maxRedactPasses bounds RedactSecrets: each pass finds one match per
// detector and removes it, so this many passes remove that many of each
// kind; a text with more is refused by the caller's size limits first.
const maxRedactPasses = 64

// RedactSecrets replaces every secret the Tier 1 detectors recognise in
// text with "[REDACTED <rule id>]" and returns the new text and what was
// removed (one entry per distinct secret). complete is false when text
// held more secrets than RedactSecrets will look for; the caller should
// then withhold the text.
func RedactSecrets(text string) (out string, found []SecretMatch, complete bool) {
	out = text
	for range maxRedactPasses {
		var pass []SecretMatch
		findSecrets(out, func(det *secretDetector, m string) bool {
			pass = append(pass, SecretMatch{RuleID: rules[det.rule].ID, Kind: secretNames[det.rule], Text: m})
			return true
		})
		if len(pass) == 0 {
			return out, found, true
		}
		for _, m := range pass {
			out = strings.ReplaceAll(out, m.Text, "[REDACTED "+m.RuleID+"]")
		}
		found = append(found, pass...)
	}
	return out, found, false
}
