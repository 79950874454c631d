package heuristics

import (
	"slices"
	"strconv"
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Loosening edits. Beyond the checks that are taken out or stepped round
// (weakening.go, bypass.go), an edit can keep a check's shape and loosen
// what it does. Each test here compares a substitution's pattern p with
// its replacement r (both lower-cased) and reports what r brings in:
//
//   - output no longer escaped (|safe, dangerouslySetInnerHTML, raw);
//   - password hashing made cheap (rounds, iterations, memory cut to
//     less than half);
//   - the caller's identity or rate-limit key taken from a header the
//     caller sets;
//   - a secret given a literal fallback (os.environ.get("SECRET_KEY",
//     "dev-key"));
//   - more roles let through, or an entry taken out of what a middleware
//     or guard covers, or privileged attributes (role, admin) made
//     assignable from a request;
//   - input constraints dropped (.positive(), @NotBlank, max_length=);
//   - an allowlist or a path normalisation taken out of a check;
//   - a raw query built from input;
//   - an audit record or security log silenced;
//   - a security test made to accept success.

// looseningEdit says what r loosens that p held, or "".
func looseningEdit(p, r string) string {
	e := loosening{p: p, r: r, fp: flatSetting(p), fr: flatSetting(r)}
	pm, rm, fm := e.marks()
	for _, c := range looseningChecks {
		if pm&c.pattern != c.pattern || rm&c.replacement != c.replacement || fm&c.flat != c.flat {
			continue
		}
		if what := c.judge(&e); what != "" {
			return what
		}
	}
	return ""
}

// loosening is a substitution as looseningEdit's checks read it: the
// pattern p and replacement r, lower-cased, and both flattened
// (flatSetting), made once for all the marker tests.
type loosening struct{ p, r, fp, fr string }

// marks returns the marks of the pattern, the replacement and the
// flattened replacement: one pass over each text says which checks can
// apply, and most edits name none of what they look for.
func (e *loosening) marks() (pm, rm, fm uint32) {
	pm, rm = looseningPatternMarks.scanBits(e.p, allLooseningMarks), looseningReplacementMarks.scanBits(e.r, allLooseningMarks)
	fm = looseningFlatMarks.scanBits(e.fr, allLooseningMarks)
	if hardeningSet.in(e.p) {
		pm |= lmHardening
	}
	return pm, rm, fm
}

// looseningCheck is one check of looseningEdit: it runs when the
// pattern's marks include pattern, the replacement's replacement and the
// flattened replacement's flat, and says what the edit loosens, or "".
type looseningCheck struct {
	pattern, replacement, flat uint32
	judge                      func(e *loosening) string
}

// looseningChecks, in the order their findings are preferred.
var looseningChecks = []looseningCheck{
	{0, 0, lmUnescaped, func(e *loosening) string {
		return when(flatAdded(e.fp, e.fr, unescapedOutput), "turns output escaping off, so what users write is served as markup")
	}},
	{lmHash, 0, 0, func(e *loosening) string {
		return when(hashCostLowered(e.p, e.r), "cuts the work of password hashing to a fraction")
	}},
	{0, lmHeaderRead | lmIdentitySink, 0, func(e *loosening) string {
		return when(requestIdentity(e.r) && !requestIdentity(e.p), "takes the caller's identity or rate-limit key from a header the caller sets")
	}},
	{0, lmEnvRead, 0, func(e *loosening) string {
		return when(secretFallback(e.r) && !secretFallback(e.p), "gives a secret a fallback written into the code")
	}},
	{lmRoles, 0, 0, func(e *loosening) string {
		return when(rolesWidened(e.p, e.r), "lets more roles through an authorisation check")
	}},
	{lmGuardList, 0, 0, func(e *loosening) string {
		return when(guardedListShrunk(e.p, e.r), "takes an entry out of what a guard or middleware covers")
	}},
	{lmAssignable, 0, 0, func(e *loosening) string {
		return when(privilegedAttributeAllowed(e.p, e.r), "lets a request set privileged attributes (role, admin)")
	}},
	{lmConstraint, 0, 0, func(e *loosening) string {
		return when(constraintsDropped(e.p, e.r), "drops input constraints from a validation")
	}},
	{lmAllowlist, 0, 0, func(e *loosening) string {
		return when(markerDropped(e.p, e.r, allowlistWords), "takes an allowlist out of a check")
	}},
	{lmNormaliser, 0, 0, func(e *loosening) string {
		return when(markerDropped(e.p, e.r, pathNormalisers), "takes path normalisation out of a check, which lets ../ through")
	}},
	{0, lmRawQuery, 0, func(e *loosening) string {
		return when(rawQueryFromInput(e.p, e.r), "builds a raw query from request input")
	}},
	{lmAudit, 0, 0, func(e *loosening) string {
		return when(auditSilenced(e.p, e.r), "silences an audit record or the security log")
	}},
	{0, lmCompare, 0, func(e *loosening) string {
		return when(truncatedComparison(e.p, e.r), "compares only part of a secret or signature, which a guess can match")
	}},
	{lmQuery | lmScope, 0, 0, func(e *loosening) string {
		return when(scopeDropped(e.p, e.r), "drops the filter that scopes a query to the caller's tenant or records")
	}},
	{lmGuardCall, 0, 0, func(e *loosening) string {
		if guardCallsDropped(e.p, e.r) {
			return "drops a call that checks or sanitises (" + strings.Join(droppedGuardCalls(e.p, e.r), ", ") + ")"
		}
		return ""
	}},
	{lmHardening, 0, 0, func(e *loosening) string {
		return when(markerDropped(e.p, e.r, hardeningMarkers), "takes out a hardening setting (an XML parser's entity guard, an SSRF guard, a random fill, a security header)")
	}},
	{lmExpiry, 0, 0, func(e *loosening) string {
		return when(expiryRemoved(e.p, e.r), "takes the expiry off a token or session")
	}},
	{0, 0, lmAuthExempt, func(e *loosening) string {
		return when(strings.TrimSpace(e.p) != "" && !publicEndpoint(e.p) && flatAdded(e.fp, e.fr, authExemptions), "exempts code from authentication or CSRF checks")
	}},
	{0, 0, lmDeserialiser, func(e *loosening) string {
		return when(flatAdded(e.fp, e.fr, unsafeDeserialisers), "lets a deserialiser build any type the input names, which runs code")
	}},
	{0, 0, lmScopeBypass, func(e *loosening) string {
		return when(flatAdded(e.fp, e.fr, scopeBypasses), "drops the filters that scope queries to the caller's tenant")
	}},
	{0, 0, lmSkipCheck, func(e *loosening) string {
		return when(flatAdded(e.fp, e.fr, checkSkippingOptions), "adds an option that skips a token's or a login's checks")
	}},
	{0, 0, lmOptional, func(e *loosening) string {
		return when(containsAnyOf(e.p, []string{"authenticate(", "auth("}) && flatAdded(e.fp, e.fr, optionalAuth), "makes authentication optional")
	}},
	{0, 0, lmUnsafeCSP, func(e *loosening) string {
		return when(flatAdded(e.fp, e.fr, unsafeCSP), "lets a content security policy run inline or evaluated script")
	}},
	{0, lmTemplate, 0, func(e *loosening) string {
		return when(templateFromInput(e.p, e.r), "builds a template from input, which runs what the input says")
	}},
	{0, lmSecretSink, 0, func(e *loosening) string {
		return when(secretExposed(e.p, e.r), "writes a secret into a log or a response")
	}},
	{0, 0, lmStackTrace, func(e *loosening) string {
		return when(flatAdded(e.fp, e.fr, stackTraces), "sends internal errors and stack traces to the client")
	}},
	{0, 0, 0, func(e *loosening) string {
		return when(majorDowngrade(e.p, e.r), "pins a dependency back to an older major version, with the flaws fixed since")
	}},
	{0, 0, 0, func(e *loosening) string {
		return when(minorDowngrade(e.p, e.r), "pins a dependency back several releases, with the flaws fixed since")
	}},
	{lmRate, 0, 0, func(e *loosening) string {
		return when(rateLimitRaised(e.p, e.r), "raises a rate limit many times over")
	}},
	{0, lmEnv, 0, func(e *loosening) string {
		return when(envGated(e.p, e.r), "makes a protection depend on an environment variable, off when it is unset")
	}},
}

// The marks of looseningEdit's checks: the words each starts from, in the
// replaced text, the replacement, or the flattened replacement. A mark
// is only a gate: the check itself still decides.
const (
	// In the pattern.
	lmHash uint32 = 1 << iota
	lmRoles
	lmGuardList
	lmAssignable
	lmConstraint
	lmAllowlist
	lmNormaliser
	lmAudit
	lmQuery
	lmScope
	lmGuardCall
	lmExpiry
	lmRate
	lmHardening // found by hardeningSet: the set is too big to share
	// In the replacement.
	lmHeaderRead
	lmIdentitySink
	lmEnvRead
	lmRawQuery
	lmCompare
	lmTemplate
	lmSecretSink
	lmEnv
	// In the flattened replacement.
	lmUnescaped
	lmAuthExempt
	lmDeserialiser
	lmScopeBypass
	lmSkipCheck
	lmOptional
	lmUnsafeCSP
	lmStackTrace
	allLooseningMarks = lmStackTrace<<1 - 1
)

// looseningPatternMarks, looseningReplacementMarks and
// looseningFlatMarks gather the words the checks of looseningEdit start
// from (three sets: a fold set holds at most 255 needles).
var looseningPatternMarks = func() *foldSet {
	fs := &foldSet{}
	fs.addAll(lmHash, hashWords)
	fs.addAll(lmRoles, roleMarkers)
	fs.addAll(lmGuardList, guardContext)
	fs.addAll(lmGuardList, exemptionWords)
	fs.addAll(lmAssignable, assignableLists)
	fs.addAll(lmConstraint, constraintMarkers)
	fs.addAll(lmAllowlist, allowlistWords)
	fs.addAll(lmNormaliser, pathNormalisers)
	fs.addAll(lmAudit, auditWords)
	fs.addAll(lmQuery, scopedQueries)
	fs.addAll(lmScope, scopeMarkers)
	fs.addAll(lmGuardCall, guardCallWords)
	fs.addAll(lmExpiry, expiryKeys)
	fs.addAll(lmRate, rateLimitWords)
	return fs
}()

var looseningReplacementMarks = func() *foldSet {
	fs := &foldSet{}
	fs.addAll(lmHeaderRead, headerReads)
	fs.addAll(lmIdentitySink, identitySinks)
	fs.addAll(lmEnvRead, envReadCalls)
	fs.addAll(lmRawQuery, rawQueryCalls)
	fs.addAll(lmCompare, secretCompares)
	fs.addAll(lmTemplate, templateCalls)
	fs.addAll(lmSecretSink, secretSinks)
	fs.addAll(lmEnv, []string{"env"})
	return fs
}()

var looseningFlatMarks = func() *foldSet {
	fs := &foldSet{}
	fs.addAll(lmUnescaped, unescapedOutput)
	fs.addAll(lmAuthExempt, authExemptions)
	fs.addAll(lmDeserialiser, unsafeDeserialisers)
	fs.addAll(lmScopeBypass, scopeBypasses)
	fs.addAll(lmSkipCheck, checkSkippingOptions)
	fs.addAll(lmOptional, optionalAuth)
	fs.addAll(lmUnsafeCSP, unsafeCSP)
	fs.addAll(lmStackTrace, stackTraces)
	return fs
}()

// hardeningSet finds any of hardeningMarkers in one pass.
var hardeningSet = newFoldSet(hardeningMarkers...)

// optionalAuth, unsafeCSP and stackTraces are settings and calls
// (flattened) that make authentication optional, let a content security
// policy run script, and send stack traces to the client.
var (
	optionalAuth = []string{"optional=true", "optional:true"}
	unsafeCSP    = []string{"unsafe-inline", "unsafe-eval"}
	stackTraces  = []string{"err.stack", "error.stack", "traceback.format_exc", "stack:err", "e.getstacktrace", "printstacktrace(response"}
)

// unescapedOutput mark template or UI code that inserts text as markup
// (flattened: no spaces or quotes).
var unescapedOutput = []string{"|safe", "dangerouslysetinnerhtml", "{!!", "v-html", ".html_safe", "raw(", "mark_safe(", "markup(",
	"innerhtml=", "{{{", "|raw", "autoescapefalse", "autoescape=false", "bypasssecuritytrusthtml", "trustashtml", "{@html",
	"escape=false", "escapexml=false", "th:utext"}

// authExemptions are decorators and attributes (flattened) that take
// code out of authentication or CSRF protection.
var authExemptions = []string{"@public()", "@allowanonymous", "[allowanonymous]", "@permitall", "@skipauth", "@nologin", "@anonymous",
	"@ispublic()", "@csrf_exempt", "@authentication_classes([])", "@permission_classes([allowany", "skip_before_action:verify_authenticity_token",
	"skip_before_action:authenticate", "@unauthenticated", "@publicendpoint", "withoutmiddleware(\\app\\http\\middleware\\authenticate"}

// publicEndpoint reports code that names an endpoint meant to be open
// (health, status, login, webhooks, docs): exempting it is everyday.
func publicEndpoint(s string) bool {
	return containsAnyOf(strings.ToLower(s), []string{"health", "status", "ping", "public", "login", "signin", "signup", "register",
		"webhook", "metrics", "docs", "swagger", "version", "callback", "ready", "live"})
}

// unsafeDeserialisers are settings (flattened) under which a
// deserialiser builds whatever type its input names.
var unsafeDeserialisers = []string{"activatedefaulttyping", "enabledefaulttyping", "laissezfairesubtypevalidator", "typenamehandling.all",
	"typenamehandling.auto", "typenamehandling.objects", "binaryformatter", "netdatacontractserializer", "losformatter", "yaml.unsafe_load",
	"marshal.load(", "unserialize($_", "allowed_classes=>true"}

// scopeBypasses turn off the global filters that scope every query to
// the caller's tenant or account.
var scopeBypasses = []string{"ignorequeryfilters()", ".unscoped", "unscope(:where", "withoutglobalscope", "row_security=off",
	"bypass_rls", "bypassrls", "all_tenants=true", "skip_tenant"}

// checkSkippingOptions are options (flattened) that tell a token or
// session library to skip its checks.
var checkSkippingOptions = []string{"withoutclaimsvalidation", "verify_exp:false", "verify_aud:false", "verify_iss:false",
	"verify_signature:false", "ignoreexpiration:true", "ignorenotbefore:true", "algorithms:[none", "algorithms=[none",
	"skipclaimsvalidation", "verify_exp=false", "verify_signature=false", "requireexpirationtime=false", "validatelifetime=false",
	"validateissuer=false", "validateaudience=false", "validateissuersigningkey=false", "requiresignedtokens=false"}

// markerAdded reports one of markers in r (flattened) that p lacks.
func markerAdded(p, r string, markers []string) bool {
	return flatAdded(flatSetting(p), flatSetting(r), markers)
}

// flatAdded is markerAdded for texts already flattened.
func flatAdded(fp, fr string, markers []string) bool {
	for _, m := range markers {
		if strings.Contains(fr, m) && !strings.Contains(fp, m) {
			return true
		}
	}
	return false
}

// markerDropped reports one of markers in p that r lacks, r not empty
// (an emptied line is judged by the deletion checks).
func markerDropped(p, r string, markers []string) bool {
	if strings.TrimSpace(r) == "" {
		return false
	}
	for _, m := range markers {
		if strings.Contains(p, m) && !strings.Contains(r, m) {
			return true
		}
	}
	return false
}

var allowlistWords = []string{"allowed_", "allowlist", "whitelist", "permitted_", "safe_list", "safelist", "allowed_hosts"}

// hardeningMarkers are settings and calls that harden a parser, a
// fetcher, a nonce or a response; an edit that drops one loosens it.
var hardeningMarkers = []string{"disallow-doctype-decl", "setexpandentityreferences(false", "resolve_entities=false",
	"external-general-entities", "feature_external_ges", "defusedxml", "is_private", "is_loopback", "is_link_local", "isprivate()",
	"isloopback()", "rand.reader", "os.urandom", "getrandomvalues", "randombytes(", "securerandom", "x-frame-options",
	"strict-transport-security", "x-content-type-options", "content-security-policy", "noopener", "session.regenerate",
	"cycle_key", "rotate_session", "reset_session", "session.invalidate", "changesessionid", "session_regenerate_id", "->regenerate(",
	"pin-set", "setobjectinputfilter", "filefilter", "maxfilesize", "max_content_length", "encrypts :", "attr_encrypted",
	// Sessions renewed at login and revoked at logout or a password
	// change; fields stored encrypted; errors scrubbed before reporting.
	"renewtoken(", "session.renew", "session.flush()", "session.clear()", ".revoke(", "revoke_all", "invalidate_sessions",
	"token.objects.filter(user", "=> 'encrypted'", "=> \"encrypted\"", "before_send=scrub", "depthlimit(", "query_depth", "max_depth",
	// Security middleware and settings; nginx's access rules.
	"helmet(", "csurf(", "csrfprotect", "xframeoptions", "securitymiddleware", "csrfviewmiddleware", "clickjacking",
	"filter=\"data\"", "filter='data'", "redact", "deny all", "auth_request", "auth_basic", "internal;", "location ~ /.", "location ~* /."}

var pathNormalisers = []string{".resolve()", "realpath", "abspath", "normpath", "is_relative_to", "filepath.clean", "path.sep",
	"getcanonicalpath", "path.normalize", "secure_filename", "filepath.rel", "starts_with(&base", "urlparse(", "new url(", "url.parse(",
	"uri.parse(", ".hostname"}

// hashWords mark password hashing and its parameters.
var hashWords = []string{"bcrypt", "pbkdf2", "argon2", "scrypt", "rounds", "iterations", "cost", "work_factor", "memory_cost",
	"time_cost", "saltrounds", "hash", "params::new(", "generatekey(", "generate_private_key", "key_size", "keysize", "modulus", "bits"}

// hashCostLowered reports a password-hashing line whose numbers r cuts:
// the same count of numbers, one of them (4 or more before) less than
// half what it was.
func hashCostLowered(p, r string) bool {
	return containsAnyOf(p, hashWords) && numberChanged(p, r, func(before, after int) bool { return before >= 4 && after*2 < before })
}

// numberChanged reports a number of p that changed in r as changed
// says, p and r holding as many numbers (the same setting, another
// value).
func numberChanged(p, r string, changed func(before, after int) bool) bool {
	a, b := numbersIn(p), numbersIn(r)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if changed(a[i], b[i]) {
			return true
		}
	}
	return false
}

// numbersIn returns the decimal numbers of s in order (up to 9 digits).
func numbersIn(s string) []int {
	var out []int
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			continue
		}
		n, j := 0, i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' && j-i < 9 {
			n = n*10 + int(s[j]-'0')
			j++
		}
		out = append(out, n)
		i = j
	}
	return out
}

// headerReads mark a value read from a request's headers.
var headerReads = []string{"req.headers", "req.header(", "req.get('x-", "req.get(\"x-", "request.headers", "r.header.get(", "headers.get(", "$_server['http_", "getheader(",
	"request.getheader(", "c.getheader(", "ctx.get(", "request.meta.get('http_", "request.meta[\"http_", "x-forwarded-for", "x-real-ip"}

// identitySinks mark an assignment of who the caller is, or of the key a
// rate limiter counts by.
var identitySinks = []string{"g.user", "request.user =", "req.user =", "current_user =", "session[\"user_id\"] =", "session['user_id'] =",
	"ctx.user", "login_user(", "setuser(", "keygenerator", "key_func", "identifier:", "user.query.get(", "users.find(", "findbyid("}

// requestIdentity reports text where a header read and an identity or
// rate-limit assignment meet on a line or within the next three.
func requestIdentity(text string) bool {
	if !containsAnyOf(text, headerReads) || !containsAnyOf(text, identitySinks) {
		return false
	}
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if !containsAnyOf(line, headerReads) {
			continue
		}
		for j := max(0, i-1); j < min(len(lines), i+4); j++ {
			if containsAnyOf(lines[j], identitySinks) {
				return true
			}
		}
	}
	return false
}

// envReadCalls read a setting from the environment.
var envReadCalls = []string{"environ.get(", "getenv(", "env(", "env.fetch(", "process.env."}

// secretFallback reports a secret-named setting read from the
// environment with a string literal as its fallback: environ.get("KEY",
// "x"), getenv('TOKEN', 'x'), env('APP_KEY', 'x'), ENV.fetch("X") { "x" },
// process.env.SECRET || "x".
func secretFallback(text string) bool {
	for _, read := range envReadCalls {
		found := false
		shell.EachIndex(text, read, func(i int) bool {
			rest := text[i+len(read):]
			rest = rest[:min(len(rest), 120)]
			name := strings.Trim(leadingIdentifier(strings.TrimLeft(rest, "\"'")), ".")
			if !secretNamed(name) {
				return true
			}
			for _, sep := range []string{", ", ",", "|| ", "?? ", "{ "} {
				j := strings.Index(rest, sep)
				if j < 0 {
					continue
				}
				val := strings.TrimLeft(rest[j+len(sep):], " ")
				for _, kw := range []string{"default=", "default:", "default "} {
					val = strings.TrimLeft(strings.TrimPrefix(val, kw), " ")
				}
				if longLiteral(val) {
					found = true
					return false
				}
			}
			return true
		})
		if found {
			return true
		}
	}
	return false
}

// secretNamed reports a setting's name that holds a secret.
func secretNamed(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"secret", "password", "passwd", "token", "api_key", "apikey", "private_key", "signing_key", "app_key", "encryption_key"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// roleMarkers mark a list of the roles a check lets through.
var roleMarkers = []string{"roles(", "hasrole(", "hasanyrole(", "rolesallowed(", "@secured(", "authorize(roles", "allowed_roles",
	"required_roles", "permission_classes", "@preauthorize(", "authorize roles"}

// rolesWidened reports a role list that r makes longer, keeping p's.
func rolesWidened(p, r string) bool {
	if !containsAnyOf(p, roleMarkers) {
		return false
	}
	before, after := quotedWords(p), quotedWords(r)
	return len(after) > len(before) && len(before) > 0 && subset(before, after)
}

// guardContext mark a list of what a guard, middleware or route check
// covers.
var guardContext = []string{"matcher", "middleware", "protect", "require", "guard", "auth", "admin", "signed", "permission",
	"before_action", "secure", "csrf", "redact", "scrub", "mask", "filter_parameters", "sensitive"}

// listGuards are the entries of a middleware or guard list that check
// something.
var listGuards = []string{"auth", "signed", "verified", "csrf", "throttle", "can:", "role", "permission", "password.confirm", "2fa", "mfa"}

// exemptionWords mark a list of what a guard lets through unchecked.
var exemptionWords = []string{"except", "exempt", "skip", "public", "ignore", "unless", "excluded", "bypass"}

// guardedListShrunk reports a quoted list under a guard word that r
// keeps only part of, or, for a list of exemptions, one r extends. A
// role list is rolesWidened's: shortening it is tightening.
func guardedListShrunk(p, r string) bool {
	if !containsAnyOf(p, guardContext) && !containsAnyOf(p, exemptionWords) || containsAnyOf(p, roleMarkers) || keepsMatch(p, r) {
		return false
	}
	before, after := quotedWords(p), quotedWords(r)
	if len(before) == 0 {
		before, after = listItems(p), listItems(r) // @UseGuards(A, B): names, not strings
	}
	if containsAnyOf(p, exemptionWords) {
		return len(after) > len(before) && len(before) > 0 && subset(before, after)
	}
	if strings.TrimSpace(r) == "" {
		return false
	}
	// A guard list rewritten without any of its guards:
	// middleware(['auth', 'signed']) → middleware(['web']).
	if guards := containsAnyOf(strings.Join(before, " "), listGuards); guards && len(after) > 0 && !containsAnyOf(strings.Join(after, " "), listGuards) {
		return true
	}
	if len(after) >= len(before) || !subset(after, before) {
		return false
	}
	// A literal replaced by a named constant (RequireRole("admin") →
	// RequireRole(RoleAdmin)) keeps the list as long as it was.
	items := listItems(p)
	return len(items) == 0 || len(listItems(r)) < len(items)
}

// keepsMatch reports a replacement that writes back everything the
// pattern matched (&, $&, \0, or $1 of a pattern that is one group) and
// only adds to it.
func keepsMatch(p, r string) bool {
	if containsAnyOf(r, []string{"$&", "\\0", "$0"}) {
		return true
	}
	// sed's & at either end of the replacement (perl's & is a literal,
	// and && is an operator).
	if t := strings.TrimSpace(r); strings.HasPrefix(t, "&") && !strings.HasPrefix(t, "&&") && (len(t) == 1 || !isAlnumByte(t[1])) ||
		strings.HasSuffix(t, "&") && !strings.HasSuffix(t, "&&") && !strings.HasSuffix(t, "\\&") {
		return true
	}
	t := strings.TrimSpace(p)
	return strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") && containsAnyOf(r, []string{"$1", "\\1"})
}

// listItems returns the comma-separated items of the first (…) or […]
// of s.
func listItems(s string) []string {
	i := strings.IndexAny(s, "([")
	if i < 0 {
		return nil
	}
	end := strings.IndexAny(s[i+1:], ")]")
	if end < 0 {
		return nil
	}
	var out []string
	for _, item := range strings.Split(s[i+1:i+1+end], ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// privilegedAttributes are the fields that make an account powerful.
var privilegedAttributes = []string{":role", ":admin", ":is_admin", ":superuser", ":permissions", ":verified", "'role'", "\"role\"",
	"'is_admin'", "\"is_admin\"", "'admin'", "\"admin\"", "'permissions'", "\"permissions\"", "'is_superuser'", "\"is_superuser\"",
	"'is_staff'", "\"is_staff\""}

// assignableLists name the fields a request may set.
var assignableLists = []string{"permit(", "fillable", "fields =", "fields=", "attr_accessible", "allowed_fields", "writable_fields"}

// privilegedAttributeAllowed reports a list of request-assignable fields
// (permit, fillable, fields) that r extends with a privileged one.
func privilegedAttributeAllowed(p, r string) bool {
	if !containsAnyOf(p, assignableLists) {
		return false
	}
	for _, a := range privilegedAttributes {
		if strings.Contains(r, a) && !strings.Contains(p, a) {
			return true
		}
	}
	return false
}

// constraintMarkers mark a constraint of a validation schema.
var constraintMarkers = []string{"mimes:", "mimetypes:", "'image'", "dimensions:", "max:", "'max:", ".positive()", ".nonnegative()", ".min(", ".max(", ".email()", ".uuid()", ".url()", ".regex(",
	".length(", ".int()", "@ispositive", "@min(", "@max(", "@notblank", "@notnull", "@email", "@size(", "@pattern(", "gt=", "ge=",
	"lt=", "le=", "max_length=", "min_length=", "conint(", "constr(", ".required()", "required: true", "required=true"}

// constraintsDropped reports a replacement with fewer schema constraints
// than the text it replaces.
func constraintsDropped(p, r string) bool {
	if strings.TrimSpace(r) == "" {
		return false
	}
	count := func(s string) int {
		n := 0
		for _, m := range constraintMarkers {
			n += strings.Count(s, m)
		}
		return n
	}
	return count(p) > count(r)
}

// rawQueryCalls build a query from raw SQL text.
var rawQueryCalls = []string{"raw(", "literal(", "text(f\"", "text(f'"}

// rawQueryFromInput reports a raw query (whereRaw, DB::raw, .raw(,
// text() / Sequelize.literal) brought in with request input joined
// into it.
func rawQueryFromInput(p, r string) bool {
	if !containsAnyOf(r, rawQueryCalls) || containsAnyOf(p, []string{"raw(", "literal("}) {
		return false
	}
	return containsAnyOf(r, []string{". $request", ".$request", ". $_", "\" . $", "' . $", "+ req.", "${req.", "#{params", "f\"", "f'", "+ request."})
}

// auditWords mark an audit call or the security logger.
var auditWords = []string{"audit", "security_log", "securitylog", "getlogger(\"security\")", "getlogger('security')"}

// auditSilenced reports an audit call or security logger that r
// comments out or turns down to critical / off.
func auditSilenced(p, r string) bool {
	if !containsAnyOf(p, auditWords) {
		return false
	}
	if commentsOut(r) {
		return true
	}
	for _, quiet := range []string{"critical", "fatal", ".off", "level.off", "logging.disable", "none", "=\"off\"", "='off'", "level=off", ": off"} {
		if strings.Contains(r, quiet) && !strings.Contains(p, quiet) {
			return true
		}
	}
	return false
}

// securityTestLoosened reports a test assertion about a refusal (401,
// 403, forbidden) that r makes accept success.
func securityTestLoosened(p, r string) bool {
	if !containsAnyOf(p, []string{"401", "403", "forbidden", "unauthorized", "unauthorised"}) {
		return false
	}
	return containsAnyOf(r, []string{"200", "success", ":ok", "tobetruthy", "204", "302"}) &&
		!containsAnyOf(p, []string{"200", "success", ":ok", "204", "302"})
}

// quotedWords returns the quoted strings of s, or its :symbols.
func quotedWords(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' || c == '"':
			if j := strings.IndexByte(s[i+1:], c); j >= 0 {
				out = append(out, s[i+1:i+1+j])
				i += j + 1
			}
		case c == ':' && i+1 < len(s) && s[i+1] >= 'a' && s[i+1] <= 'z' && (i == 0 || s[i-1] == ' ' || s[i-1] == '(' || s[i-1] == ','):
			out = append(out, ":"+leadingIdentifier(s[i+1:]))
		}
	}
	return out
}

// subset reports whether every item of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// ignoredSecrets are .gitignore patterns that keep secrets out of the
// repository.
var ignoredSecrets = newFoldSet(".env", ".pem", ".key", "id_rsa", "id_ed25519", "credentials", "secret", ".p12", ".pfx", ".pypirc",
	".npmrc", "tfstate", ".tfvars", "keystore", ".jks")

// ignoredSecretsDropped says which secret pattern an edit of a
// .gitignore stops ignoring (a deleted line, or one emptied), or "".
func ignoredSecretsDropped(files []string, subs [][2]string, script string) string {
	ignore := false
	for _, f := range files {
		ignore = ignore || baseName(f) == ".gitignore"
	}
	if !ignore {
		return ""
	}
	for _, re := range sedDeletions(script) {
		if ignoredSecrets.in(re) {
			return "stops git from ignoring secret files (" + unescapeRegex(strings.Trim(re, "^$")) + "): the next git add -A commits them"
		}
	}
	for _, sub := range subs {
		if ignoredSecrets.in(sub[0]) && !ignoredSecrets.in(sub[1]) {
			return "stops git from ignoring secret files (" + sub[0] + "): the next git add -A commits them"
		}
	}
	return ""
}

// rateLimitWords mark a rate limit or a lockout's count.
var rateLimitWords = []string{"throttle", "rate", "limit:", "limit =", "limit=", "max_attempts", "maxattempts", "max_login", "lockout", "attempts",
	"failed_login", "max_failed", "login_attempt"}

// rateLimitRaised reports a rate limit's number that r multiplies by
// four or more.
func rateLimitRaised(p, r string) bool {
	if !containsAnyOf(p, rateLimitWords) {
		return false
	}
	return numberChanged(p, r, func(before, after int) bool { return before >= 1 && after >= 4*before })
}

// envGated reports a protection set to true in p that r sets from the
// environment instead (config.force_ssl = ENV["FORCE_SSL"].present?).
func envGated(p, r string) bool {
	for _, st := range boolSettings(p) {
		key := st.key
		if !st.on || !protectionKeys.in(key) || absenceKey(key) {
			continue
		}
		i := strings.Index(r, key)
		if i < 0 {
			continue
		}
		rest := strings.TrimLeft(r[i+len(key):], " \t\"']")
		if strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, ":") {
			val := strings.TrimLeft(rest[1:], " \t>")
			if _, literal := boolWord(val); !literal && containsAnyOf(val[:min(len(val), 40)], []string{"env", "getenv"}) {
				return true
			}
		}
	}
	return false
}

// secretCompares compare secrets or signatures.
var secretCompares = []string{"compare_digest", "hmac.equal", "timingsafeequal", "constanttimecompare", "ct_eq", "secure_compare", "equals("}

// truncatedComparison reports a comparison of secrets (compare_digest,
// hmac.Equal, timingSafeEqual, …) whose operands r cuts to a prefix.
func truncatedComparison(p, r string) bool {
	if !containsAnyOf(r, secretCompares) {
		return false
	}
	slices := []string{"[:", ".substring(", ".slice(0", "[..", ".take(", "[0:"}
	return containsAnyOf(r, slices) && !containsAnyOf(p, slices)
}

// scopeMarkers tie a query to the caller: its tenant, account or owner.
var scopeMarkers = []string{"tenant", "owner", "customer=request", "user=request.user", "request.user", "current_user", "user_id",
	"account_id", "org_id", "organization", "workspace", "identity.user", "=request.", "= request."}

// scopedQueries are the query calls a scope filters.
var scopedQueries = []string{"filter(", "where(", "where ", "get_object_or_404(", "find_by(", "findone(", "objects.get(", "find(", "first("}

// scopeDropped reports a query (filter, where, get_object_or_404,
// find_by) that r keeps without the scope p gave it.
func scopeDropped(p, r string) bool {
	if strings.TrimSpace(r) == "" || !containsAnyOf(p, scopedQueries) {
		return false
	}
	return markerDropped(p, r, scopeMarkers)
}

// guardCallWords mark a call that checks, validates or sanitises.
var guardCallWords = []string{"safe", "valid", "allow", "saniti", "verify", "check", "escape", "authoriz", "permit", "guard", "clean",
	"redact", "mask", "scrub", "encrypt", "hmac", "require_", "requireauth", "ensure_"}

// guardCallNames returns the names of the calls of s whose name says
// they check something (isSafeRedirect(, validate_input().
func guardCallNames(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '(' || i == 0 || !isWordByte(s[i-1]) {
			continue
		}
		j := i
		for j > 0 && (isWordByte(s[j-1]) && s[j-1] != '.') {
			j--
		}
		if name := s[j:i]; containsAnyOf(name, guardCallWords) {
			out = append(out, name)
		}
	}
	return out
}

// droppedGuardCalls returns the guard calls of p that r does not make.
func droppedGuardCalls(p, r string) []string {
	var out []string
	for _, name := range guardCallNames(p) {
		if !strings.Contains(r, name+"(") {
			out = append(out, name)
		}
	}
	return out
}

// guardCallsDropped reports a replacement that makes fewer checking
// calls than the text it replaces (a rename keeps the count).
func guardCallsDropped(p, r string) bool {
	return strings.TrimSpace(r) != "" && len(droppedGuardCalls(p, r)) > 0 && len(guardCallNames(r)) < len(guardCallNames(p))
}

// templateCalls build a template from a string.
var templateCalls = []string{"render_template_string(", "template(", "erb.new(", "handlebars.compile(", "new function(", "jinja2.template(", "ejs.render("}

// templateFromInput reports a template rendered from a string r builds
// by joining values in (render_template_string("<h2>" + subject)).
func templateFromInput(p, r string) bool {
	for _, call := range templateCalls {
		if i := strings.Index(r, call); i >= 0 && !strings.Contains(p, call) {
			rest := r[i:min(len(r), i+200)]
			if strings.Contains(rest, "+ ") || strings.Contains(rest, "f\"") || strings.Contains(rest, "f'") || strings.Contains(rest, "${") || strings.Contains(rest, "%") {
				return true
			}
		}
	}
	return false
}

// secretSinks are where a value leaves the process: logs and responses.
var secretSinks = []string{"logger.", "log.", "logging.", "console.log(", "print(", "printf(", "response(", "res.json(", "res.send(",
	"jsonify(", "render json:", "json(", "ok(", "return {"}

// secretExposed reports a log line or response r adds that carries a
// credential-named value p did not.
func secretExposed(p, r string) bool {
	p = withoutQuoted(p)
	for line := range strings.SplitSeq(r, "\n") {
		if !containsAnyOf(line, secretSinks) {
			continue
		}
		// A secret field read from the request: .get("password").
		for _, name := range []string{"password", "passwd", "token", "secret", "otp", "api_key"} {
			if containsAnyOf(line, []string{"get(\"" + name, "get('" + name, "[\"" + name + "\"]", "['" + name + "']", "[:" + name + "]"}) &&
				!strings.Contains(p, name) {
				return true
			}
		}
		line = withoutQuoted(line) // "issued tokens" is a message, not a token
		for _, name := range []string{"token", "password", "secret", "refresh", "api_key", "apikey", "private_key", "otp"} {
			if strings.Contains(line, name) && !strings.Contains(p, name) {
				return true
			}
			// A sink already there that now carries the value once more:
			// log.Printf("…%s", uid) → log.Printf("…%s: %s", uid, token).
			if strings.Count(line, name) > strings.Count(p, name) && containsAnyOf(p, secretSinks) {
				return true
			}
		}
	}
	return false
}

// majorDowngrade reports a dependency pin whose major version r lowers:
// cryptography==42.0.5 → 3.3.2, "jsonwebtoken": "^9.0.2" → "8.5.1".
func majorDowngrade(p, r string) bool {
	if !pinsVersion(p) {
		return false
	}
	a, b := firstVersion(p), firstVersion(r)
	return a > 0 && b >= 0 && b < a && versionName(p) != "" && versionName(p) == versionName(r)
}

// firstVersion returns the major number of the first N.N version of s,
// or -1.
// minorDowngrade reports a dependency pin that r moves back two minor
// releases or more within its major version (log4j 2.23.1 → 2.14.1).
func minorDowngrade(p, r string) bool {
	if !pinsVersion(p) {
		return false
	}
	a, am := firstMinor(p)
	b, bm := firstMinor(r)
	return a >= 0 && a == b && bm >= 0 && am-bm >= 2 && versionName(p) != "" && versionName(p) == versionName(r)
}

// pinsVersion reports text that pins a version: x.y.z, or a pin's
// operator or key (==, ^, ~, @, "version"); a ratio (sample_rate=1.0)
// is none.
func pinsVersion(s string) bool {
	if containsAnyOf(s, []string{"==", "^", "~", "@", "version", ">=", "<="}) {
		return true
	}
	for i := 0; i+4 < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' && s[i+1] == '.' {
			j := i + 2
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j > i+2 && j+1 < len(s) && s[j] == '.' && s[j+1] >= '0' && s[j+1] <= '9' {
				return true
			}
		}
	}
	return false
}

// firstMinor returns the major and minor numbers of the first version of
// s (firstVersion's), or -1, -1.
func firstMinor(s string) (int, int) {
	major := firstVersion(s)
	if major < 0 {
		return -1, -1
	}
	i := strings.Index(s, strconv.Itoa(major)+".")
	for i > 0 && isWordByte(s[i-1]) && s[i-1] != '^' && s[i-1] != '~' && s[i-1] != '=' && s[i-1] != 'v' {
		next := strings.Index(s[i+1:], strconv.Itoa(major)+".")
		if next < 0 {
			return -1, -1
		}
		i += 1 + next
	}
	rest := s[i+len(strconv.Itoa(major))+1:]
	n, j := 0, 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' && j < 6 {
		n = n*10 + int(rest[j]-'0')
		j++
	}
	if j == 0 {
		return -1, -1
	}
	return major, n
}

func firstVersion(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' || i > 0 && (isWordByte(s[i-1]) && s[i-1] != '^' && s[i-1] != '~' && s[i-1] != '=' && s[i-1] != 'v') {
			continue
		}
		n, j := 0, i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' && j-i < 6 {
			n = n*10 + int(s[j]-'0')
			j++
		}
		if j+1 < len(s) && s[j] == '.' && s[j+1] >= '0' && s[j+1] <= '9' {
			return n
		}
		i = j
	}
	return -1
}

// versionName is the package name before a version: the first word of
// s up to ==, @, :, " or a blank.
func versionName(s string) string {
	s = strings.TrimLeft(s, "^ \t\"'<")
	end := strings.IndexAny(s, "=@:\" <>~")
	if end <= 0 || strings.ContainsAny(s[:end], "()") {
		return "" // code, not a package: expect(x).to eq(8.25)
	}
	return strings.Trim(s[:end], "\"'")
}

// withoutQuoted returns s with its quoted strings taken out.
func withoutQuoted(s string) string {
	if !strings.ContainsAny(s, "\"'") {
		return s
	}
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// expiryKeys are the settings that bound how long a token, link or
// session stays valid.
var expiryKeys = []string{"max_age", "maxage", "expires_in", "expiresin", "expiry", "ttl", "lifetime", "validity", "expire_after", "expires_after"}

// expiryRemoved reports an expiry p sets that r sets to nothing (None,
// null, nil, 0, false).
func expiryRemoved(p, r string) bool {
	fr := flatSetting(r)
	for _, k := range expiryKeys {
		if !strings.Contains(p, k) {
			continue
		}
		for _, none := range []string{"=none", ":none", "=null", ":null", "=nil", ":nil", "=0,", "=0)", ":0,", "=false", ":false"} {
			if strings.Contains(fr, k+none) && !strings.Contains(flatSetting(p), k+none) {
				return true
			}
		}
	}
	return false
}
