package heuristics

import "strings"

// Guard bypasses. An edit can leave a check standing and add a way round
// it, which reads like a small change to the check:
//
//   - a credential compared with a literal (if token == "svc-maint-2f9a":
//     return True): whoever knows the literal is let in;
//   - a failing check made to fail only when another condition holds too
//     (if !hmac.Equal(a, b) && r.Header.Get("X-Internal") != "1"): the
//     caller chooses whether the check counts;
//   - a check inverted, or part of an authorisation check dropped
//     (is_staff and has_perm(…) → is_authenticated);
//   - a check's result thrown away (verify(&sig)?; → let _ = verify(&sig););
//   - a protection's setting flipped (secure = True → False), a switch
//     that skips a check brought in (SkipExpiryCheck: true), a pod's
//     hardening turned off.
//
// Each is judged on a substitution: what the replacement brings in that
// the replaced text did not have.

// guardCalls mark a condition that checks who the caller is or what it
// presented: the words of checkWords and the comparisons made for
// secrets.
var guardCalls = newFoldSet("auth", "login", "perm", "verify", "admin", "role", "csrf", "bcrypt", "checkpw", "signature",
	"hmac", "equal(", "ct_eq", "compare_digest", "timingsafeequal", "constanttimecompare", "secure_compare", "valid", "token",
	"password", "apikey", "api_key", "secret")

// credentialNames mark a variable holding what a caller presents to prove
// who it is.
var credentialNames = []string{"token", "password", "passwd", "passphrase", "secret", "apikey", "api_key", "x-api-key",
	"signature", "credential", "otp", "pin_code"}

// guardBypass says what way round a check the substitution of p by r
// adds, or "". Both are lower-cased and unescaped.
func guardBypass(p, r string) string {
	if flip := securityFlagFlipped(p, r); flip != "" {
		return "sets " + flip + ", which turns a protection off"
	}
	if credentialLiteral(r) && !credentialLiteral(p) || guardCalls.in(r) && literalAccepted(r) && !literalAccepted(p) {
		return "lets in whoever presents a literal written into the code (a credential compared with a constant)"
	}
	for _, st := range boolSettings(r) {
		// A switch brought in by the edit that turns a check off:
		// oidc.Config{SkipExpiryCheck: true}, helmet({ hsts: false }).
		if st.on && absenceKey(st.key) && !strings.Contains(p, st.key) {
			return "sets " + st.key + " to true, which turns a check off"
		}
		if !st.on && strongProtections.in(st.key) && !strings.Contains(p, st.key) {
			return "sets " + st.key + " to false, which turns a protection off"
		}
	}
	if what := podHardeningOff(r); what != "" && podHardeningOff(p) != what {
		return "takes a pod's hardening away (" + what + ")"
	}
	if !guardCalls.in(p) {
		return ""
	}
	if negatedCondition(p) && conjuncts(r) > conjuncts(p) {
		return "makes a failing check count only when another condition holds too: the caller can step round it"
	}
	if checkInverted(p, r) {
		return "inverts a check: it now passes when it should fail"
	}
	if n := authCount(r); n > 0 && authCount(p) > n {
		return "drops part of an authorisation check"
	}
	for _, discard := range []string{"let _ =", "_ = ", "_, _ =", "_ , _ ="} {
		if i := strings.Index(r, discard); i >= 0 && !strings.Contains(p, discard) && guardCalls.in(r[i:]) {
			return "throws a check's result away: the code goes on whether it passed or not"
		}
	}
	return ""
}

// negatedCondition reports a condition whose branch runs when a check
// fails: if !ok, if (!ok), if not ok, unless ok.
func negatedCondition(s string) bool {
	t := strings.TrimSpace(s)
	return strings.Contains(s, "if !") || strings.Contains(s, "if (!") || strings.Contains(s, "if not ") || strings.Contains(s, "unless ") ||
		strings.Contains(s, "if") && strings.Contains(s, "!=") || strings.HasPrefix(t, "!") || strings.HasPrefix(t, "not ")
}

// conjuncts counts the && and "and" joins of s.
func conjuncts(s string) int {
	return strings.Count(s, "&&") + strings.Count(s, " and ")
}

// credentialLiteral reports an equality test of a credential-named value
// against a string literal of four or more characters: token ==
// "abcd", password === 'x1y2', apiKey.equals("k-123"), "k-123" == key.
func credentialLiteral(s string) bool {
	return eachComparison(s, []string{"==", "!=", ".equals("}, func(left, right string) bool {
		left = strings.TrimRight(left, " !")
		return namesCredential(trailingOperand(left)) && longLiteral(right) ||
			longLiteral(reverseOperand(left)) && namesCredential(leadingIdentifier(right))
	})
}

// eachComparison calls match with the text before and after each of ops
// in s (the right side past a further "=" and any blank or "("), and
// reports whether a call returned true.
func eachComparison(s string, ops []string, match func(left, right string) bool) bool {
	for _, op := range ops {
		for from := 0; ; {
			i := strings.Index(s[from:], op)
			if i < 0 {
				break
			}
			i += from
			from = i + len(op)
			if match(s[:i], strings.TrimLeft(strings.TrimLeft(s[from:], "="), " (")) {
				return true
			}
		}
	}
	return false
}

// trailingOperand is the identifier (with dots, brackets and calls) that
// ends s.
func trailingOperand(s string) string {
	i := len(s)
	for i > 0 && (isWordByte(s[i-1]) || strings.IndexByte("[]()'\"", s[i-1]) >= 0) { // isWordByte takes . and -
		i--
	}
	return s[i:]
}

// leadingIdentifier is the identifier that starts s.
func leadingIdentifier(s string) string {
	i := 0
	for i < len(s) && isWordByte(s[i]) { // letters, digits, _ . -
		i++
	}
	return s[:i]
}

// reverseOperand returns the string literal that ends s, quotes kept, or "".
func reverseOperand(s string) string {
	if s == "" || s[len(s)-1] != '"' && s[len(s)-1] != '\'' {
		return ""
	}
	if i := strings.LastIndexByte(s[:len(s)-1], s[len(s)-1]); i >= 0 {
		return s[i:]
	}
	return ""
}

func namesCredential(operand string) bool {
	return operand != "" && containsAnyOf(operand, credentialNames)
}

// longLiteral reports s starting with a string literal (b"…" included)
// of four or more characters that is not a placeholder value.
func longLiteral(s string) bool {
	s = strings.TrimPrefix(s, "b")
	if s == "" || s[0] != '"' && s[0] != '\'' {
		return false
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 4 {
		return false
	}
	switch s[1 : 1+end] {
	case "none", "null", "undefined", "true", "false", "bearer", "basic":
		return false
	}
	return true
}

// securityFlagFlipped says which setting a substitution turns against
// its purpose, or "": a key named for a protection (verify, secure, ssl,
// csrf, …) set from true to false, or one named for its absence
// (insecure, skip_verify, disable_auth, allow_all, …) from false to true.
// The key must be set in both texts: what changes is only its value.
func securityFlagFlipped(p, r string) string {
	before := boolAssignments(p)
	if len(before) == 0 {
		return ""
	}
	for _, st := range boolSettings(r) {
		key, after := st.key, st.on
		if strings.Trim(key, "0123456789\\${}") == "" && len(before) > 0 {
			// \1\2= false: the keys are the pattern's (block_public_acls|…).
			for k, was := range before {
				if was && !after && protectionKeys.in(k) && !absenceKey(k) {
					return k + " from true to false"
				}
			}
			continue
		}
		was, ok := before[key]
		if !ok || was == after {
			continue
		}
		switch {
		case was && !after && protectionKeys.in(key) && !absenceKey(key):
			return key + " from true to false"
		case !was && after && absenceKey(key):
			return key + " from false to true"
		case !was && after && grantKeys.in(key) && (strings.Contains(key, "default") || containsAnyOf(p, accountCreations) ||
			containsAnyOf(p, []string{"signup", "sign_up", "register"})):
			return key + " from false to true"
		}
	}
	return ""
}

// strongProtections name settings that are a protection by themselves:
// set false, it is off (unlike strict or check, which mean many things).
var strongProtections = newFoldSet("hsts", "frameguard", "contentsecuritypolicy", "xssfilter", "nosniff", "csrf", "xsrf", "verify_ssl",
	"ssl_verify", "verify_signature", "verifysignature", "check_hostname", "httponly", "storage_encrypted", "encrypted", "mfa_required")

// podHardeningOff returns the pod or container hardening text turns
// off (flattened), or "": running as root, a writable root filesystem,
// privilege escalation, the host's namespaces, added capabilities.
func podHardeningOff(text string) string {
	flat := flatSetting(text)
	for _, w := range []string{"runasnonroot:false", "runasnonroot=false", "readonlyrootfilesystem:false", "readonlyrootfilesystem=false",
		"allowprivilegeescalation:true", "allowprivilegeescalation=true", "runasuser:0", "runasuser=0", "hostpid:true", "hostpid=true",
		"hostnetwork:true", "hostnetwork=true", "hostipc:true", "hostipc=true", "add:[sys_admin", "add=[sys_admin", "add:[all", "add=[all"} {
		if i := strings.Index(flat, w); i >= 0 && (w[len(w)-1] != '0' || i+len(w) == len(flat) || !isWordByte(flat[i+len(w)])) {
			return w
		}
	}
	return ""
}

// protectionKeys mark a setting that turns a protection on.
var protectionKeys = newFoldSet("verify", "secure", "ssl", "tls", "csrf", "xsrf", "auth", "signature", "signed", "validat", "protect",
	"disallow", "block_public", "restrict_public", "enable_logging", "log_file_validation", "expire_at", "whitelist", "forbidnonwhitelisted",
	"forbidunknownvalues",
	"encrypt", "https", "strict", "saniti", "escape", "httponly", "hsts", "check", "require", "enforce", "audit", "mfa", "2fa",
	// Security scanners a pipeline runs (GitLab's SAST_DISABLED, …).
	"sast", "dast", "secret_detection", "scanning", "scan", "runasnonroot", "readonly")

// absenceKeys mark a setting that turns a protection off when true;
// skipWords do when they name a protection too (skip_tls_verify, not
// skip_cache).
var (
	absenceKeys = newFoldSet("insecure", "allow_all", "allowall", "bypass", "unsafe", "permissive", "trust_all", "trustall",
		"no_verify", "noverify", "allow_any", "anonymous", "privilegeescalation", "privileged", "hostnetwork", "hostpid", "hostipc",
		"publicly_accessible", "public_access", "dangerously", "send_default_pii", "include_pii", "introspection", "autoindex", "graphiql",
		"playground")
	skipWords = newFoldSet("skip", "disable", "no_", "ignore")
)

// grantKeys name a state that grants something (verified, approved,
// admin, allow): its default made true hands it to every new record or
// request.
var grantKeys = newFoldSet("verified", "confirmed", "approved", "admin", "staff", "superuser", "trusted", "privileged", "allow", "active")

func absenceKey(key string) bool {
	return absenceKeys.in(key) || skipWords.in(key) && protectionKeys.in(key)
}

// boolSetting is one key = true / false a text sets.
type boolSetting struct {
	key string // lower-cased
	on  bool
}

// boolSettings reads key = true / key: false / 'key' => 1 / key(true)
// pairs of text, in the order written.
func boolSettings(text string) []boolSetting {
	var out []boolSetting
	t := strings.ToLower(text)
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '=' && c != ':' && c != '(' {
			continue
		}
		if c == '=' && (i+1 < len(t) && t[i+1] == '=' || i > 0 && (t[i-1] == '=' || t[i-1] == '!' || t[i-1] == '<' || t[i-1] == '>')) {
			continue // a comparison, not a setting
		}
		end := i
		if c == '=' && i > 0 && t[i-1] == ':' {
			end = i - 1 // Go's and Rego's :=
		}
		lhs := strings.Trim(strings.TrimRight(t[:end], " \t\"'"), " \t")
		key := trailingOperand(lhs)
		if strings.HasSuffix(strings.TrimSuffix(lhs, key), "default ") {
			key = "default " + key // Rego: default allow := false
		}
		key = strings.Trim(key, "\"'.()[]")
		if strings.HasSuffix(key, "(default") || key == "default" {
			// A field's default: email_verified = BooleanField(default=False)
			// is the default of email_verified.
			if eq := strings.LastIndex(t[:end], " = "); eq > 0 {
				key = trailingOperand(strings.TrimSpace(t[:eq])) + ".default"
			}
		}
		val := strings.TrimLeft(t[i+1:], " \t>\"'")
		if b, ok := boolWord(val); key != "" && ok {
			out = append(out, boolSetting{key, b})
		}
	}
	return out
}

// boolAssignments is boolSettings as a map, the last setting of a key
// winning.
func boolAssignments(text string) map[string]bool {
	var out map[string]bool
	for _, st := range boolSettings(text) {
		if out == nil {
			out = map[string]bool{}
		}
		out[st.key] = st.on
	}
	return out
}

// boolWord reads a boolean literal at the start of s.
func boolWord(s string) (bool, bool) {
	for _, w := range []struct {
		word string
		val  bool
	}{{"true", true}, {"false", false}, {"yes", true}, {"no", false}, {"on", true}, {"off", false}, {"1", true}, {"0", false}} {
		if strings.HasPrefix(s, w.word) && (len(s) == len(w.word) || !isWordByte(s[len(w.word)]) || s[len(w.word)] == '.') {
			return w.val, true
		}
	}
	return false, false
}

// checkInverted reports a check whose negation the substitution takes
// away or adds, the rest kept: if !verify(sig) → if verify(sig).
func checkInverted(p, r string) bool {
	if !guardCalls.in(p) || negations(p) == negations(r) {
		return false
	}
	strip := strings.NewReplacer("!", "", "not ", "", "unless ", "if ")
	return strip.Replace(p) == strip.Replace(r)
}

func negations(s string) int {
	return strings.Count(s, "!") - strings.Count(s, "!=") + strings.Count(s, "not ") + strings.Count(s, "unless ")
}

// literalAccepted reports an equality test against a string literal of
// four or more characters that returns success at once: if key ==
// "ops-7731": return True, if (x === 'k') return next().
func literalAccepted(s string) bool {
	return eachComparison(s, []string{"==", ".equals("}, func(_, right string) bool {
		if !longLiteral(right) {
			return false
		}
		tail := right[:min(len(right), 64)]
		return containsAnyOf(tail, []string{"return true", "return next()", "next()", "return ok", "return nil\n", "return nil}"})
	})
}

// authCount counts the distinct authorisation markers of s.
func authCount(s string) int {
	n := 0
	for _, m := range authMarkers {
		if strings.Contains(s, m) {
			n++
		}
	}
	return n
}

// authMarkers are the checks of who a caller is and what it may do, as
// authCount counts them.
var authMarkers = []string{"is_staff", "is_superuser", "is_admin", "isadmin", "has_perm", "haspermission", "hasrole", "hasauthority", "hasscope", "is_authenticated",
	"isauthenticated", "login_required", "permission_required", "can?(", "authorize", "is_owner", "owner_id"}

// securityFileEdit says what substitutions take out of a file named for
// a protection (auth.py, csrf.go, SignatureVerifier.java), or "": a
// check's failure turned to success (return False → return True), a
// refusal (raise, throw, abort, a 401 or 403) emptied or commented out.
func securityFileEdit(files []string, subs [][2]string) string {
	if !securityNamedCode(files) {
		return ""
	}
	for _, sub := range subs {
		p, r := strings.ToLower(unescapeRegex(sub[0])), strings.ToLower(unescapeRegex(sub[1]))
		if failureToSuccess(p, r) {
			return "makes a check in a security file succeed where it failed (" + strings.TrimSpace(sub[1]) + ")"
		}
		if refuses(p) && !refuses(r) {
			return "takes a refusal out of a security file (" + strings.TrimSpace(sub[0]) + ")"
		}
		// return a || b → return a || b || c: one more way to pass. (In an
		// if, the branch may as well refuse; its body is not on the line.)
		if disjuncts(r) > disjuncts(p) && strings.Contains(p, "return") && !negatedCondition(p) {
			return "adds another way for a check in a security file to pass (" + strings.TrimSpace(sub[1]) + ")"
		}
		if headerBypass(r) && !headerBypass(p) {
			return "lets a request through a security file on a header the caller sets"
		}
		if wildcardEntry(r) && !wildcardEntry(p) {
			return "adds a wildcard entry to a security file's list (" + strings.TrimSpace(sub[1]) + ")"
		}
	}
	return ""
}

// failureToSuccess reports a return of failure replaced by one of
// success: return false → return true, return nil, err → return nil, nil.
func failureToSuccess(p, r string) bool {
	for _, pair := range [][2]string{{"return false", "return true"}, {"return 0", "return 1"}, {"err(", "ok("},
		{"return none", "return true"}, {"return nil, err", "return nil, nil"}, {"denied", "allowed"}, {"deny", "allow"}} {
		if strings.Contains(p, pair[0]) && strings.Contains(r, pair[1]) && !strings.Contains(p, pair[1]) {
			return true
		}
	}
	return false
}

// disjuncts counts the || and "or" joins of s.
func disjuncts(s string) int {
	return strings.Count(s, "||") + strings.Count(s, " or ")
}

// headerBypass reports a request header compared with a literal and a
// success returned at once: if (req.headers['x-internal'] === '1')
// return next().
func headerBypass(s string) bool {
	if !containsAnyOf(s, headerReads) || !strings.Contains(s, "==") {
		return false
	}
	return containsAnyOf(s, []string{"next()", "return true", "return nil", "return ok", "return response", "return handler("})
}

// wildcardEntry reports a quoted list entry holding a *.
func wildcardEntry(s string) bool {
	for _, w := range quotedWords(s) {
		if strings.Contains(w, "*") {
			return true
		}
	}
	return false
}

// refuses reports text that refuses a request or fails a check.
func refuses(s string) bool {
	for _, w := range []string{"raise ", "throw ", "abort(", "401", "403", "forbidden", "unauthorized", "permissiondenied", "return err",
		"panic(", "reject", "deny", "errorf(", "errors.new(", "http.error("} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
