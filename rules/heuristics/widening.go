package heuristics

import (
	"strconv"
	"strings"
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
//   - credentials sent from the code to a host outside.
//
// Each test compares a substitution's pattern p with its replacement r,
// both lower-cased, as looseningEdit does.

// passingEdit says what r makes pass that p checked, or "".
func passingEdit(p, r string) string {
	switch {
	case failureMadeSuccess(p, r):
		return "returns success where the code refused (" + strings.TrimSpace(p) + ")"
	case acceptsEverything(p, r):
		return "replaces a check with one that accepts everything"
	case exactMadePartial(p, r):
		return "turns an exact comparison into a prefix or substring match, which a crafted value passes"
	case magicRequestValue(p, r):
		return "adds a request value matched against a literal to a security condition: a key that skips the check"
	case lifetimeStretched(p, r):
		return "stretches a token's or session's lifetime to months or years"
	case secretHardcoded(p, r):
		return "writes a secret into the code where it was read from the environment"
	}
	if host := credentialsSentOut(p, r); host != "" {
		return "sends credentials from the code to " + host
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
var checkSubjects = []string{"origin", "allow", "verify", "valid", "check", "auth", "trust", "permit", "permission", "same",
	"accept", "host", "redirect", "csrf", "role", "admin", "cert", "signature"}

// acceptsEverything reports a replacement that brings in a callback or
// body answering yes to everything where p named a check.
func acceptsEverything(p, r string) bool {
	if !containsAnyOf(p, checkSubjects) {
		return false
	}
	fp, fr := flatSetting(p), flatSetting(r)
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
	exactCompares  = []string{"==", "!=", ".equals(", "compare_digest", "constanttimecompare", "timingsafeequal", "hmac.equal", "secure_compare"}
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
	lifetimeWords    = []string{"ttl", "expir", "max_age", "maxage", "lifetime", "expires_in", "expiresin", "valid_for", "validity", "exp:"}
	lifetimeSubjects = []string{"token", "session", "cookie", "jwt", "refresh", "access", "link", "otp", "reset", "cert", "password", "key", "auth", "login"}
)

// lifetimeStretched reports a credential's lifetime that r makes at
// least fifty times longer and a month or more.
func lifetimeStretched(p, r string) bool {
	if !containsAnyOf(p, lifetimeWords) || !containsAnyOf(p+r, lifetimeSubjects) {
		return false
	}
	before, after := longestDuration(p), longestDuration(r)
	return before > 0 && after >= 50*before && after >= 30*86400
}

// durationUnits are seconds per unit, by the words that name them.
var durationUnits = []struct {
	word    string
	seconds int64
}{
	{"year", 365 * 86400}, {"week", 7 * 86400}, {"day", 86400}, {"hour", 3600}, {"minute", 60}, {"min", 60}, {"second", 1},
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
		if len(lit) >= 6 && !strings.Contains(p, lit) {
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
	"urlopen(", "httpx.", "net::http", "httparty.", "curl_exec(", "webclient", "resttemplate"}

// credentialWords mark what a request should not carry out.
var credentialWords = []string{"password", "passwd", "token", "secret", "cookie", "authorization", "api_key", "apikey",
	"credential", "private_key"}

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
		if end := strings.IndexAny(host, "/\"' :?)`"); end >= 0 {
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
	if !containsAnyOf(d, []string{"if ", "if(", "if !", "unless "}) {
		return false
	}
	return len(guardCallNames(d)) > 0 || strongRefusal(d) ||
		containsAnyOf(d, []string{"http.error(", "badrequest", "status(400", "abort(4", "raise ", "throw ", "return err", "..",
			"csrf", "nonce", "state", "signature", "tenant", "owner", "permission", "role"})
}
