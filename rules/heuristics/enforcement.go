package heuristics

import (
	"slices"
	"strconv"
	"strings"
)

// Enforcement lowered. A setting can keep its name and be told to do less:
// a policy engine from enforce to audit, mutual TLS from strict to
// disabled, instance metadata tokens from required to optional, an API's
// authorisation from AWS_IAM to NONE; a size or attempt limit lifted to
// the type's maximum; a key file's mode opened to every user; a trust
// condition widened to "*"; an allowlist given file: or ftp: schemes.
// Each test compares a substitution's pattern p with its replacement r,
// lower-cased (looseningEdit's convention); enforcementValue also judges
// one key and value a jq or yq filter sets.

// weakerValues maps a value that enforces to the values that only watch,
// allow or switch the enforcement off.
var weakerValues = map[string][]string{
	"enforce":            {"audit", "warn", "dryrun", "dry-run", "permissive", "disabled", "disable", "off", "log", "none"},
	"enforcing":          {"permissive", "disabled"},
	"strict":             {"permissive", "disable", "disabled", "off", "none", "unset"},
	"required":           {"optional", "none", "disabled", "preferred", "off"},
	"require":            {"optional", "allow", "prefer", "disable", "none"},
	"verify-full":        {"require", "prefer", "allow", "disable", "verify-ca"},
	"verify-ca":          {"require", "prefer", "allow", "disable"},
	"deny":               {"allow", "permit", "accept"},
	"reject":             {"accept", "allow"},
	"block":              {"count", "log", "allow", "monitor", "detect"},
	"aws_iam":            {"none"},
	"custom":             {"none"},
	"cognito_user_pools": {"none"},
	"jwt":                {"none"},
}

// valueToken returns the value written at the start of s: a word of
// letters, digits, - and _, quotes and blanks before it skipped.
func valueToken(s string) string {
	s = strings.TrimLeft(s, " \t\"'`=:")
	end := 0
	for end < len(s) && (isAlnumByte(s[end]) || s[end] == '-' || s[end] == '_') {
		end++
	}
	return s[:end]
}

// settingValues returns the values text assigns (after = or :), keyed
// by the last word of the key before them.
func settingValues(text string) map[string]string {
	out := map[string]string{}
	eachSetting(text, func(key, rest string) {
		if v := valueToken(rest); v != "" {
			out[key] = v
		}
	})
	return out
}

// eachSetting calls fn with each KEY = … or KEY: … of text, the key
// without its quotes and the text after the = or : (not ==, :=, != or
// <=).
func eachSetting(text string, fn func(key, rest string)) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '=' && c != ':' || i+1 < len(text) && (text[i+1] == '=' || text[i+1] == ':') || i > 0 && strings.IndexByte("=!<>:", text[i-1]) >= 0 {
			continue
		}
		key := strings.TrimRight(text[:i], " \t\"'()") // http_tokens(\s*)= keeps its key
		j := len(key)
		for j > 0 && (isAlnumByte(key[j-1]) || key[j-1] == '_' || key[j-1] == '-' || key[j-1] == '.') {
			j--
		}
		if key = strings.TrimLeft(key[j:], "."); key != "" {
			fn(key, text[i+1:])
		}
	}
}

// enforcementLowered returns "KEY from A to B" for a setting r moves to a
// weaker value of weakerValues, or "".
func enforcementLowered(p, r string) string {
	before := settingValues(p)
	if len(before) == 0 {
		return ""
	}
	for key, after := range settingValues(stripGroupRefs(r)) {
		was, ok := before[key]
		if !ok || was == after {
			continue
		}
		for _, weak := range weakerValues[was] {
			if after == weak {
				return key + " from " + was + " to " + after
			}
		}
	}
	return ""
}

// enforcementValue reports a key a filter sets to a value that switches
// an enforcement off (mtls.mode = "DISABLE", validationFailureAction =
// Audit), where the key, or for a bare "mode" the filter (lower-cased),
// names what enforces.
func enforcementValue(key, value, filter string) bool {
	k, v := strings.ToLower(key), strings.ToLower(strings.Trim(value, "\"' "))
	switch {
	case containsAnyOf(k, []string{"enforce", "validationfailureaction", "http_tokens", "httptokens", "sslmode", "authorization"}):
	case k == "mode" && containsAnyOf(filter, []string{"mtls", "tls", "ssl", "auth", "peerauthentication"}):
	default:
		return false
	}
	for _, weak := range []string{"disable", "disabled", "permissive", "none", "optional", "audit", "off", "privileged"} {
		if v == weak {
			return true
		}
	}
	return false
}

// stripGroupRefs drops a replacement's group references (\1, $2), which
// stand for text the pattern matched.
func stripGroupRefs(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		if (r[i] == '\\' || r[i] == '$') && i+1 < len(r) && r[i+1] >= '1' && r[i+1] <= '9' {
			i++
			continue
		}
		b.WriteByte(r[i])
	}
	return b.String()
}

// limitWords name a limit on size, rate, attempts or depth.
var limitWords = []string{"limit", "max", "size", "attempt", "lockout", "throttle", "rate", "depth", "quota", "payload", "burst",
	"failed"}

// unlimitedValues stand for no limit at all.
var unlimitedValues = []string{"usize::max", "u64::max", "u32::max", "math.maxint", "maxint64", "maxint32", "math.inf", "infinity",
	"number.max_safe_integer", "number.max_value", "sys.maxsize", "float('inf')", "float(\"inf\")", "integer.max_value",
	"long.max_value", "int.maxvalue", "unlimited", "10**9", "10 ** 9", "1e9", "1e12", "rate.inf"}

// limitLifted reports a limit r lifts: replaced by a type's maximum or
// infinity, multiplied a thousand times, or an attempt lockout set to 0.
func limitLifted(p, r string) bool {
	if !containsAnyOf(p, limitWords) {
		return false
	}
	if containsAnyOf(r, unlimitedValues) && !containsAnyOf(p, unlimitedValues) {
		return true
	}
	if numberChanged(p, r, func(before, after int) bool { return before >= 1 && before <= 100000 && after >= 1000*before }) {
		return true
	}
	// Keyed, where the count of numbers differs: windowMs: 15 * 60 *
	// 1000, max: 5 → windowMs: 1000, max: 1000000.
	before := settingValues(p)
	for key, v := range settingValues(r) {
		was, err1 := strconv.Atoi(before[key])
		now, err2 := strconv.Atoi(v)
		if err1 == nil && err2 == nil && was >= 1 && now >= 1000*was && (key == "max" || containsAnyOf(key, limitWords)) {
			return true
		}
	}
	// A lockout of minutes made 0: failed logins lock nothing.
	return strings.Contains(p, "lockout") && numberChanged(p, r, func(before, after int) bool { return before > 0 && after == 0 })
}

// modeWidened returns the file mode r sets that lets every user read or
// write what p's mode kept from them (0o600 → 0o666), or "".
func modeWidened(p, r string) string {
	before, after := fileModes(p), fileModes(r)
	if len(before) == 0 || len(before) != len(after) {
		return ""
	}
	for i := range before {
		if before[i]&0o006 == 0 && after[i]&0o006 != 0 {
			return "0" + strconv.FormatInt(int64(after[i]), 8)
		}
	}
	return ""
}

// fileModes returns the octal permission literals of code: 0o644, 0600,
// 0755 (three octal digits after 0 or 0o, at a word's start).
func fileModes(s string) []int {
	var out []int
	for i := 0; i+3 < len(s); i++ {
		if s[i] != '0' || i > 0 && (isAlnumByte(s[i-1]) || s[i-1] == '.') {
			continue
		}
		j := i + 1
		if s[j] == 'o' {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '7' {
			k++
		}
		if k-j != 3 || k < len(s) && (isAlnumByte(s[k]) || s[k] == '.') {
			continue
		}
		n, _ := strconv.ParseInt(s[j:k], 8, 32)
		out = append(out, int(n))
		i = k
	}
	return out
}

// trustContext mark a condition on who may assume a role or reach a
// resource.
var trustContext = []string{"repo:", "principal", "values", "condition", "sub", "aud", "allowed_origins", "source_ranges",
	"cidr_blocks", "trusted", "identifiers", "members", "hostname", "remotepatterns", "domains"}

// wildcardWidened reports a trust condition whose specific value r
// replaces with one matching everything ("repo:*", "*", 0.0.0.0/0).
func wildcardWidened(p, r string) bool {
	if !containsAnyOf(p, trustContext) {
		return false
	}
	wild := func(v string) bool {
		return v == "*" || v == "**" || strings.HasSuffix(v, ":*") || v == "0.0.0.0/0" || v == "::/0" || strings.HasSuffix(v, "/*") && strings.Count(v, "/") <= 1
	}
	for _, v := range quotedStrings(p) {
		if wild(v) {
			return false
		}
	}
	for _, v := range quotedStrings(r) {
		if wild(v) {
			return true
		}
	}
	return false
}

// riskyEntries are allowlist entries that let in what a list exists to
// keep out: local files, plain or legacy protocols, everyone.
var riskyEntries = []string{"file", "ftp", "gopher", "dict", "ldap", "jar", "javascript", "data", "*", "0.0.0.0/0", "::/0",
	// File types a web server runs when it serves them.
	"php", "phtml", "php5", "phar", "jsp", "jspx", "asp", "aspx", "cgi", "war", ".php", ".jsp", ".asp", ".aspx"}

// riskyEntriesAdded returns an entry r adds to an allowlist (its name
// says allowed, permitted, trusted or safe) that riskyEntries holds.
func riskyEntriesAdded(p, r string) string {
	if !containsAnyOf(p, []string{"allow", "permitted", "trusted", "safe_", "whitelist", "accepted"}) {
		return ""
	}
	before := quotedStrings(p)
	if len(before) == 0 {
		return ""
	}
	for _, e := range quotedStrings(r) {
		for _, risky := range riskyEntries {
			if e == risky && !slices.Contains(before, e) {
				return e
			}
		}
	}
	return ""
}

// developmentPath reports a file of a development or test environment
// (overlays/dev, values-local.yaml, config/test): enforcement relaxed
// there does not reach production.
func developmentPath(abs, root string) bool {
	if root != "" && strings.HasPrefix(abs, root+"/") {
		abs = abs[len(root):] // the user's own name (/home/dev) says nothing
	}
	l := strings.ToLower(abs)
	for _, env := range []string{"dev", "development", "local", "test", "sandbox", "kind", "minikube"} {
		if strings.Contains(l, "/"+env+"/") || strings.Contains(l, "-"+env+".") || strings.Contains(l, "_"+env+".") || strings.Contains(l, "."+env+".") {
			return true
		}
	}
	return false
}
