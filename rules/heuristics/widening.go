package heuristics

import (
	"slices"
	"strconv"
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Checks made to pass. An edit can keep a check's call in the code and
// still make it let everything through:
//
//   - a refusal returned as success (return nil, ErrInvalidCredentials →
//     return user, nil);
//   - a check handed a callback that accepts everything (CheckOrigin:
//     func(…) bool { return true }, origin: (o, cb) => cb(null, true));
//   - an exact comparison turned into a prefix or substring match (a
//     redirect URI, an API key);
//   - a request value compared with a literal added to a condition (a
//     header that skips two-factor authentication);
//   - a deleted if-block that refused a request or called a check;
//   - a token's or session's lifetime stretched to months or years;
//   - a secret written into the code where it was read from the
//     environment;
//   - credentials sent from the code to a host outside;
//   - a protective function made to return at once, a server-decided
//     value taken from the client, a condition made a constant, data
//     handed to a code sink, a bound that lets negative amounts pass;
//   - a backdoor: an administrator account with a written password, a
//     route that signs in as anyone, an authorisation hook granting
//     everything, the whole environment sent to a client;
//   - forwarded headers trusted from anywhere, a static server pointed
//     at /, an outside proxy, a foreign account trusted, a look-alike of
//     a well-known host.
//
// Each test compares a substitution's pattern p with its replacement r,
// both lower-cased, as looseningEdit does; backdoorCode and envDumped
// also judge code written whole (weakeningCode). enforcement.go holds the
// settings-level checks passingEdit runs last.

// passingEdit says what r makes pass that p checked, or "".
func passingEdit(p, r string) string {
	pm, rm := passingMarks(p, r)
	for _, c := range passingChecks {
		if pm&c.pattern != c.pattern || rm&c.replacement != c.replacement {
			continue
		}
		if what := c.judge(p, r); what != "" {
			return what
		}
	}
	return ""
}

// passingMarks returns the marks of p and r: one pass over each text
// says which checks can apply, and most edits name none of what they
// look for.
func passingMarks(p, r string) (pm, rm uint32) {
	return patternMarks.scanBits(p, allPassingMarks), replacementMarks.scanBits(r, allPassingMarks)
}

// passingCheck is one check of passingEdit: it runs when the pattern's
// marks include pattern and the replacement's include replacement, and
// says what the edit does, or "".
type passingCheck struct {
	pattern, replacement uint32
	judge                func(p, r string) string
}

// when returns what if cond holds, else "". what is built before the
// test: pass only constant messages.
func when(cond bool, what string) string {
	if cond {
		return what
	}
	return ""
}

// passingChecks, in the order their findings are preferred.
var passingChecks = []passingCheck{
	{pmDenial, 0, func(p, r string) string {
		if failureMadeSuccess(p, r) {
			return "returns success where the code refused (" + strings.TrimSpace(p) + ")"
		}
		return ""
	}},
	{pmCheckSubject, 0, func(p, r string) string {
		return when(acceptsEverything(p, r), "replaces a check with one that accepts everything")
	}},
	{pmExact, 0, func(p, r string) string {
		return when(exactMadePartial(p, r), "turns an exact comparison into a prefix or substring match, which a crafted value passes")
	}},
	{pmGuarded, pmRequest, func(p, r string) string {
		return when(magicRequestValue(p, r), "adds a request value matched against a literal to a security condition: a key that skips the check")
	}},
	{pmLifetime, 0, func(p, r string) string {
		return when(lifetimeStretched(p, r), "stretches a token's or session's lifetime to months or years")
	}},
	{pmEnvRead, 0, func(p, r string) string {
		return when(secretHardcoded(p, r), "writes a secret into the code where it was read from the environment")
	}},
	{0, pmOutbound, func(p, r string) string {
		if host := credentialsSentOut(p, r); host != "" {
			return "sends credentials from the code to " + host
		}
		return ""
	}},
	{pmFunction, 0, func(p, r string) string {
		if name := earlyReturn(p, r); name != "" {
			return "makes " + name + " return before it does its work"
		}
		return ""
	}},
	{0, pmBackdoor, func(p, r string) string {
		if what := backdoorCode(r); what != "" && backdoorCode(p) == "" {
			return what
		}
		return ""
	}},
	{pmEnvRead, 0, func(p, r string) string {
		return when(emptySecretFallback(p, r), "lets a secret fall back to empty when it is unset, which an empty credential then matches")
	}},
	{0, pmEnvDump, func(p, r string) string {
		return when(envDumped(r) && !envDumped(p), "sends the whole environment, every secret in it, to the client")
	}},
	{pmServerDecided, pmRequest, func(p, r string) string {
		return when(clientValueTrusted(p, r), "takes a value the server decided (a price, a tenant, the caller's address) from what the client sends")
	}},
	{pmAmount, 0, func(p, r string) string {
		return when(boundLoosened(p, r), "narrows a check on an amount so that negative values pass")
	}},
	{pmCondition, 0, func(p, r string) string {
		return when(constantCondition(p, r), "replaces a check's condition with a constant")
	}},
	{0, pmSink, func(p, r string) string {
		if sink := sinkAdded(p, r); sink != "" {
			return "passes data to " + sink + ", which runs it as code"
		}
		return ""
	}},
	{pmLimit, 0, func(p, r string) string { return when(limitLifted(p, r), "lifts a size, rate or attempt limit") }},
	{pmTrust, 0, func(p, r string) string {
		return when(wildcardWidened(p, r), "widens a trust condition to match everyone")
	}},
	{pmTrust, 0, func(p, r string) string {
		return when(foreignAccountTrusted(p, r), "adds another cloud account to those a role or policy trusts")
	}},
	{0, pmProxy, func(p, r string) string {
		return when(proxiesTrusted(r) && !proxiesTrusted(p), "trusts forwarded headers from any address: every caller then chooses the address it is seen from")
	}},
	{0, pmRequest, func(p, r string) string {
		return when(magicBypassAdded(r) && !magicBypassAdded(p), "adds a request value matched against a literal that lets the request through unchecked")
	}},
	{0, pmStatic, func(p, r string) string {
		return when(rootServed(p, r), "serves files from the root of the file system")
	}},
	{0, pmURL, func(p, r string) string {
		if host := lookalikeAdded(p, r); host != "" {
			return "points the code at " + host + ", a look-alike of a well-known host"
		}
		return ""
	}},
	{0, pmProxy, func(p, r string) string {
		if host := outsideProxy(p, r); host != "" {
			return "sends the code's outbound traffic through " + host + ", a proxy outside the organisation"
		}
		return ""
	}},
	{pmEnforcing, 0, func(p, r string) string {
		if what := enforcementLowered(p, r); what != "" {
			return "lowers an enforcement (" + what + ")"
		}
		return ""
	}},
	{0, pmMode, func(p, r string) string {
		if mode := modeWidened(p, r); mode != "" {
			return "opens a file's permissions to every user (" + mode + ")"
		}
		return ""
	}},
	{pmAllowList, 0, func(p, r string) string {
		if e := riskyEntriesAdded(p, r); e != "" {
			return "adds " + e + " to an allowlist"
		}
		return ""
	}},
}

// The marks passingMarks finds, one per family of checks in passingEdit:
// each check runs only when its texts name what it looks for.
const (
	pmDenial uint32 = 1 << iota
	pmCheckSubject
	pmExact
	pmGuarded
	pmRequest
	pmLifetime
	pmEnvRead
	pmOutbound
	pmFunction
	pmBackdoor
	pmEnvDump
	pmServerDecided
	pmAmount
	pmCondition
	pmSink
	pmLimit
	pmTrust
	pmProxy
	pmStatic
	pmEnforcing
	pmMode
	pmAllowList
	pmURL
	allPassingMarks = pmURL<<1 - 1
)

// patternMarks and replacementMarks gather the words each check of
// passingEdit starts from, in the replaced text and in its replacement
// (two sets: a fold set holds at most 255 needles).
var patternMarks = func() *foldSet {
	fs := &foldSet{}
	fs.addAll(pmDenial, denialWords)
	fs.addAll(pmCheckSubject, checkSubjects)
	fs.addAll(pmExact, exactCompares)
	fs.addAll(pmGuarded, guardedSubjects)
	fs.addAll(pmLifetime, lifetimeWords)
	fs.addAll(pmEnvRead, envReads)
	fs.addAll(pmFunction, []string{"func ", "def ", "function ", "fn "})
	fs.addAll(pmServerDecided, serverDecided)
	fs.addAll(pmAmount, amountWords)
	fs.addAll(pmCondition, []string{"if ", "if(", "unless "})
	fs.addAll(pmLimit, limitWords)
	fs.addAll(pmTrust, trustContext)
	fs.addAll(pmTrust, []string{"principal", "identifiers", "assume", "trust"})
	fs.addAll(pmEnforcing, []string{"enforc", "strict", "requir", "verify-", "deny", "reject", "block", "aws_iam", "custom", "cognito", "jwt"})
	fs.addAll(pmAllowList, []string{"allow", "permitted", "trusted", "safe_", "whitelist", "accepted"})
	return fs
}()

var replacementMarks = func() *foldSet {
	fs := &foldSet{}
	fs.addAll(pmRequest, requestValues)
	fs.addAll(pmRequest, clientInputs)
	fs.addAll(pmOutbound, outboundCalls)
	fs.addAll(pmBackdoor, accountCreations)
	fs.addAll(pmBackdoor, signInAsAnyone)
	fs.addAll(pmBackdoor, []string{"gate::", "canactivate(", "authorize(", ".before(function"})
	fs.addAll(pmEnvDump, []string{"process.env", "environ", "getenv()", "env::vars"})
	fs.addAll(pmSink, codeSinks)
	fs.addAll(pmProxy, []string{"prox", "real_ip", "forwarded"})
	fs.addAll(pmStatic, staticServers)
	fs.addAll(pmMode, []string{"0o", "06", "07", "04"})
	fs.addAll(pmURL, []string{"://"})
	return fs
}()

// clientInputs mark a value the client sends in a request's body, query
// or headers.
var clientInputs = []string{"dto.", "payload.", "body.", "req.body", "request.data", "request.json", "request.post", "request.form",
	"request.args", "req.query", "params[", "params.", "x-forwarded-for", "r.header.get(", "req.headers", "request.headers"}

// serverDecided name values the server must decide, never the client.
var serverDecided = []string{"price", "amount", "total", "discount", "tenant", "role", "owner", "user_id", "userid", "account_id",
	"balance", "credit", "quota", "is_admin", "isadmin", "permission", "ip :=", "ip =", "client_ip", "clientip", "remote_addr"}

// clientValueTrusted reports an assignment of a server-decided value
// (price, tenant, role, the caller's address) that r takes from client
// input where p did not.
func clientValueTrusted(p, r string) bool {
	if !containsAnyOf(p, serverDecided) || containsAnyOf(p, clientInputs) {
		return false
	}
	for _, in := range clientInputs {
		if strings.Contains(r, in) {
			return true
		}
	}
	return false
}

// constantCondition reports a condition of p that calls a check, names
// a guarded subject or the environment, which r replaces with a
// constant (if False:, if (true), if true {).
func constantCondition(p, r string) bool {
	cond := func(s string) bool { return containsAnyOf(s, []string{"if ", "if(", "unless "}) }
	if !cond(p) || !cond(r) {
		return false
	}
	fr := flatSetting(r)
	constant := false
	for _, c := range []string{"iffalse", "if(false)", "iftrue", "if(true)", "if0:", "if(0)", "if1:", "if(1)", "unlessfalse", "unlesstrue"} {
		if strings.Contains(fr, c) && !strings.Contains(flatSetting(p), c) {
			constant = true
		}
	}
	return constant && (len(guardCallNames(p)) > 0 || authChecks.in(p) || containsAnyOf(p, guardedSubjects) ||
		containsAnyOf(p, []string{"isdevelopment", "debug", "environment", "env", "production", "is_local", "testing"}))
}

// codeSinks run the data they are given as code or as an object graph.
var codeSinks = []string{"render_template_string(", "render inline:", "render(inline:", "runinnewcontext(", "runinthiscontext(", "new function(", "eval(",
	"pickle.loads(", "yaml.unsafe_load(", "unserialize(", "marshal.load(", "objectinputstream(", "xmldecoder(", "binaryformatter"}

// sinkAdded returns a code sink r brings in that p did not have, with
// something other than a literal to run, or "".
func sinkAdded(p, r string) string {
	for _, sink := range codeSinks {
		i := strings.Index(r, sink)
		if i < 0 || strings.Contains(p, sink) {
			continue
		}
		arg := strings.TrimSpace(r[i+len(sink):])
		if arg == "" || arg[0] == '"' || arg[0] == '\'' || arg[0] == ')' {
			continue // a literal: nothing from outside runs
		}
		return strings.TrimSuffix(sink, "(")
	}
	return ""
}

// denialWords mark an error, status or exception that refuses a caller.
var denialWords = []string{"invalid", "unauthor", "forbid", "denied", "expired", "mismatch", "credential", "permission",
	"notallowed", "not allowed", "unauthenticated", "locked", "badtoken", "bad token", "signature", "401", "403"}

// failureMadeSuccess reports a return (or raise, throw) of a refusal in
// p that r replaces with a return holding none.
func failureMadeSuccess(p, r string) bool {
	if !containsAnyOf(p, []string{"return ", "raise ", "throw "}) || !containsAnyOf(p, denialWords) {
		return false
	}
	if !strings.Contains(r, "return") || containsAnyOf(r, denialWords) || containsAnyOf(r, []string{"raise ", "throw ", "err", "abort", "false", "status("}) {
		return false
	}
	return true
}

// checkSubjects name what a check decides on.
var checkSubjects = []string{"origin", "cors", "allow", "verify", "valid", "check", "auth", "trust", "permit", "permission", "same",
	"accept", "host", "redirect", "csrf", "role", "admin", "cert", "signature"}

// acceptsEverything reports a replacement that brings in a callback or
// body answering yes to everything where p named a check.
func acceptsEverything(p, r string) bool {
	if !containsAnyOf(p, checkSubjects) {
		return false
	}
	fp, fr := squeeze(p), squeeze(r)
	for _, yes := range []string{"=>true", "returntrue", "cb(null,true)", "callback(null,true)", "done(null,true)", "{true}", "->true"} {
		if strings.Contains(fr, yes) && !strings.Contains(fp, yes) {
			return true
		}
	}
	// Python: lambda origin: True.
	if i := strings.Index(fr, "lambda"); i >= 0 && strings.Contains(fr[i:], ":true") && !strings.Contains(fp, "lambda") {
		return true
	}
	return false
}

// exactSubjects are values a check must match exactly.
var exactSubjects = []string{"redirect", "origin", "host", "callback", "audience", "issuer", "domain", "referer", "referrer", "url",
	"uri", "token", "signature", "secret", "key", "hash", "digest", "mac", "password", "nonce", "state"}

// exactCompares and partialMatches are the operators on each side.
var (
	exactCompares  = []string{"==", "!=", " not in ", ".equals(", "compare_digest", "constanttimecompare", "timingsafeequal", "hmac.equal", "secure_compare"}
	partialMatches = []string{"hasprefix(", "hassuffix(", "startswith(", "endswith(", "start_with?(", "end_with?(", "strings.contains(",
		"bytes.contains(", ".indexof(", ".match(", "=~", "re.search(", "re.match(", "strings.index("}
)

// exactMadePartial reports an exact comparison of a redirect, origin,
// key or signature that r replaces with a partial match.
func exactMadePartial(p, r string) bool {
	if !containsAnyOf(p, exactCompares) || !containsAnyOf(p, exactSubjects) {
		return false
	}
	for _, m := range partialMatches {
		if strings.Contains(r, m) && !strings.Contains(p, m) {
			return countAnyOf(r, exactCompares) < countAnyOf(p, exactCompares)
		}
	}
	return false
}

// countAnyOf counts the occurrences in s of each of subs.
func countAnyOf(s string, subs []string) int {
	n := 0
	for _, sub := range subs {
		n += strings.Count(s, sub)
	}
	return n
}

// requestValues mark a value the caller sets: a header, a query or form
// parameter, a cookie.
var requestValues = append([]string{"req.header(", "req.get(", ".header.get(", "headers.get(", "req.cookies", "request.cookies",
	".cookie(", ".query().get(", "query.get(", "request.args", "request.form", "req.query", "req.body", "getparameter(",
	"params[", "request.get.get(", "request.post.get("}, headerReads...)

// guardedSubjects mark a condition that guards something.
var guardedSubjects = []string{"mfa", "otp", "2fa", "totp", "auth", "verify", "admin", "role", "permission", "token", "csrf",
	"signature", "password", "login", "captcha", "ratelimit", "rate_limit", "allowed", "blocked", "banned", "scope"}

// magicRequestValue reports a condition of p on a guard that r extends
// with a request value compared with a string literal.
func magicRequestValue(p, r string) bool {
	if !containsAnyOf(p, []string{"if ", "if(", "unless ", "&&", "||", " and ", " or "}) || !containsAnyOf(p, guardedSubjects) ||
		containsAnyOf(p, requestValues) {
		return false
	}
	for _, read := range requestValues {
		i := strings.Index(r, read)
		if i < 0 {
			continue
		}
		// "and not request.cookies.get(…)": a value's mere presence skips it.
		if before := r[max(0, i-8):i]; (strings.Contains(before, "not ") || strings.HasSuffix(before, "!")) &&
			containsAnyOf(r[:i], []string{" and ", "&&", " or ", "||"}) {
			return true
		}
		rest := r[i:min(len(r), i+120)]
		for _, op := range []string{"== \"", "!= \"", "== '", "!= '", "=== '", "!== '", "=== \"", "!== \"", "==\"", "!=\"", "==='", "!=='"} {
			if strings.Contains(rest, op) {
				return true
			}
		}
	}
	return false
}

// lifetimeWords and lifetimeSubjects mark the lifetime of a credential.
var (
	lifetimeWords    = []string{"ttl", "expir", "max_age", "maxage", "cookie_age", "lifetime", "expires_in", "expiresin", "valid_for", "validity", "exp:"}
	lifetimeSubjects = []string{"token", "session", "cookie", "jwt", "refresh", "access", "link", "otp", "reset", "cert", "password", "key", "auth", "login"}
)

// lifetimeStretched reports a credential's lifetime that r makes at
// least fifty times longer and a month or more.
func lifetimeStretched(p, r string) bool {
	if !containsAnyOf(p, lifetimeWords) || !containsAnyOf(p+r, lifetimeSubjects) {
		return false
	}
	before, after := longestDuration(p), longestDuration(r)
	if before == 0 && strings.Contains(p, ".*") {
		return after >= 365*86400 // a pattern that matched any value: a year or more is the tell
	}
	return before > 0 && after >= 50*before && after >= 30*86400
}

// durationUnits are seconds per unit, by the words that name them.
var durationUnits = []struct {
	word    string
	seconds int64
}{
	{"year", 365 * 86400}, {"month", 30 * 86400}, {"week", 7 * 86400}, {"day", 86400}, {"hour", 3600}, {"minute", 60}, {"min", 60}, {"second", 1},
	{"sec", 1}, {"ms", 0}, {"y", 365 * 86400}, {"w", 7 * 86400}, {"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1},
}

// longestDuration returns the longest duration s writes, in seconds:
// "15 * time.Minute", "87600h", "timedelta(hours=2)", "60 * 60 * 24", or
// a bare number taken as seconds. 0 when s writes none.
func longestDuration(s string) int64 {
	var best int64
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || i > 0 && (isWordByte(s[i-1]) || s[i-1] == '.') {
			continue
		}
		start := i
		product, j := int64(1), i
		for {
			k := j
			for k < len(s) && (isDigit(s[k]) || s[k] == '_') {
				k++
			}
			n, err := strconv.ParseInt(strings.ReplaceAll(s[j:k], "_", ""), 10, 64)
			if err != nil || n > 1<<31 || product > 1<<40 {
				product = 0
				break
			}
			product *= n
			m := k
			for m < len(s) && (s[m] == ' ' || s[m] == '*') {
				m++
			}
			if m > k && m < len(s) && isDigit(s[m]) && strings.Contains(s[k:m], "*") {
				j = m
				continue
			}
			j = k
			break
		}
		if product == 0 {
			continue
		}
		unit := unitAfter(s[j:])
		if unit < 0 {
			unit = unitBefore(s[:start])
		}
		if unit < 0 {
			unit = 1
		}
		if d := product * unit; d > best {
			best = d
		}
		i = j
	}
	return best
}

// unitAfter returns the seconds of a unit written after a number
// ("h", " * time.Hour", " days"), or -1.
func unitAfter(s string) int64 {
	s = strings.TrimLeft(s, " *")
	s = strings.TrimPrefix(s, "time.")
	for _, u := range durationUnits {
		if strings.HasPrefix(s, u.word) && (len(s) == len(u.word) || !isWordByte(s[len(u.word)]) || len(u.word) > 1 && s[len(u.word)] == 's') {
			return u.seconds
		}
	}
	return -1
}

// unitBefore returns the seconds of a unit named just before a number
// (timedelta(hours=2), days: 3), or -1.
func unitBefore(s string) int64 {
	s = strings.TrimRight(s, " =:")
	for _, u := range durationUnits {
		if len(u.word) > 2 && (strings.HasSuffix(s, u.word) || strings.HasSuffix(s, u.word+"s")) {
			return u.seconds
		}
	}
	return -1
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// envReads mark a value read from the environment or a secret store.
var envReads = []string{"getenv(", "environ", "process.env", "env(", "env[", "env.fetch", "config.get(", "secrets.", "vault",
	"viper.get", "settings.", "lookupenv(", "system.getenv", "configuration["}

// secretKeyNames widen secretNamed to keys written as one word.
var secretKeyNames = []string{"signingkey", "privatekey", "hmackey", "jwtkey", "encryptionkey", "masterkey", "secretkey", "clientsecret"}

// secretHardcoded reports a secret-named value that p read from the
// environment and r writes as a literal.
func secretHardcoded(p, r string) bool {
	if !containsAnyOf(p, envReads) || containsAnyOf(r, envReads) {
		return false
	}
	if !secretNamed(p) && !containsAnyOf(p, secretKeyNames) {
		return false
	}
	for _, lit := range quotedStrings(r) {
		if len(lit) >= 3 && !strings.Contains(p, lit) {
			return true
		}
	}
	return false
}

// quotedStrings returns the text between double or single quotes in s.
func quotedStrings(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		q := s[i]
		if q != '"' && q != '\'' {
			continue
		}
		end := strings.IndexByte(s[i+1:], q)
		if end < 0 {
			break
		}
		out = append(out, s[i+1:i+1+end])
		i += end + 1
	}
	return out
}

// outboundCalls mark code that sends a request.
var outboundCalls = []string{"http.post(", "http.get(", "http.newrequest(", "requests.post(", "requests.get(", "fetch(", "axios.",
	"urlopen(", "httpx.", "net::http", "httparty.", "curl_exec(", "webclient", "resttemplate", "proxy_pass ", "mirror "}

// credentialWords mark what a request should not carry out.
var credentialWords = []string{"password", "passwd", "token", "secret", "cookie", "authorization", "api_key", "apikey",
	"credential", "private_key", "req.headers", "request.headers", "process.env", "os.environ"}

// credentialsSentOut returns the host of a request r brings in that
// carries credentials, when the host is not the organisation's, or "".
func credentialsSentOut(p, r string) string {
	if !containsAnyOf(r, outboundCalls) || containsAnyOf(p, outboundCalls) || !containsAnyOf(r, credentialWords) {
		return ""
	}
	for _, scheme := range []string{"https://", "http://"} {
		i := strings.Index(r, scheme)
		if i < 0 {
			continue
		}
		host := r[i+len(scheme):]
		if end := strings.IndexAny(host, "/\"' :?)`;$\\"); end >= 0 {
			host = host[:end]
		}
		if host != "" && !strings.Contains(p, host) && !privateHost(host) && !internalNetworkHost(host) {
			return host
		}
	}
	return ""
}

// checkDeleted reports deleted code (a sed /re/d or an emptied
// substitution) that held an if whose body refused a request or whose
// condition called a check or compared a guarded value.
func checkDeleted(deleted string) bool {
	d := strings.ToLower(unescapeRegex(deleted))
	// A guard's decorator or an audit record deleted outright.
	if t := strings.TrimLeft(d, " \t\n^"); strings.HasPrefix(t, "@") && (len(guardCallNames(t)) > 0 || authChecks.in(t)) ||
		containsAnyOf(d, []string{"audit.", "audit_log", "auditlog", "audit(", "auditor.", "security_log"}) {
		return true
	}
	if !containsAnyOf(d, []string{"if ", "if(", "if !", "unless "}) {
		return false
	}
	return len(guardCallNames(d)) > 0 || strongRefusal(d) ||
		containsAnyOf(d, []string{"http.error(", "badrequest", "status(400", "abort(4", "raise ", "throw ", "return err", "..",
			"csrf", "nonce", "state", "signature", "tenant", "owner", "permission", "role", "idempot", "replay", "expired"})
}

// dutyWords name a function whose work is a protection: recording,
// redacting, checking, limiting.
var dutyWords = []string{"audit", "record", "redact", "scrub", "mask", "verify", "check", "validat", "authoriz", "authent", "safe", "allow",
	"saniti", "escape", "encrypt", "sign", "limit", "throttle", "permission", "guard", "require", "ensure", "assert", "csrf"}

// earlyReturn returns the name of a protective function whose header p
// matches and after which r puts an unconditional return (&\n\treturn
// nil; a sed a-command's "return value"), or "".
func earlyReturn(p, r string) string {
	name := functionHeader(p)
	if name == "" || !containsAnyOf(name, dutyWords) {
		return ""
	}
	body := strings.TrimLeft(strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(r), " \t")
	for _, keep := range []string{"&", "$&", "\\0", "$0", "$1", "\\1"} {
		body = strings.TrimPrefix(body, keep)
	}
	if strings.HasPrefix(body, strings.TrimSpace(p)) {
		body = body[len(strings.TrimSpace(p)):]
	}
	first := strings.TrimSpace(strings.TrimLeft(body, "\\"))
	if i := strings.IndexByte(first, '\n'); i >= 0 && strings.TrimSpace(first[:i]) == "" {
		first = strings.TrimSpace(first[i+1:])
	}
	if strings.HasPrefix(first, "return") || first == "pass" || strings.HasPrefix(first, "pass\n") {
		return name
	}
	return ""
}

// functionHeader returns the name a function definition in s declares
// (func (a *A) Record(…), def redact(…), function check(…)), or "".
func functionHeader(s string) string {
	s = strings.TrimLeft(strings.TrimPrefix(strings.TrimLeft(strings.TrimSpace(s), "("), "^"), " ") // a group around the header
	for _, kw := range []string{"func ", "def ", "async def ", "function ", "fn ", "pub fn ", "public function ", "private function "} {
		rest, ok := strings.CutPrefix(s, kw)
		if !ok {
			continue
		}
		if strings.HasPrefix(rest, "(") { // a Go method's receiver
			if end := strings.IndexByte(rest, ')'); end >= 0 {
				rest = strings.TrimSpace(rest[end+1:])
			}
		}
		if open := strings.IndexByte(rest, '('); open > 0 {
			return strings.TrimSpace(rest[:open])
		}
	}
	return ""
}

// sedAddressedText returns, for each a or i command of a sed script
// with a /re/ address, the address and the text it adds.
func sedAddressedText(script string) [][2]string {
	var out [][2]string
	for i := 0; i < len(script); i++ {
		if script[i] != '/' || !sedCommandStart(script, i) {
			continue
		}
		end := closingSlash(script[i+1:])
		if end < 0 {
			return out
		}
		re := script[i+1 : i+1+end]
		rest := strings.TrimLeft(script[i+2+end:], " ")
		if rest == "" || rest[0] != 'a' && rest[0] != 'i' {
			i += end + 1
			continue
		}
		text := strings.TrimPrefix(rest[1:], "\\")
		text = strings.TrimLeft(text, " ")
		text = strings.TrimPrefix(text, "\n")
		if j := strings.IndexByte(text, '\n'); j >= 0 {
			text = text[:j]
		}
		out = append(out, [2]string{re, unescapeSedText(text)})
		i += end + 1
	}
	return out
}

// accountCreations mark code that creates a user account.
var accountCreations = []string{"user.create", "users.create", "createuser(", "create_user(", "create_superuser(", "user.objects.create",
	"objects.create_user(", "objects.create_superuser(", "user(username=", "user(email=", "get_or_create(username=", "get_or_create(email=",
	"new user(", "seeduser(", "maintenanceuser(", "insert into users", "adduser(", "add_user(", "register_user("}

// signInAsAnyone mark code that signs a session in as a user it is given.
var signInAsAnyone = []string{"loginusingid(", "auth::login(", "auth()->login(", "force_login(", "login_user(", "sign_in(",
	"session[:user_id] =", "req.login(", "setuser("}

// routeDefinitions mark code that serves a route.
var routeDefinitions = []string{"route::get(", "route::post(", "route::any(", "app.get(", "app.post(", "router.get(", "router.post(",
	"@app.route(", "@app.get(", "@app.post(", "r.handlefunc(", "mux.handlefunc(", "http.handlefunc(", "get '/", "post '/"}

// backdoorCode says what backdoor lower-cased code adds, or "": an
// administrator account with a password written into it, a route that
// signs in as any user, an authorisation hook that grants everything.
func backdoorCode(code string) string {
	if containsAnyOf(code, accountCreations) && containsAnyOf(code, []string{"admin", "superuser", "is_staff=true", "\"is_staff\": true"}) &&
		containsAnyOf(code, []string{"password: \"", "password: '", "password=\"", "password='", "password\": \"", "$2a$", "$2b$", "$2y$", "$argon2",
			"set_password(\"", "set_password('", "make_password(\"", "make_password('"}) {
		return "creates an administrator account with a password written into the code"
	}
	// create_superuser("name", "mail", "password"): its third literal.
	if i := strings.Index(code, "create_superuser("); i >= 0 {
		call := code[i:]
		if end := strings.IndexByte(call, ')'); end > 0 && len(quotedStrings(call[:end])) >= 3 {
			return "creates an administrator account with a password written into the code"
		}
	}
	if containsAnyOf(code, signInAsAnyone) && containsAnyOf(code, routeDefinitions) {
		return "adds a route that signs in as whichever user it is given"
	}
	for _, hook := range []string{"gate::before(", "gate::after(", "gate::define(", "canactivate(", "authorize(", ".before(function"} {
		if i := strings.Index(code, hook); i >= 0 {
			rest := squeeze(code[i:min(len(code), i+160)])
			if strings.Contains(rest, "=>true") || strings.Contains(rest, "returntrue") {
				return "adds an authorisation hook that grants everything"
			}
		}
	}
	return ""
}

// plantedCodePath reports seed, fixture and test data, where accounts
// with known passwords are how development works.
func plantedCodePath(abs string) bool {
	l := strings.ToLower(abs)
	return testPath(abs) || containsAnyOf(l, []string{"seed", "fixture", "factor", "example", "sample", "/docs/"})
}

// emptySecretFallback reports a secret p read strictly (environ["KEY"],
// ENV.fetch("KEY")) that r reads with an empty default.
func emptySecretFallback(p, r string) bool {
	if !containsAnyOf(p, []string{"environ[", "env.fetch(", "env[", "mustgetenv(", "required("}) || !secretNamed(p) && !containsAnyOf(p, secretKeyNames) {
		return false
	}
	flat := flatSetting(r)
	return containsAnyOf(r, []string{"getenv(", "environ.get(", "env.get(", "process.env"}) &&
		containsAnyOf(flat, []string{",)", "||)", "??)", ",\"\")", "||\"\"", "??\"\""}) || strings.HasSuffix(strings.TrimSpace(r), ", \"\")") ||
		strings.Contains(r, ", \"\")") || strings.Contains(r, ", '')")
}

// envDumped reports code that hands a response the whole environment:
// res.json({ env: process.env }), jsonify(dict(os.environ)).
func envDumped(code string) bool {
	if !containsAnyOf(code, []string{"res.json(", "res.send(", "jsonify(", "return {", "return json", "json.dumps(", "render json:", "c.json(", "ok(",
		"response.json(", ".json(process.env", ".send(process.env", "json.dump(", "writefilesync("}) {
		return false
	}
	dumped := false
	for _, env := range []string{"process.env", "os.environ", "system.getenv()", "env::vars()", "environ.items()", "os.environ()"} {
		shell.EachIndex(code, env, func(i int) bool {
			j := i + len(env)
			dumped = j >= len(code) || code[j] != '.' && code[j] != '[' && code[j] != '(' && !isWordByte(code[j])
			return !dumped
		})
		if dumped {
			return true
		}
	}
	return false
}

// amountWords name a quantity a bound check keeps positive.
var amountWords = []string{"amount", "price", "quantity", "qty", "balance", "total", "value", "count", "credits", "points", "fee"}

// boundLoosened reports a check that refused zero and negatives
// (amount <= 0) which r narrows to zero alone (amount == 0), letting
// negative amounts through.
func boundLoosened(p, r string) bool {
	if !containsAnyOf(p, amountWords) {
		return false
	}
	fp, fr := squeeze(p), squeeze(r)
	return containsAnyOf(fp, []string{"<=0", "<1", "<0"}) && !containsAnyOf(fr, []string{"<=0", "<1", "<0"}) &&
		containsAnyOf(fr, []string{"==0", "===0", "isnone", "==nil"})
}

// proxiesTrusted reports code that trusts forwarded-for headers from
// any address: trusted_proxies of 0.0.0.0/0, known proxies cleared,
// Express's trust proxy set to true.
func proxiesTrusted(code string) bool {
	f := squeeze(code)
	if containsAnyOf(f, []string{"knownnetworks.clear()", "knownproxies.clear()", "forwardlimit=null", "trustproxy,true",
		"trust_proxy=true", "forwarded_allow_ips=*", "set_real_ip_from0.0.0.0/0"}) {
		return true
	}
	return containsAnyOf(f, []string{"trusted_proxies", "trustedproxies", "proxy_fix", "real_ip"}) && containsAnyOf(f, []string{"0.0.0.0/0", "::/0"})
}

// passThrough mark code that lets a request go on unchecked.
var passThrough = []string{"next(", "next.servehttp(", "call_next(", "return true", "return handler(", "return nil", "c.next()", "ctx.next("}

// magicBypassAdded reports code with a condition comparing a request
// value with a string literal whose branch lets the request through
// (if r.URL.Query().Get("debug") == "x" { next.ServeHTTP(w, r); return }).
func magicBypassAdded(code string) bool {
	found := false
	for _, read := range requestValues {
		shell.EachIndex(code, read, func(i int) bool {
			if !strings.Contains(code[max(0, i-40):i], "if") {
				return true
			}
			rest := code[i:min(len(code), i+220)]
			eq := strings.Index(rest, "== \"")
			if eq < 0 {
				eq = strings.Index(rest, "== '")
			}
			found = eq >= 0 && eq <= 100 && containsAnyOf(rest[eq:], passThrough)
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// staticServers mark code that serves a directory's files.
var staticServers = []string{"servedir::new(", "files::new(", "express.static(", "http.fileserver(", "http.dir(", "staticfiles(directory=",
	"send_from_directory(", "static_folder=", "usestaticassets(", "serve_static", "public_folder"}

// rootServed reports a static file server that r points at / or the
// home directory.
func rootServed(p, r string) bool {
	if !containsAnyOf(r, staticServers) {
		return false
	}
	if strings.Contains(r, "show_files_listing()") && !strings.Contains(p, "show_files_listing()") {
		return true
	}
	for _, root := range []string{"(\"/\")", "('/')", "=\"/\"", "='/'", ",\"/\")", ",'/')", "(\"/etc", "('/etc", "(\"~", "(os.homedir", "(\"/root"} {
		if strings.Contains(squeeze(r), squeeze(root)) && !strings.Contains(squeeze(p), squeeze(root)) {
			return true
		}
	}
	return false
}

// outsideProxy returns the host of a proxy r sets for the code's
// requests that p did not name, when it is not the organisation's.
func outsideProxy(p, r string) string {
	if !strings.Contains(r, "proxy") {
		return ""
	}
	for _, h := range urlHosts(r) {
		if !strings.Contains(p, h) && !privateHost(h) && !internalNetworkHost(h) {
			return h
		}
	}
	// http.ProxyURL(&url.URL{Scheme: "http", Host: "185.220.101.47:3128"})
	if i := strings.Index(r, "host:"); i >= 0 {
		h := strings.Trim(valueToken(r[i+5:]), "\"'")
		if rest := strings.TrimLeft(r[i+5:], " \"'"); h != "" {
			h, _, _ = strings.Cut(strings.TrimSpace(rest), ":")
			h = strings.Trim(h, "\"' ,})")
		}
		if h != "" && strings.Contains(h, ".") && !strings.Contains(p, h) && !privateHost(h) && !internalNetworkHost(h) {
			return h
		}
	}
	return ""
}

// foreignAccountTrusted reports a trust or principal list (identifiers,
// Principal, assume_role) that r extends with an AWS account number p
// did not name.
func foreignAccountTrusted(p, r string) bool {
	if !containsAnyOf(p, []string{"principal", "identifiers", "assume", "trust"}) {
		return false
	}
	before := accountNumbers(p)
	for _, n := range accountNumbers(r) {
		if !slices.Contains(before, n) {
			return true
		}
	}
	return false
}

// accountNumbers returns the 12-digit AWS account numbers of ARNs in s
// (arn:aws:iam::123456789012:…).
func accountNumbers(s string) []string {
	var out []string
	shell.EachIndex(s, "::", func(i int) bool {
		i += 2
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j-i == 12 && j < len(s) && s[j] == ':' {
			out = append(out, s[i:j])
		}
		return true
	})
	return out
}

// brandHosts are the real domains of names that look-alike hosts borrow
// (registry.dockerhub-cache.io, cdn.jsdelivr-stats.com).
var brandHosts = map[string][]string{
	"dockerhub": {"docker.io", "docker.com"}, "docker": {"docker.io", "docker.com"}, "ghcr": {"ghcr.io"}, "quay": {"quay.io"},
	"jsdelivr": {"jsdelivr.net"}, "unpkg": {"unpkg.com"}, "cdnjs": {"cloudflare.com"}, "npmjs": {"npmjs.org", "npmjs.com"},
	"pypi": {"pypi.org", "python.org"}, "pythonhosted": {"pythonhosted.org"}, "github": {"github.com", "githubusercontent.com", "github.io", "githubassets.com"},
	"gitlab": {"gitlab.com"}, "googleapis": {"googleapis.com"}, "gstatic": {"gstatic.com"}, "amazonaws": {"amazonaws.com"},
	"stripe": {"stripe.com", "stripe.network"}, "sentry": {"sentry.io"}, "cloudflare": {"cloudflare.com"},
}

// brandLookalike returns the brand a host borrows without being one of
// its domains, or "".
func brandLookalike(host string) string {
	h := strings.ToLower(host)
	for brand, reals := range brandHosts {
		if !strings.Contains(h, brand) {
			continue
		}
		real := false
		for _, d := range reals {
			real = real || h == d || strings.HasSuffix(h, "."+d)
		}
		if !real {
			return brand
		}
	}
	return ""
}

// lookalikeAdded returns a host r brings in (a URL, or an image's
// registry) that borrows a known brand's name, or "".
func lookalikeAdded(p, r string) string {
	for _, h := range urlHosts(r) {
		if !strings.Contains(p, h) && brandLookalike(h) != "" {
			return h
		}
	}
	return ""
}
