package heuristics

import (
	"math/bits"
	"strings"
)

// Secret material: recognisable credentials in data that leaves the
// machine. Every detector is a hand-written matcher behind a cheap literal
// prefilter, so ordinary text costs one pass of strings.Contains.
//
// A token sent to the service that issued it (a GitHub token to
// api.github.com, an OpenAI key to api.openai.com) is how it is meant to be
// used and is not reported. Config.TrustedHosts does not widen that: a
// trusted host is trusted with the project's data, not with another
// service's credentials (an AWS key pair posted to api.github.com lands in
// a gist). Secrets that organisations also issue themselves (JWTs, tokens
// of GitHub Enterprise, self-managed GitLab or a private npm registry) may
// go to a trusted host, which stands in for their issuer, unless the host
// belongs to another known service (a GitLab token to api.github.com). A
// private key has no host it may go to.
// Writing a secret into a workspace file is not exfiltration and is not
// judged here: the file stays on the machine.

type secretDetector struct {
	rule ruleIndex
	// anchor is a literal every match contains; find returns the match
	// starting around the anchor at index i, or "".
	anchor string
	find   func(s string, i int) string
	// issuers are domains the secret is legitimately sent to.
	issuers []string
	// trustedIssues lets the secret go to Config.TrustedHosts too, for
	// secrets an organisation may issue itself (JWTs, GitHub Enterprise,
	// self-managed GitLab, private npm registries), except to a trusted
	// host that is another detector's issuer.
	trustedIssues bool
}

var secretDetectors = []secretDetector{
	{rSecretPrivateKey, "PRIVATE KEY", findPEM, nil, false},
	{rSecretAWSKeyID, "AKIA", findAWSKeyID, []string{"amazonaws.com", "aws.amazon.com"}, false},
	{rSecretAWSKeyID, "ASIA", findAWSKeyID, []string{"amazonaws.com", "aws.amazon.com"}, false},
	{rSecretAWSSecret, "ws_secret", findAWSSecret, []string{"amazonaws.com", "aws.amazon.com"}, false},
	{rSecretAWSSecret, "WS_SECRET", findAWSSecret, []string{"amazonaws.com", "aws.amazon.com"}, false},
	{rSecretAWSSecret, "SecretAccessKey", findAWSSecret, []string{"amazonaws.com", "aws.amazon.com"}, false},
	{rSecretGitHub, "gh", findGitHub, []string{"github.com", "githubusercontent.com", "ghcr.io"}, true},
	{rSecretGitHub, "github_pat_", findGitHubPAT, []string{"github.com", "githubusercontent.com", "ghcr.io"}, true},
	{rSecretGitLab, "glpat-", prefixToken("glpat-", 20, false), []string{"gitlab.com"}, true},
	{rSecretSlackToken, "xox", findSlackToken, []string{"slack.com"}, false},
	{rSecretSlackWebhook, "hooks.slack.com/services/", findSlackWebhook, []string{"hooks.slack.com"}, false},
	{rSecretStripe, "k_live_", findStripe, []string{"stripe.com"}, false},
	{rSecretGoogle, "AIza", findGoogleKey, []string{"googleapis.com", "google.com"}, false},
	{rSecretAnthropic, "sk-ant-", prefixToken("sk-ant-", 32, false), []string{"anthropic.com"}, false},
	{rSecretOpenAI, "sk-", findOpenAI, []string{"openai.com"}, false},
	{rSecretJWT, "eyJ", findJWT, nil, true},
	{rSecretNPM, "npm_", prefixToken("npm_", 36, true), []string{"npmjs.org", "npmjs.com"}, true},
	{rSecretSendGrid, "SG.", findSendGrid, []string{"sendgrid.com", "sendgrid.net"}, false},
}

var secretNames = [numRules]string{
	rSecretPrivateKey: "a private key", rSecretAWSKeyID: "an AWS access key id", rSecretAWSSecret: "an AWS secret access key",
	rSecretGitHub: "a GitHub token", rSecretGitLab: "a GitLab token", rSecretSlackToken: "a Slack token",
	rSecretSlackWebhook: "a Slack webhook URL", rSecretStripe: "a live Stripe key", rSecretGoogle: "a Google API key",
	rSecretOpenAI: "an OpenAI API key", rSecretAnthropic: "an Anthropic API key", rSecretJWT: "a JSON Web Token",
	rSecretNPM: "an npm token", rSecretSendGrid: "a SendGrid API key",
}

// destination describes where outbound data goes.
type destination struct {
	hosts []string
	// recipients is true for email and chat messages: any recipient is a
	// person outside the machine, so no host can make it safe.
	recipients bool
	// toolServer is true for an MCP tool call: the arguments go to a
	// server program (maybe remote) the Shield knows nothing of, so a
	// secret in them is never safe; its paths are the server's business
	// (a filesystem server reads them where it runs), not an upload.
	toolServer bool
	label      string
}

// destinationOK reports whether the secret det finds may go to every
// destination host: a domain of its issuer, or for secrets organisations
// issue themselves (det.trustedIssues) a trusted host that is not another
// service's. Message recipients never are.
func (s *scan) destinationOK(d *destination, det *secretDetector) bool {
	if d.recipients || len(d.hosts) == 0 {
		return false
	}
	for _, h := range d.hosts {
		if issuedBy(h, det.issuers) {
			continue
		}
		if det.trustedIssues && s.an.trusted.match(h) && !otherServiceHost(h, det.rule) {
			continue
		}
		return false
	}
	return true
}

func issuedBy(host string, issuers []string) bool {
	for _, dom := range issuers {
		if domainMatch(host, dom) {
			return true
		}
	}
	return false
}

// otherServiceHost reports whether host belongs to the issuer of a secret
// other than rule's: api.github.com is GitHub's, so trusting it does not
// make it a home for GitLab or npm tokens.
func otherServiceHost(host string, rule ruleIndex) bool {
	for k := range secretDetectors {
		if secretDetectors[k].rule != rule && issuedBy(host, secretDetectors[k].issuers) {
			return true
		}
	}
	return false
}

// scanSecrets looks for secret material in text bound for d.
func (s *scan) scanSecrets(text string, d *destination) {
	findSecrets(text, func(det *secretDetector, m string) bool {
		if s.seen[det.rule] {
			return true
		}
		if s.destinationOK(d, det) {
			return true
		}
		advice := ": remove the secret from the request; only the service that issued it may receive it"
		if det.trustedIssues {
			advice = ": remove the secret from the request, or add the host to trusted_hosts if it is meant to receive it"
		}
		s.add(det.rule, "sends "+secretNames[det.rule]+" to "+d.label+advice, redactSecret(m))
		return true
	})
}

// findSecrets calls fn with each detector's first match in text, in the
// order of secretDetectors; fn returns false to stop.
//
// One pass over text finds every detector's anchors: a byte pair that
// starts no anchor (most of them) costs a table lookup, instead of a
// search of the whole text per detector.
func findSecrets(text string, fn func(det *secretDetector, match string) bool) {
	if len(text) < 16 || (!hasLongRun(text, 16) && !strings.Contains(text, "PRIVATE KEY")) {
		return // every secret but a PEM block is a long unbroken token
	}
	var found [maxSecretDetectors]string
	var done uint32 // detectors that have their match
	all := uint32(1)<<len(secretDetectors) - 1
	for i := 0; i+1 < len(text) && done != all; i++ {
		if !secretAnchorPairs.has(text[i], text[i+1]) {
			continue
		}
		for todo := secretAnchorStarts[text[i]] &^ done; todo != 0; todo &= todo - 1 {
			k := bits.TrailingZeros32(todo)
			det := &secretDetectors[k]
			if !strings.HasPrefix(text[i:], det.anchor) {
				continue
			}
			if m := det.find(text, i); m != "" {
				found[k] = m
				done |= 1 << k
			}
		}
	}
	for ; done != 0; done &= done - 1 {
		k := bits.TrailingZeros32(done)
		if !fn(&secretDetectors[k], found[k]) {
			return
		}
	}
}

// maxSecretDetectors bounds secretDetectors: findSecrets keeps a bit per
// detector in a uint32.
const maxSecretDetectors = 32

// secretAnchorStarts[c] has bit k set when detector k's anchor starts
// with the byte c.
var secretAnchorStarts = func() (t [256]uint32) {
	if len(secretDetectors) > maxSecretDetectors {
		panic("heuristics: more secret detectors than findSecrets can track")
	}
	for k := range secretDetectors {
		if len(secretDetectors[k].anchor) < 2 {
			panic("heuristics: a secret anchor needs at least two bytes")
		}
		t[secretDetectors[k].anchor[0]] |= 1 << k
	}
	return t
}()

// secretAnchorPairs holds the first two bytes of every anchor.
var secretAnchorPairs = func() (set bytePairSet) {
	for k := range secretDetectors {
		set.add(secretDetectors[k].anchor[0], secretDetectors[k].anchor[1])
	}
	return set
}()

// bytePairSet is a set of two-byte sequences, one bit each.
type bytePairSet [65536 / 64]uint64

func (s *bytePairSet) add(a, b byte) {
	i := uint(a)<<8 | uint(b)
	s[i/64] |= 1 << (i % 64)
}

func (s *bytePairSet) has(a, b byte) bool {
	i := uint(a)<<8 | uint(b)
	return s[i/64]&(1<<(i%64)) != 0
}

// tokenRunByte marks bytes that can appear inside a token.
var tokenRunByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = isAlnum(b) || b == '_' || b == '-' || b == '.' || b == '/' || b == '+' || b == '='
	}
	return t
}()

// hasLongRun reports whether text holds n or more token bytes in a row.
func hasLongRun(text string, n int) bool {
	run := 0
	for i := 0; i < len(text); i++ {
		if tokenRunByte[text[i]] {
			run++
			if run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// checkSecretWrittenBy is checkSecretWrites for text a command line
// writes into a file (echo, printf, a here-document, a sed replacement).
// A .env file is where such values belong, untracked: it passes.
func (s *scan) checkSecretWrittenBy(abs, content string) {
	if !s.enabled(rSecretInFile) || isDotenv(baseName(abs)) {
		return
	}
	s.secretsWritten(content, baseName(abs))
}

// secretsWritten reports the first secret in text written into a file
// (into names it).
func (s *scan) secretsWritten(text, into string) {
	findSecrets(text, func(det *secretDetector, m string) bool {
		s.add(rSecretInFile, "writes "+secretNames[det.rule]+" into "+into+": keep secrets out of files that get committed (use a secret manager or an untracked, git-ignored file) and confirm this is intended", redactSecret(m))
		return false
	})
}

// checkSecretWrites escalates secrets written into files: not an
// exfiltration (the file stays here), but hard-coded keys get committed.
func (s *scan) checkSecretWrites() {
	if !s.enabled(rSecretInFile) || (s.act.Type != "write_file" && s.act.Type != "edit_file") {
		return
	}
	for i := range s.act.Strings {
		str := &s.act.Strings[i]
		top, _, _ := strings.Cut(str.Field, ".")
		if !contentFields[top] {
			continue
		}
		s.secretsWritten(str.Value, "a file")
	}
}

// redactSecret keeps the recognisable prefix and hides the rest.
func redactSecret(m string) string {
	if len(m) <= 12 {
		return m
	}
	return m[:10] + "…[redacted]"
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isTokenByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }

// boundaryBefore reports whether s[i] starts a token.
func boundaryBefore(s string, i int) bool {
	return i == 0 || !isAlnum(s[i-1])
}

// runLen counts bytes from i accepted by ok.
func runLen(s string, i int, ok func(byte) bool) int {
	n := 0
	for i+n < len(s) && ok(s[i+n]) {
		n++
	}
	return n
}

// prefixToken matches prefix followed by at least min token bytes.
func prefixToken(prefix string, min int, alnumOnly bool) func(string, int) string {
	return func(s string, i int) string {
		if !boundaryBefore(s, i) {
			return ""
		}
		ok := isTokenByte
		if alnumOnly {
			ok = isAlnum
		}
		n := runLen(s, i+len(prefix), ok)
		if n < min {
			return ""
		}
		return s[i : i+len(prefix)+n]
	}
}

func findPEM(s string, i int) string {
	// "-----BEGIN [RSA|EC|OPENSSH|ENCRYPTED|PGP] PRIVATE KEY[ BLOCK]-----"
	lo := max(0, i-40)
	b := strings.LastIndex(s[lo:i], "-----BEGIN ")
	if b < 0 {
		return ""
	}
	start := lo + b
	if !strings.HasPrefix(s[i+len("PRIVATE KEY"):], "-----") && !strings.HasPrefix(s[i+len("PRIVATE KEY"):], " BLOCK-----") {
		return ""
	}
	return s[start:min(len(s), i+len("PRIVATE KEY")+16)]
}

func findAWSKeyID(s string, i int) string {
	if !boundaryBefore(s, i) || i+20 > len(s) {
		return ""
	}
	for j := i + 4; j < i+20; j++ {
		c := s[j]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return ""
		}
	}
	if i+20 < len(s) && isAlnum(s[i+20]) {
		return ""
	}
	return s[i : i+20]
}

// findAWSSecret looks for a 40-character key shortly after a name such as
// aws_secret_access_key.
func findAWSSecret(s string, i int) string {
	end := min(len(s), i+80)
	for j := i; j < end; j++ {
		if !isAWSSecretByte(s[j]) || (j > 0 && isAWSSecretByte(s[j-1])) {
			continue
		}
		n := runLen(s, j, isAWSSecretByte)
		if n == 40 && mixedToken(s[j:j+40]) {
			return s[j : j+40]
		}
		j += n
	}
	return ""
}

func isAWSSecretByte(c byte) bool { return isAlnum(c) || c == '/' || c == '+' }

// mixedToken requires upper case, lower case and digits, which random keys
// have and words or identifiers rarely do.
func mixedToken(t string) bool {
	var up, lo, dig bool
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'A' && c <= 'Z':
			up = true
		case c >= 'a' && c <= 'z':
			lo = true
		case c >= '0' && c <= '9':
			dig = true
		}
	}
	return up && lo && dig
}

func findGitHub(s string, i int) string {
	if !boundaryBefore(s, i) || i+4 > len(s) || s[i+3] != '_' || strings.IndexByte("pousr", s[i+2]) < 0 {
		return ""
	}
	n := runLen(s, i+4, isAlnum)
	if n < 30 {
		return ""
	}
	return s[i : i+4+n]
}

func findGitHubPAT(s string, i int) string {
	if !boundaryBefore(s, i) {
		return ""
	}
	n := runLen(s, i+len("github_pat_"), func(c byte) bool { return isAlnum(c) || c == '_' })
	if n < 22 {
		return ""
	}
	return s[i : i+len("github_pat_")+n]
}

func findSlackToken(s string, i int) string {
	if !boundaryBefore(s, i) || i+5 > len(s) || strings.IndexByte("abprs", s[i+3]) < 0 || s[i+4] != '-' {
		return ""
	}
	n := runLen(s, i+5, func(c byte) bool { return isAlnum(c) || c == '-' })
	if n < 10 {
		return ""
	}
	return s[i : i+5+n]
}

func findSlackWebhook(s string, i int) string {
	start := i + len("hooks.slack.com/services/")
	n := runLen(s, start, func(c byte) bool { return isAlnum(c) || c == '/' })
	if n < 20 || strings.Count(s[start:start+n], "/") < 2 {
		return ""
	}
	return s[i : start+n]
}

func findStripe(s string, i int) string {
	if i == 0 || (s[i-1] != 's' && s[i-1] != 'r') || !boundaryBefore(s, i-1) {
		return ""
	}
	n := runLen(s, i+len("k_live_"), isAlnum)
	if n < 20 {
		return ""
	}
	return s[i-1 : i+len("k_live_")+n]
}

func findGoogleKey(s string, i int) string {
	if !boundaryBefore(s, i) {
		return ""
	}
	n := runLen(s, i+4, isTokenByte)
	if n != 35 {
		return ""
	}
	return s[i : i+39]
}

// findOpenAI matches sk-proj-…, sk-svcacct-…, sk-admin-… and legacy sk-…
// keys, but not Anthropic's sk-ant- or ordinary words after "sk-".
func findOpenAI(s string, i int) string {
	if !boundaryBefore(s, i) || strings.HasPrefix(s[i:], "sk-ant-") {
		return ""
	}
	n := runLen(s, i+3, isTokenByte)
	tok := s[i+3 : i+3+n]
	if n < 32 {
		return ""
	}
	for _, p := range []string{"proj-", "svcacct-", "admin-"} {
		if strings.HasPrefix(tok, p) {
			if mixedToken(tok[len(p):]) {
				return s[i : i+3+n]
			}
			return ""
		}
	}
	if !mixedToken(tok) {
		return ""
	}
	return s[i : i+3+n]
}

func findJWT(s string, i int) string {
	if !boundaryBefore(s, i) {
		return ""
	}
	isB64URL := func(c byte) bool { return isAlnum(c) || c == '_' || c == '-' }
	j := i
	for seg := 0; seg < 3; seg++ {
		n := runLen(s, j, isB64URL)
		if n < 8 {
			return ""
		}
		j += n
		if seg < 2 {
			if j >= len(s) || s[j] != '.' {
				return ""
			}
			j++
		}
	}
	return s[i:j]
}

func findSendGrid(s string, i int) string {
	if !boundaryBefore(s, i) {
		return ""
	}
	n1 := runLen(s, i+3, isTokenByte)
	if n1 < 16 || i+3+n1 >= len(s) || s[i+3+n1] != '.' {
		return ""
	}
	n2 := runLen(s, i+4+n1, isTokenByte)
	if n2 < 30 {
		return ""
	}
	return s[i : i+4+n1+n2]
}
