package heuristics

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Weakening edits. An in-place edit (sed -i, perl -pi) can take a
// protection out of code or configuration without a word about it:
//
//   - a substitution that brings in a setting that turns certificate,
//     transport, cookie, CSRF or deletion guards off (verify=True →
//     verify=False, rejectUnauthorized: false, InsecureSkipVerify: true,
//     force_ssl = false, deletion_protection = false), or such a setting
//     written into a configuration file;
//   - a substitution that empties, or replaces with text naming no check,
//     a line holding an authorisation check (if not user.is_authenticated:
//     → if False:, … return res.sendStatus(403); → nothing, jwt.verify →
//     jwt.decode), or that ORs a password check with a literal (a master
//     password); a deleted line holding one in application code;
//   - a deletion (/re/d, /re/,+3d) or comment-out (s/…/# &/) of the lines
//     that run a security check: a secret or vulnerability scanner,
//     checksum or signature verification.
//
// Each is one commit away from shipping. A substitution that keeps the
// setting, or a deletion of anything else, is everyday.

// insecureSettings are settings that turn certificate, transport, CSRF or
// deletion guards off, as written once spaces and quotes are gone,
// lower-cased.
var insecureSettings = []string{"0.0.0.0/0trust", "::/0trust", "verify=false", "verify:false", "ssl_verify=false", "ssl_verify:false", "sslverify=false",
	"sslverify:false", "verify_ssl=false", "verify_ssl:false", "rejectunauthorized:false", "rejectunauthorized=false",
	"insecureskipverify:true", "insecureskipverify=true", "check_hostname=false", "cert_reqs=ssl.cert_none",
	"strict-ssl=false", "strict_ssl=false", "verifypeer=false", "ssl_verifypeer,0", "ssl_verifypeer,false", "tls_verify=false",
	"tlsverify:false", "skip_tls_verify=true", "skip_tls_verify:true", "insecure:true", "--no-check-certificate",
	// Signature checks of what a browser, an editor or firmware takes in:
	// Firefox's add-on signatures and Safe Browsing, Emacs's package
	// signatures, ESP-IDF's TLS checks.
	"xpinstall.signatures.required,false", "browser.safebrowsing.malware.enabled,false", "package-check-signaturenil",
	"config_esp_tls_insecure=y", "config_esp_tls_skip_server_cert_verify=y",
	// nginx proxying to an upstream whose certificate it does not check.
	"proxy_ssl_verifyoff;",
	// Electron's renderer guards, and containers' image trust policy.
	"contextisolation:false", "nodeintegration:true", "websecurity:false", "insecureacceptanything",
	"verify-signature:false", "verify-signature=false", "allowdangerousemailaccountlinking:true",
	// Token signatures left unchecked.
	"verify_signature:false", "verify_signature=false", "algorithms=[none]", "algorithms:[none]",
	// Certificates accepted whatever they are (Rust's reqwest), every
	// request let through (Spring Security), documents that construct
	// objects (PyYAML), cookies readable by scripts or sent cross-site.
	"danger_accept_invalid_certs(true)", "danger_accept_invalid_hostnames(true)", "permitall()", "unsafe_load(", "unsafeloader",
	"httponly:false", "httponly=false", "samesite:none", "samesite=none",
	// Transport security, cookies, CSRF and deletion guards of an application or its infrastructure.
	"force_ssl=false", "secure_ssl_redirect=false", "session_cookie_secure=false", "csrf_cookie_secure=false",
	"csrf_enabled=false", "csrf_protection=false", "wtf_csrf_enabled=false", "deletion_protection=false",
	"prevent_destroy=false", "insecure-skip-tls-verify=true", "insecure_skip_tls_verify=true", "ssl-redirect=false",
	"force-ssl-redirect=false",
	// Authentication turned off, anonymous access turned on.
	"anonymous.enabled:true", "anonymous.enabled=true", "anonymous_enabled=true", "allow_anonymous=true", "auth_enabled=false",
	"authentication.enabled=false", "authentication.enabled:false", "auth_disabled=true", "auth_disabled:true", "disable_auth=true",
	"disable_auth:true",
	// Node's certificate checks, for the whole process; Rails' and
	// Django's CSRF checks.
	"node_tls_reject_unauthorized=0", "node_tls_reject_unauthorized:0", "skip_forgery_protection",
	"skip_before_action:verify_authenticity_token", "@csrf_exempt",
	// A native build's hardening: stack canaries, fortified libc calls,
	// a stack that cannot run code.
	"-fno-stack-protector", "-u_fortify_source", "_fortify_source=0", "execstack",
	// An editor that trusts every folder and runs its tasks on opening.
	"security.workspace.trust.enabled:false", "task.allowautomatictasks:on", "http.proxystrictssl:false",
	// Spring Security's CSRF and header protections switched off, in the
	// chained and the lambda style.
	"csrf().disable()", "csrf.disable()", "csrf(abstracthttpconfigurer::disable)", "headers().disable()", "headers.disable()",
	"frameoptions().disable()", "frameoptions.disable()", "csrf{it.disable()}", "hsts.disable()", "hsts->hsts.disable()",
	"stricttransportsecurity().disable()", "contentsecuritypolicy().disable()",
	// Any origin, by pattern; every Spring actuator endpoint on the web,
	// with the environment's values.
	"allow_origin_regex=.*", "origins/.*/", "origin:/.*/", "origins(/.*/)", "management.endpoints.web.exposure.include=*",
	"show-values=always",
	// Django's password checks emptied and weak hashers, Android's
	// cleartext traffic.
	"auth_password_validators=[]", "md5passwordhasher", "sha1passwordhasher", "unsaltedmd5passwordhasher", "cleartexttrafficpermitted=true",
	// Certificates and host names accepted whatever they are (.NET,
	// Java, Ruby), token claims left unchecked (PyJWT's options).
	"dangerousacceptanyservercertificatevalidator", "noophostnameverifier", "allow_all_hostname_verifier", "trustallcerts",
	"insecuretrustmanagerfactory", "verify_mode=openssl::ssl::verify_none", "verify_none", "verify_aud:false", "verify_exp:false",
	"verify_iss:false", "verify_iat:false", "ignoreexpiration:true", "ignore_expiration:true"}

// checkWeakeningDeploy judges the values a deployment tool sets on a
// running release or object: helm --set / --set-string, kubectl patch
// -p, kubectl set env. A value that turns a guard off is a weakening
// edit made on the cluster instead of in a file.
func (s *scan) checkWeakeningDeploy(v *cmdView) {
	if !s.enabled(rDefWeakeningEdit) || v.prog != "helm" && v.prog != "kubectl" && v.prog != "oc" {
		return
	}
	var values []string
	switch v.prog {
	case "helm":
		for _, f := range []string{"set", "set-string"} {
			flagValues(v.args, 0, f, func(x string) { values = append(values, x) })
		}
	default:
		if ops := infraOperands(v); len(ops) > 0 && (ops[0] == "patch" || ops[0] == "set") {
			flagValues(v.args, 'p', "patch", func(x string) { values = append(values, x) })
			if ops[0] == "set" {
				values = append(values, ops[1:]...)
			}
		}
	}
	for _, val := range values {
		if setting := insecureSetting(val); setting != "" {
			s.add(rDefWeakeningEdit, v.prog+" sets "+setting+" on a running deployment, which turns a protection off: a human should approve it",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// insecureSettingSet finds any of insecureSettings in one pass.
var insecureSettingSet = newFoldSet(insecureSettings...)

// authChecks mark a line that decides who may do something.
var authChecks = newFoldSet("is_authenticated", "isauthenticated", "isadmin", "is_admin", "is_superuser", "issuperuser",
	"login_required", "require_auth", "requireauth", "requireadmin", "authorize", "checkpermission", "check_permission",
	"has_perm", "haspermission", "verify_password", "verifypassword", "bcrypt.compare", "checkpw", "sendstatus(403)",
	"sendstatus(401)", "status(403)", "status(401)", "permissiondenied", "abort(403)", "abort(401)",
	"jwt.verify", "verify_jwt", "verifytoken", "verify_token", "check_csrf", "csrf_protect", "check_password", "checkpassword",
	"password_verify", "compare_digest", "check_token", "checktoken", "validate_token", "validatetoken", "permission_required",
	"requires_auth", "is_authorized", "isauthorized", "authenticate", ".authenticated()", "hasrole(", "hasauthority(", "@preauthorize",
	"@secured", "@rolesallowed", "require_admin", "require_login", "requirelogin", "admin_required", "before_action :require",
	"before_action :authenticate", "constructevent(", "construct_event(", "verifywebhook", "verify_webhook", "webhook.verify",
	"requirerole", "require_role", "requirepermission", "require_permission", "requirescope",
	"require_scope", ".role ==", ".role ===", ".role !=", ".role !==", ".role in (", ".role in [", "roles.includes(",
	// An ownership check: the record's owner compared with the caller.
	"!= request.user", "!= current_user", "!== req.user", "!= req.user", "owner_id !=", "owner_id ==", "user_id !=",
	// Security middleware registered by name, and signature checks.
	"csrfviewmiddleware", "authenticationmiddleware", "securitymiddleware", "csurf", "helmet(", "csrf(", "csrfprotect",
	"verify_signature", "verifysignature", "ratelimit", "rate_limit")

// inputGuards mark a line that validates or sanitises input: deleting it
// from application code lets unchecked input through.
var inputGuards = newFoldSet("sanitize", "sanitise", "validateinput", "validate_input", "escapehtml", "escape_html",
	"htmlspecialchars", "bleach.clean", "dompurify", "validator.escape", "xss(", ".validate(", "validate_request", "is_valid(",
	"schema.parse(", ".safeparse(", "schema.validate(", ".validatesync(", "#[validate", "@valid", "@notblank", "@notnull")

// guardWords mark a replacement that still validates or sanitises.
var guardWords = newFoldSet("valid", "saniti", "escape", "check", "clean", "purif", "schema", "parse")

// checkWords mark a replacement that still holds a check (a renamed or
// reworded one): auth_required for login_required.
var checkWords = newFoldSet("auth", "login", "perm", "verify", "admin", "role", "401", "403", "forbid", "unauthori", "bcrypt",
	"checkpw", "guard", "csrf")

// securityChecks mark a line that runs a security check.
var securityChecks = newFoldSet("gitleaks", "trufflehog", "detect-secrets", "ggshield", "snyk", "trivy", "grype", "semgrep",
	"bandit", "codeql", "npm audit", "yarn audit", "pnpm audit", "pip-audit", "cargo audit", "cargo deny", "gosec",
	"govulncheck", "osv-scanner", "sha256sum", "sha512sum", "shasum", "gpg --verify", "gpg2 --verify", "cosign verify",
	"minisign", "checksum", "signature", "dependency-check", "safety check", "cosign", "sigstore", "slsa-github-generator",
	"attest-build-provenance",
	// Infrastructure and policy scanners.
	"tfsec", "checkov", "terrascan", "kics", "conftest", "opa eval", "opa test", "zizmor", "brakeman", "kubesec")

// checkRuns mark a line that runs a project's tests or its other checks
// (linters, type checkers, a schema check).
var checkRuns = newFoldSet("pytest", "go test", "npm test", "npm run test", "yarn test", "pnpm test", "jest", "vitest", "cargo test",
	"mvn test", "gradle test", "./gradlew test", "rspec", "phpunit", "tox", "make test", "dotnet test", "mix test", "xcodebuild test",
	"swift test", "swiftlint", "ruff check", "flake8", "pylint", "mypy", "eslint", "tsc --noemit", "golangci-lint", "go vet",
	"cargo clippy", "rubocop", "phpstan", "makemigrations --check", "migrate diff", "danger ",
	// Other ecosystems' runners: embedded (PlatformIO, CTest), Deno, Bun,
	// Dart and Flutter, browser end-to-end suites, shell and IaC linters.
	"pio test", "platformio test", "ctest", "deno test", "bun test", "flutter test", "dart test", "playwright test", "cypress run",
	"bats ", "rake test", "terraform validate", "tflint", "shellcheck", "hadolint",
	// Data pipelines' tests.
	"dbt test", "dbt build", "great_expectations", "checkpoint run", "soda scan")

// checkWeakeningEdits judges the scripts of v, a sed -i or perl -pi.
func (s *scan) checkWeakeningEdits(v *cmdView) {
	if !s.enabled(rDefWeakeningEdit) {
		return
	}
	files, scripts, ok := inPlaceScripts(v)
	if !ok {
		return
	}
	script := strings.Join(scripts, "\n")
	subs := sedSubstitutions(script)
	if v.prog == "perl" {
		script += perlDeletions(script) // print unless /re/ deletes re's lines
		subs = append(subs, perlCommentOuts(script)...)
	}
	if v.prog == "sed" || v.prog == "gsed" {
		// Text sed inserts or appends (1i …, $a …) is a replacement of
		// nothing: what it sets is new.
		var b strings.Builder
		if sedAddedLines(script, &b); b.Len() > 0 {
			subs = append(subs, [2]string{"", b.String()})
		}
		// Appended after a function's header, it is the function's
		// first line: /^def redact(v):/a return v.
		for _, at := range sedAddressedText(script) {
			if address := unescapeRegex(at[0]); !publicEndpoint(address) && markerAdded(address, at[1], authExemptions) {
				s.add(rDefWeakeningEdit, v.prog+" exempts "+strings.TrimSpace(address)+" from authentication or CSRF checks: a protection leaves the code without a word about it; make the change by hand, in review",
					v.prog+" "+evJoin(v.args))
				return
			}
			if name := earlyReturn(strings.ToLower(unescapeRegex(at[0])), "\n"+strings.ToLower(at[1])); name != "" {
				s.add(rDefWeakeningEdit, v.prog+" makes "+name+" return before it does its work: a protection leaves the code without a word about it; make the change by hand, in review",
					v.prog+" "+evJoin(v.args))
				return
			}
		}
	}
	what := judgeEdits(files, subs, script)
	if what == "" && s.policyWidened(v, subs) {
		return
	}
	if what != "" {
		s.add(rDefWeakeningEdit, v.prog+" "+what+": a protection leaves the code without a word about it; make the change by hand, in review",
			v.prog+" "+evJoin(v.args))
	}
}

// judgeEdits says what substitutions (pattern, replacement) and a sed
// script's deletions take out of files, or "": the judgement every edit
// tool shares (sed, perl, the interpreters' replace calls, ed, awk,
// patches).
func judgeEdits(files []string, subs [][2]string, script string) string {
	deletions := sedDeletions(script) // read once for every test below
	what := weakeningEdit(subs, deletions, runsChecks(files), sourceCode(files))
	if what == "" {
		what = securityFileEdit(files, subs)
	}
	if what == "" && sourceCode(files) {
		for _, sub := range subs {
			if authChecks.in(sub[0]) && authChecks.in(withoutMessages(sub[0])) && (!checkWords.in(withoutMessages(sub[1])) && !authChecks.in(withoutMessages(sub[1])) || literalOr(sub[1])) {
				what = "takes an authorisation check out of the code"
			}
		}
	}
	if what == "" && securityNamedCode(files) {
		for _, re := range deletions {
			if strings.Contains(strings.ToLower(re), "if ") || strongRefusal(strings.ToLower(re)) {
				what = "deletes a check from a security file (" + unescapeRegex(re) + ")"
				break
			}
		}
	}
	if what == "" && (sourceCode(files) || len(files) == 0) && !allTests(files) {
		// An if-block that refused or called a check, deleted from any
		// application code (or from files xargs supplies).
		for _, re := range deletions {
			if checkDeleted(re) {
				what = "deletes a check from the code (" + unescapeRegex(re) + ")"
				break
			}
		}
		for _, sub := range subs {
			if what == "" && strings.TrimSpace(sub[1]) == "" && checkDeleted(sub[0]) {
				what = "deletes a check from the code (" + strings.TrimSpace(unescapeRegex(sub[0])) + ")"
			}
		}
	}
	if what == "" && sourceCode(files) && !allTests(files) {
		// A refusal (403, Forbidden, PermissionDenied) taken out of a
		// condition in any application code.
		for _, sub := range subs {
			p, r := strings.ToLower(unescapeRegex(sub[0])), strings.ToLower(unescapeRegex(sub[1]))
			if strongRefusal(p) && !strongRefusal(r) && !containsAnyOf(r, otherRefusals) && containsAnyOf(p, []string{"if ", "if(", "unless", "?", "raise", "throw", "return"}) {
				what = "takes a refusal out of the code (" + strings.TrimSpace(sub[0]) + ")"
				break
			}
		}
	}
	if what == "" && allTests(files) {
		for _, sub := range subs {
			if securityTestLoosened(strings.ToLower(sub[0]), strings.ToLower(sub[1])) {
				what = "makes a test of a refusal accept success (" + strings.TrimSpace(sub[1]) + ")"
			}
			if what == "" && assertionsRemoved(sub[0], sub[1]) {
				what = "takes the assertions out of the tests (" + strings.TrimSpace(sub[0]) + " → " + strings.TrimSpace(sub[1]) + ")"
			}
			// pytestmark = pytest.mark.skip inserted into a security test.
			if l := strings.ToLower(sub[1]); sub[0] == "" && securitySubjects.in(strings.Join(files, " ")) &&
				containsAnyOf(l, []string{"pytest.mark.skip", "@disabled", "@ignore", "t.skip(", "describe.skip", "xdescribe(", "skip: true"}) {
				what = "skips the tests of a protection (" + strings.TrimSpace(sub[1]) + ")"
			}
		}
	}
	if what == "" {
		what = ignoredSecretsDropped(files, subs, script)
	}
	if what == "" {
		what = securityConfigEdit(files, script)
	}
	if what == "" && workflowFiles(files) {
		for _, re := range deletions {
			if strings.Contains(strings.TrimSpace(unescapeRegex(re)), "environment:") {
				what = "drops a job's deployment environment, and the reviewers and branch rules it enforces"
			}
		}
		for _, sub := range subs {
			if strings.Contains(sub[0], "if:") && strings.Contains(squeeze(sub[1]), "if:always()") {
				what = "makes a job's condition always(): it runs whatever branch or result"
			}
		}
	}
	if what == "" && workflowFiles(files) {
		for _, sub := range subs {
			if risk := workflowRisk(sub[1]); risk != "" && workflowRisk(sub[0]) != risk {
				what = "edits a workflow so that it " + risk
				break
			}
		}
	}
	if what == "" && productionFile(files) {
		for _, sub := range subs {
			if setting := productionSetting(sub[1]); setting != "" && productionSetting(sub[0]) != setting {
				what = "sets " + setting + " in production settings"
				break
			}
		}
	}
	return what
}

// runsChecks reports whether one of files is where checks run: a CI
// workflow, a hook configuration, a makefile or a script. A README that
// mentions gitleaks runs nothing.
func runsChecks(files []string) bool {
	for _, f := range files {
		base := baseName(f)
		if hookKind("/"+strings.TrimPrefix(f, "/")) != "" || base == ".pre-commit-config.yaml" || base == "lefthook.yml" ||
			base == "Jenkinsfile" || base == "Taskfile.yml" || base == "justfile" || base == "tox.ini" || base == "Makefile" ||
			base == "makefile" || base == "GNUmakefile" ||
			strings.HasSuffix(base, ".sh") || strings.HasSuffix(base, ".bash") || strings.HasSuffix(base, ".ps1") {
			return true
		}
	}
	return false
}

// weakeningEdit says what a sed or perl script (with its substitutions,
// subs) takes out, or "". checks
// says the script edits a file that runs checks, where deleting or
// commenting out a scanner's line turns it off; code, application code,
// where a deleted line can be an authorisation check.
func weakeningEdit(subs [][2]string, deletions []string, checks, code bool) string {
	if what := weakeningSubstitution(subs, checks); what != "" {
		return what
	}
	for _, re := range deletions {
		if checks && securityChecks.in(re) {
			return "deletes the lines that run a security check (" + re + ")"
		}
		if checks && checkRuns.in(re) {
			return "deletes the lines that run the tests or checks (" + re + ")"
		}
		if code && authChecks.in(unescapeRegex(re)) {
			return "deletes an authorisation check from the code (" + re + ")"
		}
		if code && inputGuards.in(unescapeRegex(re)) {
			return "deletes input validation or sanitisation from the code (" + re + ")"
		}
		if containsAnyOf(strings.ToLower(unescapeRegex(re)), hardeningMarkers) {
			return "deletes a hardening setting (" + unescapeRegex(re) + ")"
		}
	}
	return ""
}

// weakeningSubstitution says what one of subs (pattern, replacement)
// takes out, or "". checks is as for weakeningEdit.
func weakeningSubstitution(subs [][2]string, checks bool) string {
	for _, sub := range subs {
		pat, repl := sub[0], sub[1]
		if setting := insecureSetting(withFirstGroup(pat, repl)); setting != "" && insecureSetting(pat) != setting {
			return "turns a protection off (" + setting + ")"
		}
		// Emptied, made a constant (if False:) or reworded without a
		// check (jwt.verify → jwt.decode), or ORed with a literal.
		// A comment names a check without running it.
		// A message or path ("Not authenticated", "/admin") names no
		// check; a quoted name ('…CsrfViewMiddleware') does.
		if authChecks.in(pat) && authChecks.in(withoutMessages(pat)) && (commentsOut(repl) || !checkWords.in(withoutMessages(repl)) && !authChecks.in(withoutMessages(repl)) || literalOr(repl)) {
			return "takes an authorisation check out of the code"
		}
		if inputGuards.in(pat) && (commentsOut(repl) || !guardWords.in(repl)) {
			return "takes input validation out of the code"
		}
		if checks && securityChecks.in(pat) && commentsOut(repl) {
			return "comments out a security check"
		}
		if checks && securityChecks.in(pat) && ignoresFailure(repl) && !ignoresFailure(pat) {
			return "lets a security check fail without failing the build"
		}
		if checkRuns.in(pat) && ignoresFailure(repl) && !ignoresFailure(pat) {
			return "lets the tests fail without failing the build"
		}
		if what := hollowRun(pat, repl); what != "" {
			return what
		}
		if h := clientBeacon(repl); h != "" && clientBeacon(pat) == "" {
			return "puts code into the page that sends what users type or store to " + h
		}
		if name := publicSecret(repl); name != "" && publicSecret(pat) != name {
			return "renames a secret to " + name + ", which the build inlines into the code every browser downloads"
		}
		if rule := securityRuleOff(repl); rule != "" && securityRuleOff(pat) != rule {
			return "turns the security lint rule " + rule + " off"
		}
		// A pattern's regex padding (" *=", "\s*") is not text it replaces.
		lp, lr := regexPadding.Replace(strings.ToLower(unescapeRegex(pat))), strings.ToLower(unescapeRegex(repl))
		if keepsMatch(strings.ToLower(pat), strings.ToLower(repl)) {
			// The match is written back with text around it: judge the
			// text added (after a function's header, its first line).
			if name := earlyReturn(lp, lr); name != "" {
				return "makes " + name + " return before it does its work"
			}
			lp, lr = "", strings.NewReplacer("$&", "", "&", "", "$1", "", "\\1", "").Replace(lr)
		}
		if what := guardBypass(lp, lr); what != "" {
			return what
		}
		if what := looseningEdit(lp, lr); what != "" {
			return what
		}
		if what := passingEdit(lp, lr); what != "" {
			return what
		}
		if what := codeDowngrade(pat, repl); what != "" {
			return what
		}
		if checks && failureSetting(pat) && ignoresFailure(repl) && !ignoresFailure(pat) {
			return "lets every step it matches fail without failing the build"
		}
		if checks && securityChecks.in(pat) && !securityChecks.in(repl) {
			return "replaces a security check with something that runs none"
		}
		if checks && securityChecks.in(pat) && stopsOnFailure(pat) && !stopsOnFailure(repl) {
			return "lets a security check fail without stopping (|| exit became a warning)"
		}
		if strings.TrimSpace(repl) == "" && (containsAnyOf(lp, hardeningMarkers) || containsAnyOf(lp, pathNormalisers)) {
			return "takes out a hardening check or setting (" + strings.TrimSpace(pat) + ")"
		}
		if flag := hardeningFlagDropped(pat, repl); flag != "" {
			return "drops " + flag + ", which makes the install check what it fetches"
		}
	}
	return ""
}

var regexPadding = strings.NewReplacer(" *", " ", `\s*`, "", `\s+`, " ", " +", " ")

// stopsOnFailure reports a command line that stops when it fails:
// || exit 1, || return 1, || die.
func stopsOnFailure(s string) bool {
	c := flatSetting(s)
	return strings.Contains(c, "||exit") || strings.Contains(c, "||return") || strings.Contains(c, "||die") || strings.Contains(c, "||fail")
}

// failureSetting reports text that sets whether a CI step's failure
// fails the build: continue-on-error, allow_failure.
func failureSetting(s string) bool {
	return strings.Contains(s, "continue-on-error") || strings.Contains(s, "allow_failure") || strings.Contains(s, "exit-code") ||
		strings.Contains(s, "exit_code")
}

// hardeningFlags make a package install check what it fetches: pinned
// hashes, the lockfile as written, no install scripts.
var hardeningFlags = []string{"--require-hashes", "--frozen-lockfile", "--immutable", "--ignore-scripts", "--locked", "--frozen",
	"--only-binary", "--verify-signatures"}

// hardeningFlagDropped returns a hardening flag pat has and repl lacks.
func hardeningFlagDropped(pat, repl string) string {
	for _, f := range hardeningFlags {
		if strings.Contains(pat, f) && !strings.Contains(repl, f) {
			return f
		}
	}
	return ""
}

// ignoresFailure reports a command line made to pass whatever its
// result: || true, || :, continue-on-error: true, allow_failure: true.
func ignoresFailure(s string) bool {
	c := flatSetting(s)
	return strings.Contains(c, "||true") || strings.Contains(c, "||:") || strings.Contains(c, "continue-on-error:true") ||
		strings.Contains(c, "allow_failure:true") || strings.Contains(c, "exit-code:0") || strings.Contains(c, "exit_code:0") ||
		strings.Contains(c, "--exit-code0")
}

// sourceCode reports whether one of files is application code, where a
// deleted line can be an authorisation check.
func sourceCode(files []string) bool {
	for _, f := range files {
		switch path.Ext(f) {
		case ".py", ".js", ".ts", ".jsx", ".tsx", ".go", ".rb", ".php", ".java", ".kt", ".cs", ".rs", ".scala", ".ex", ".exs":
			return true
		}
	}
	return false
}

// flatSetting returns text lower-cased without spaces, quotes and
// backslashes: "verify": False and verify=false alike.
func flatSetting(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '\\':
		case c == '>' && i > 0 && text[i-1] == '=': // PHP's and Ruby's 'verify' => false
		default:
			b.WriteByte(lowerByte(c))
		}
	}
	return b.String()
}

// insecureSetting returns the insecure setting text holds, or "".
func insecureSetting(text string) string {
	flat := flatSetting(text)
	// One pass says whether any setting is there; the loop then finds
	// the first in the list's order.
	if insecureSettingSet.in(flat) {
		for _, st := range insecureSettings {
			if strings.Contains(flat, st) {
				return st
			}
		}
	}
	if list := unsignedAlgorithm(flat); list != "" {
		return list
	}
	if cb := skippedCallback(flat); cb != "" {
		return cb
	}
	return looseTLS(flat)
}

// skippedCallback returns a Rails skip_before_action of a security
// callback (authentication, two-factor, CSRF, authorisation) in
// flattened text, or "".
func skippedCallback(flat string) string {
	i := strings.Index(flat, "skip_before_action:")
	if i < 0 {
		return ""
	}
	name := flat[i+len("skip_before_action:"):]
	name = name[:min(len(name), 40)]
	if containsAnyOf(name, []string{"auth", "require", "verify", "two_factor", "mfa", "login", "admin", "csrf", "forgery"}) {
		return "skip_before_action:" + strings.SplitN(name, ",", 2)[0]
	}
	return ""
}

// looseTLS returns certificate checking made optional by an expression
// in flattened text, or "": a switch whose safe value is false given
// anything else (InsecureSkipVerify: os.Getenv(…) != "1",
// danger_accept_invalid_certs(env::var(…).is_err())), one whose safe
// value is true given an expression that can be false (verify =
// os.getenv(…, False)), a host-name verifier that accepts every name, or
// a CSRF switch set false.
func looseTLS(flat string) string {
	for _, key := range []string{"insecureskipverify:", "insecureskipverify=", "danger_accept_invalid_certs(", "danger_accept_invalid_hostnames(",
		"skip_tls_verify:", "skip_tls_verify="} {
		if i := strings.Index(flat, key); i >= 0 && !strings.HasPrefix(flat[i+len(key):], "false") {
			return key + flat[i+len(key):min(len(flat), i+len(key)+40)]
		}
	}
	for _, key := range []string{".verify=", "verify_ssl=", "ssl_verify=", "rejectunauthorized:", "check_hostname="} {
		if i := strings.Index(flat, key); i >= 0 {
			val := topLevelValue(flat[i+len(key):])
			if !strings.HasPrefix(val, "true") && (strings.Contains(val, "false") || strings.Contains(val, "none")) {
				return key + val
			}
		}
	}
	if i := strings.Index(flat, "hostnameverifier("); i >= 0 {
		tail := flat[i:min(len(flat), i+60)]
		if strings.Contains(tail, "->true") || strings.Contains(tail, "=>true") || strings.Contains(tail, "returntrue") {
			return tail
		}
	}
	if !strings.Contains(flat, "csrf") && !strings.Contains(flat, "xsrf") {
		return ""
	}
	for _, st := range boolSettings(flat) {
		if !st.on && (strings.Contains(st.key, "csrf") || strings.Contains(st.key, "xsrf")) && !strings.Contains(st.key, "exempt") {
			return st.key + "=false"
		}
	}
	return ""
}

// unsignedAlgorithm returns a token-algorithm list (algorithms: [...],
// flattened) that accepts "none", the algorithm of an unsigned token,
// or "".
func unsignedAlgorithm(flat string) string {
	found := ""
	shell.EachIndex(flat, "algorithms", func(i int) bool {
		rest := flat[i+len("algorithms"):]
		open := strings.IndexByte(rest, '[')
		if open < 0 || open > 2 {
			return true
		}
		end := strings.IndexByte(rest[open:], ']')
		if end < 0 {
			return true
		}
		for _, alg := range strings.Split(rest[open+1:open+end], ",") {
			if alg == "none" {
				found = "algorithms" + rest[:open+end+1]
				return false
			}
		}
		return true
	})
	return found
}

// literalOr reports a replacement that ORs a check with a comparison to a
// literal: (password === 'x' || bcrypt.compare(…)).
func literalOr(repl string) bool {
	if !strings.Contains(repl, "||") && !strings.Contains(repl, " or ") {
		return false
	}
	for _, eq := range []string{"=== '", "== '", `=== "`, `== "`, "==='", `==="`} {
		if strings.Contains(repl, eq) {
			return true
		}
	}
	return false
}

// commentsOut reports a replacement that turns the matched line into a
// comment (# &, # \1, // &, rem).
func commentsOut(repl string) bool {
	// A group kept first is the line's indentation: s/^\(\s*\)x/\1# x/
	// (perl's $1).
	r := withoutGroupRefs(repl)
	return r == "" || strings.HasPrefix(r, "#") || strings.HasPrefix(r, "//") || strings.HasPrefix(strings.ToLower(r), "rem ") ||
		commentedGroup(r)
}

// withoutGroupRefs drops a replacement's leading back-references (\1,
// $1) and the blanks around them: the text they keep (a key, the
// indentation) runs nothing.
func withoutGroupRefs(r string) string {
	r = strings.TrimSpace(r)
	for len(r) > 1 && (r[0] == '\\' || r[0] == '$') && r[1] >= '1' && r[1] <= '9' {
		r = strings.TrimSpace(r[2:])
	}
	return r
}

// commentedGroup reports a replacement that puts a matched group after
// a comment marker, anywhere in the line: "$1_ = ctx // $2".
func commentedGroup(r string) bool {
	for _, marker := range []string{"//", "#"} {
		for i := strings.Index(r, marker); i >= 0; {
			rest := strings.TrimLeft(r[i+len(marker):], " ")
			if len(rest) > 0 && rest[0] == '&' || len(rest) > 1 && (rest[0] == '$' || rest[0] == '\\') && rest[1] >= '1' && rest[1] <= '9' {
				return true
			}
			next := strings.Index(r[i+len(marker):], marker)
			if next < 0 {
				break
			}
			i += len(marker) + next
		}
	}
	return false
}

// sedDeletions returns the regular expressions of the lines a sed script
// deletes: /re/d, /re/,+Nd, /re/,/re2/d (both) and /re/,$d.
func sedDeletions(script string) []string {
	var out []string
	// Addresses are read where a command starts, not by splitting on ";":
	// a regular expression may hold one (/app.use(csrf());/d).
	for i := 0; i < len(script); i++ {
		if script[i] != '/' || !sedCommandStart(script, i) {
			continue
		}
		cmd := script[i:]
		var res []string
		for strings.HasPrefix(cmd, "/") {
			end := closingSlash(cmd[1:])
			if end < 0 {
				break
			}
			res = append(res, cmd[1:1+end])
			cmd = strings.TrimSpace(cmd[end+2:])
			if !strings.HasPrefix(cmd, ",") {
				break
			}
			cmd = strings.TrimSpace(cmd[1:])
			// A range's end: /re2/ (read next), +N, N or $.
			if !strings.HasPrefix(cmd, "/") {
				cmd = strings.TrimLeft(cmd, "+$0123456789")
			}
		}
		if len(res) > 0 && strings.HasPrefix(cmd, "d") {
			out = append(out, res...)
		}
		// A block of commands for the addressed lines: /a/,/b/{/x/d;/y/d}.
		if len(res) > 0 && strings.HasPrefix(cmd, "{") {
			if end := strings.LastIndexByte(cmd, '}'); end > 0 {
				out = append(out, sedDeletions(strings.ReplaceAll(cmd[1:end], ";", "\n"))...)
			}
		}
		i = max(i, len(script)-len(cmd)-1)
	}
	return out
}

// sedCommandStart reports whether script[i] begins a sed command: it
// follows the start, a ";", a newline or a "{", blanks apart.
func sedCommandStart(script string, i int) bool {
	j := i - 1
	for j >= 0 && (script[j] == ' ' || script[j] == '\t') {
		j--
	}
	return j < 0 || script[j] == ';' || script[j] == '\n' || script[j] == '{'
}

// securityConfig reports files that configure a security check: a secret
// scanner's settings, the hooks that run scanners, a workflow named for a
// scan, and CODEOWNERS (who must review).
func securityConfig(abs string) bool {
	base := baseName(abs)
	switch base {
	case ".gitleaks.toml", "gitleaks.toml", ".pre-commit-config.yaml", "CODEOWNERS", ".secrets.baseline", ".semgrep.yml", ".snyk", "trufflehog.yml":
		return true
	}
	if strings.Contains(abs, "/.github/workflows/") || strings.HasPrefix(abs, ".github/workflows/") {
		return securityChecks.in(base) || workflowScanNames.in(base)
	}
	return false
}

// workflowScanNames mark a workflow named for a scan (codeql.yml,
// secret-scan.yml, security.yml).
var workflowScanNames = newFoldSet("codeql", "secret", "security", "scan", "sast", "audit", "dependency-review", "scorecard")

// securityConfigEdit says how an in-place edit turns a security
// configuration off: every line commented out (s/^/# /), or lines deleted
// from CODEOWNERS.
func securityConfigEdit(files []string, script string) string {
	for _, f := range files {
		if !securityConfig("/" + strings.TrimPrefix(f, "/")) {
			continue
		}
		for _, sub := range sedSubstitutions(script) {
			if sub[0] == "^" && commentsOut(sub[1]) {
				return "comments out all of " + f + ", which configures a security check"
			}
		}
		if baseName(f) == "CODEOWNERS" && len(sedDeletions(script)) > 0 {
			return "deletes owners from CODEOWNERS: their review is no longer required"
		}
	}
	return ""
}

// closingSlash returns the index of the first / in s that no backslash
// escapes, or -1.
func closingSlash(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '/':
			return i
		}
	}
	return -1
}

// configFile reports files that hold an application's or a tool's
// settings: .env files, YAML, TOML, INI, properties, Django settings.
func configFile(abs string) bool {
	base := baseName(abs)
	switch path.Ext(base) {
	case ".yml", ".yaml", ".toml", ".ini", ".cfg", ".conf", ".properties", ".tfvars":
		return true
	}
	return strings.HasPrefix(base, ".env") || strings.HasPrefix(base, "settings") && strings.HasSuffix(base, ".py") ||
		base == "settings.json" && (strings.Contains(abs, "/Code/User/") || strings.Contains(abs, "/.vscode/") || strings.Contains(abs, "/Cursor/User/")) ||
		strings.Contains(abs, "/config/") && (strings.HasSuffix(base, ".rb") || strings.HasSuffix(base, ".py")) ||
		base == "policy.json" && strings.Contains(abs, "/containers/") || // podman's and skopeo's image trust
		// A browser's preferences, an editor's init, firmware's build settings.
		base == "user.js" || base == "prefs.js" || base == ".emacs" || base == "init.el" || base == "early-init.el" ||
		strings.HasPrefix(base, "sdkconfig")
}

// checkWeakeningWrite judges text written into a file: a configuration
// setting that turns certificate, transport or CSRF checks off, a check
// function defined to always pass, a security check's script replaced
// by a no-op, a scanner told to skip the source tree, a security lint
// rule turned off.
func (s *scan) checkWeakeningWrite(abs, content string) {
	if !s.enabled(rDefWeakeningEdit) {
		return
	}
	if what := weakeningWrite(abs, content, s.codeMarks); what != "" {
		s.add(rDefWeakeningEdit, what+": make the change by hand, in review", abs)
	}
}

// weakeningWrite says how content written into abs takes a protection
// out, or "". Each test runs only for the kind of file it concerns.
func weakeningWrite(abs, content string, marksOf func(string) uint32) string {
	base := baseName(abs)
	one := []string{abs}
	if workflowFiles(one) {
		if risk := workflowRisk(content); risk != "" {
			return "writes " + base + ", a workflow that " + risk
		}
	}
	switch path.Ext(base) {
	case ".js", ".ts", ".html", ".htm", ".jsx", ".tsx", ".vue", ".svelte", ".mjs":
		if h := clientBeacon(content); h != "" {
			return "writes code into " + base + " that sends what users type, store or submit to " + h
		}
	}
	if strings.HasPrefix(base, ".env") {
		if name := publicSecret(content); name != "" {
			return "writes " + name + " into " + base + ": the build inlines it into the code every browser downloads"
		}
	}
	if configFile(abs) {
		if setting := insecureSetting(content); setting != "" {
			return "writes " + setting + " into " + base + ", which turns a protection off"
		}
		if productionFile(one) {
			if setting := productionSetting(content); setting != "" {
				return "writes " + setting + " into " + base + ", production settings"
			}
		}
	}
	if sourceCode(one) {
		if name := constantCheck(content); name != "" {
			return "defines " + name + " in " + base + " to pass whatever it is given, which takes the check out"
		}
		if what := weakeningCode(abs, base, content, marksOf(content)); what != "" {
			return what
		}
	}
	if strings.HasSuffix(base, ".rego") && requestKeyedAllow(strings.ToLower(content)) {
		return "writes an allow rule into " + base + " that a request header or parameter matched against a literal opens"
	}
	if testConfigFile(base) {
		if excl := testsExcluded("", strings.ToLower(content)); excl != "" {
			return "writes " + base + ", which leaves the tests of a protection out of the run (" + excl + ")"
		}
	}
	if testConfigFile(base) {
		if how := skipsEveryTest(base, content); how != "" {
			return "writes " + base + " with " + how + ": the test run passes without testing anything"
		}
	}
	if kind := noOpScript(abs, content); kind != "" {
		return "replaces " + base + ", which runs " + kind + ", with a script that does nothing"
	}
	if tree := scannerSkipsSource(abs, content); tree != "" {
		return "tells a security scanner to skip " + tree + " in " + base
	}
	if what := scannerSuppressions(base, content); what != "" {
		return "adds " + what + " to " + base + ", so the scanner stops reporting them"
	}
	if what := buildTestsOff(base, content); what != "" {
		return "writes " + base + ", which " + what
	}
	if base == ".pre-commit-config.yaml" && strings.Contains(flatSetting(content), "repos:[]") {
		return "writes " + base + " with no repositories: every hook it ran stops running"
	}
	if lintConfig(abs) {
		if rule := securityRuleOff(content); rule != "" {
			return "turns the security lint rule " + rule + " off in " + base
		}
	}
	return ""
}

// scannerSuppressions says what a write adds to a security scanner's
// list of findings not to report (.trivyignore, .grype.yaml,
// .gitleaksignore, .snyk, checkov's skip-check), or "": a known
// vulnerability or check silenced is a decision for review.
func scannerSuppressions(base, content string) string {
	switch base {
	case ".trivyignore", ".trivyignore.yaml", ".grype.yaml", ".gitleaksignore", ".snyk", ".osv-scanner.toml", ".bandit":
	case ".checkov.yaml", ".checkov.yml":
		if !strings.Contains(content, "skip-check") && !strings.Contains(content, "CKV_") {
			return ""
		}
	default:
		return ""
	}
	n := 0
	for line := range strings.SplitSeq(content, "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n) + " lines of suppressed findings"
}

// buildTestsOff says how a build file turns the project's test tasks off
// (Gradle's tasks.withType<Test> { enabled = false }, dbt's tests:
// +enabled: false), or "".
func buildTestsOff(base, content string) string {
	gradle := strings.HasPrefix(base, "build.gradle") || strings.HasSuffix(base, ".gradle.kts")
	if !gradle && base != "dbt_project.yml" {
		return "" // one look at the name for most files
	}
	flat := flatSetting(content)
	switch {
	case gradle && (strings.Contains(flat, "withtype<test>") || strings.Contains(flat, "withtype(test)")) &&
		(strings.Contains(flat, "enabled=false") || strings.Contains(flat, "onlyif{false}")):
		return "turns every test task of the build off"
	case !gradle && (strings.Contains(flat, "+enabled:false") || strings.Contains(flat, "[+enabled]=false")) && strings.Contains(flat, "tests"):
		return "turns the project's dbt tests off"
	}
	return ""
}

// productionFile reports a file of production settings
// (config/settings/production.py, .env.production, prod.yaml).
func productionFile(files []string) bool {
	for _, f := range files {
		if strings.Contains(strings.ToLower(f), "prod") {
			return true
		}
	}
	return false
}

// productionSetting returns a setting that is everyday in development
// and a hole in production: debug pages, any host name accepted.
func productionSetting(text string) string {
	flat := flatSetting(text)
	if strings.Contains(flat, "debug=") && strings.Contains(flat, "default=true") {
		return "debug on unless the environment says otherwise"
	}
	for _, st := range []string{"debug=true", "debug:true", "app_debug=true", "allowed_hosts=[*]"} {
		if strings.Contains(flat, st) {
			return st
		}
	}
	return ""
}

// constantCheck returns the name of an authorisation check that text
// defines with a body that passes everything (def verify_token(t):
// return True; function isAdmin() { return true; }), or "". It looks
// only at definitions (def, function, func) whose name is a check's.
func constantCheck(text string) string {
	name := ""
	for _, kw := range []string{"def ", "function ", "func "} {
		shell.EachIndex(text, kw, func(i int) bool {
			rest := text[i+len(kw):]
			open := strings.IndexAny(rest, "(\n")
			if open < 0 || rest[open] != '(' || !authChecks.in(rest[:open]) {
				return true
			}
			sig, next := rest, ""
			if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
				sig, next = rest[:nl], rest[nl+1:]
			}
			body := ""
			if j := strings.LastIndexAny(sig, ":{"); j >= 0 {
				body = strings.TrimSpace(sig[j+1:])
			}
			// The body starts on the next line that holds anything.
			for body == "" && next != "" {
				line := next
				if nl := strings.IndexByte(next, '\n'); nl >= 0 {
					line, next = next[:nl], next[nl+1:]
				} else {
					next = ""
				}
				body = strings.TrimSpace(line)
			}
			if passesAll(body) {
				name = strings.TrimSpace(rest[:open])
				return false
			}
			return true
		})
		if name != "" {
			return name
		}
	}
	return ""
}

// passesAll reports a function body that accepts whatever it is given.
func passesAll(body string) bool {
	switch strings.TrimSpace(strings.TrimRight(body, ";} ")) {
	case "return True", "return true", "return 1", "return nil", "pass", "return None, True", "return true, nil":
		return true
	}
	return false
}

// noOpScript returns what a script named for a check runs (a security
// check: security_check.sh, scan-secrets.sh; the project's checks:
// verify-manifests.sh, run-tests.sh) when content, written over it,
// does nothing (exit 0, true, :, echo); else "".
func noOpScript(abs, content string) string {
	base := baseName(abs)
	kind := ""
	switch {
	case securityChecks.in(base) || workflowScanNames.in(base):
		kind = "a security check"
	case containsAnyOf(base, []string{"test", "verify", "check", "lint", "validate", "pre-commit", "pre-push", "commit-msg"}):
		kind = "the project's checks"
	default:
		return ""
	}
	for line := range strings.Lines(content) {
		switch l := strings.TrimSpace(line); {
		case l == "", strings.HasPrefix(l, "#"), noOpCommand(l), l == "exit":
		default:
			return ""
		}
	}
	if !runsChecks([]string{abs}) {
		return ""
	}
	return kind
}

// sourceTrees are the directories application code lives in.
var sourceTrees = []string{"src", "app", "lib", "pkg", "internal", "cmd", "server", "api", ".", "*", "**"}

// scannerSkipsSource returns a source tree a scanner's ignore list or
// exclusions name (.semgrepignore holding src/, bandit's exclude_dirs
// holding app), or "".
func scannerSkipsSource(abs, content string) string {
	base := baseName(abs)
	var entries []string
	switch {
	case base == ".semgrepignore" || base == ".trivyignore" || base == ".snyk" || base == ".bandit":
		for line := range strings.Lines(content) {
			entries = append(entries, strings.TrimSpace(line))
		}
	case (base == "pyproject.toml" || base == "setup.cfg" || base == "tox.ini" || base == "bandit.yaml" || base == "bandit.yml") &&
		(strings.Contains(content, "[tool.bandit]") || strings.Contains(content, "[bandit]") || strings.Contains(content, "exclude_dirs")):
		for line := range strings.Lines(content) {
			key, val, ok := strings.Cut(line, "=")
			if ok && strings.Contains(key, "exclude") {
				entries = append(entries, strings.FieldsFunc(val, func(r rune) bool { return strings.ContainsRune(" \t[]\"',", r) })...)
			}
		}
	case base == ".gitleaks.toml" || base == "gitleaks.toml" || base == ".gitleaksignore":
		// An allowlist of paths that match every file.
		for line := range strings.Lines(content) {
			key, val, ok := strings.Cut(line, "=")
			if !ok || !strings.Contains(key, "paths") && !strings.Contains(key, "regexes") {
				continue
			}
			for _, e := range strings.FieldsFunc(val, func(r rune) bool { return strings.ContainsRune(" \t[],", r) }) {
				if catchAll(strings.Trim(e, `"'`)) {
					return "every file"
				}
			}
		}
		return ""
	default:
		return ""
	}
	for _, e := range entries {
		e = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(e, "./"), "/"), "/")
		for _, tree := range sourceTrees {
			if e == tree {
				return e + "/"
			}
		}
	}
	return ""
}

// catchAll reports a regular expression that matches any text.
func catchAll(re string) bool {
	re = strings.TrimSuffix(strings.TrimPrefix(re, "^"), "$")
	re = strings.TrimSuffix(strings.TrimPrefix(re, "("), ")")
	return re == ".*" || re == ".+" || re == "(?s).*" || re == ".*?"
}

// lintConfig reports a linter's configuration file.
func lintConfig(abs string) bool {
	base := strings.ToLower(baseName(abs))
	return strings.Contains(base, "eslint") || strings.Contains(base, "lint") || strings.Contains(base, "rubocop") ||
		base == "pyproject.toml" || base == "setup.cfg" || base == "ruff.toml" || base == ".ruff.toml" || base == ".bandit" ||
		strings.Contains(base, "semgrep") || strings.Contains(base, "golangci") || base == ".brakeman.yml"
}

// securityMarks mark a lint rule that guards against a vulnerability.
var securityMarks = []string{"security", "no-eval", "no-implied-eval", "no-new-func", "detect-", "xss", "injection", "gosec", "bandit",
	"no-unsanitized", "dangerously"}

// banditIgnored returns the flake8-bandit code (S, S1, S602: the
// security family of ruff and flake8) a flattened ignore list holds, or
// "".
func banditIgnored(flat string) string {
	code := ""
	for _, key := range []string{"ignore=[", "ignore:[", "extend-ignore=", "extend_ignore=", "ignore=", "skips=", "skips:"} {
		// flake8-bandit's S codes under ignore; bandit's own B codes
		// under its skips.
		prefix, tool := byte('s'), " (flake8-bandit)"
		if strings.HasPrefix(key, "skips") {
			prefix, tool = 'b', " (bandit)"
		}
		shell.EachIndex(flat, key, func(i int) bool {
			list := flat[i+len(key):]
			if end := strings.IndexAny(list, "]\n#"); end >= 0 {
				list = list[:end]
			}
			for item := range strings.SplitSeq(strings.TrimPrefix(list, "["), ",") {
				if item != "" && item[0] == prefix && strings.Trim(item[1:], "0123456789") == "" {
					code = strings.ToUpper(item) + tool
					return false
				}
			}
			return true
		})
		if code != "" {
			return code
		}
	}
	return ""
}

// securityRuleOff returns a security lint rule text turns off ("no-eval":
// "off", 'security/detect-child-process': 0 is not read), or "".
func securityRuleOff(text string) string {
	flat, rule := flatSetting(text), ""
	if code := banditIgnored(flat); code != "" {
		return code
	}
	for _, off := range []string{":off", "=off", ":ignore"} {
		shell.EachIndex(flat, off, func(i int) bool {
			name := flat[strings.LastIndexAny(flat[:i], "{,[(;\n")+1 : i]
			for _, m := range securityMarks {
				if strings.Contains(name, m) {
					rule = name
					return false
				}
			}
			return true
		})
		if rule != "" {
			return rule
		}
	}
	return ""
}

// literalPairs appends the first two string literals of each call of
// code: .replace('a', 'b'), re.sub(r'a', r'b', s).
func literalPairs(code, call string, subs [][2]string) [][2]string {
	shell.EachIndex(code, call, func(at int) bool {
		rest := code[at+len(call):]
		a, end, ok := codeLiteralAt(rest, skipSpace(rest, 0))
		if !ok {
			return true
		}
		j := skipSpace(rest, end)
		if j >= len(rest) || rest[j] != ',' {
			return true
		}
		if b, _, ok := codeLiteralAt(rest, skipSpace(rest, j+1)); ok {
			subs = append(subs, [2]string{a, b})
		}
		return true
	})
	return subs
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n') {
		i++
	}
	return i
}

// pyStringAt reads a one-line Python string literal ('…' or "…", with an
// optional r/b/f prefix) starting at s[i], returning its text and the
// index after it.
func pyStringAt(s string, i int) (lit string, end int, ok bool) {
	for i < len(s) && (s[i] == 'r' || s[i] == 'b' || s[i] == 'f' || s[i] == 'R' || s[i] == 'B' || s[i] == 'F') && i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '"' || s[i+1] == 'r' || s[i+1] == 'b') {
		i++
	}
	if i >= len(s) || s[i] != '\'' && s[i] != '"' {
		return "", i, false
	}
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && j+1 < len(s):
			j++
			b.WriteByte(s[j])
		case c == q:
			return b.String(), j + 1, true
		case c == '\n':
			return "", j, false
		default:
			b.WriteByte(c)
		}
	}
	return "", len(s), false
}

// outsiderEvents are the workflow events anyone with an account can
// cause: a comment, an issue, a discussion.
var outsiderEvents = []string{"issue_comment", "issues", "discussion_comment", "discussion", "pull_request_review_comment"}

// outsiderTrigger returns the event of outsiderEvents that text, a
// workflow or the part of one an edit writes, runs on, or "". It reads
// the triggers where YAML or a yq/jq program puts them: a block under a
// top-level on: (not permissions: issues: write), on: EVENT,
// on: [A, B], and on = {"EVENT": …}.
func outsiderTrigger(text string) string {
	flat := flatSetting(text)
	for _, head := range []string{"on:", "on="} {
		for from := 0; ; {
			i := strings.Index(flat[from:], head)
			if i < 0 {
				break
			}
			i += from
			from = i + len(head)
			if i > 0 && (isWordByte(flat[i-1]) && flat[i-1] != '.' || flat[i-1] == '_') {
				continue // version:, session=, …
			}
			if ev := triggerAmong(flat[from:]); ev != "" {
				return ev
			}
		}
	}
	return blockTrigger(text)
}

// triggerAmong returns the outsider event that starts s (on:EVENT), is
// an item of the list (on:[A,B]) or a key of the object (on={A:…,B:…})
// s starts with, or "".
func triggerAmong(s string) string {
	var items []string
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return ""
		}
		items = strings.Split(s[1:end], ",")
	case strings.HasPrefix(s, "{"):
		depth := 0
		start := 1
		for k := 0; k < len(s); k++ {
			switch s[k] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			case ':':
				if depth == 1 {
					items = append(items, s[start:k])
				}
			case ',':
				if depth == 1 {
					start = k + 1
				}
			}
			if depth == 0 {
				break
			}
		}
	default:
		end := strings.IndexAny(s, "\n:,}")
		if end < 0 {
			end = len(s)
		}
		items = []string{s[:end]}
	}
	for _, it := range items {
		if slices.Contains(outsiderEvents, strings.TrimSpace(it)) {
			return strings.TrimSpace(it)
		}
	}
	return ""
}

// blockTrigger returns the outsider event that is a key directly under a
// top-level on: block of YAML text, or "".
func blockTrigger(text string) string {
	in, child := false, -1
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		if indent == 0 {
			in = strings.Trim(strings.TrimSuffix(trimmed, ":"), `"'`) == "on" && strings.HasSuffix(trimmed, ":")
			child = -1
			continue
		}
		if !in {
			continue
		}
		if child < 0 {
			child = indent
		}
		if indent != child {
			continue
		}
		key, _, _ := strings.Cut(trimmed, ":")
		if slices.Contains(outsiderEvents, strings.Trim(key, `"'`)) {
			return strings.Trim(key, `"'`)
		}
	}
	return ""
}

// workflowRisk says how a CI workflow's text exposes the repository, or
// "": a pull_request_target trigger (pull requests from forks run with
// the repository's secrets and a write token; worse when it checks out
// the fork's code), a token with write access to everything, every
// secret handed to a job at once.
func workflowRisk(text string) string {
	flat := flatSetting(text)
	switch {
	case strings.Contains(flat, "pull_request_target") &&
		(strings.Contains(flat, "pull_request.head") || strings.Contains(flat, "refs/pull/") || strings.Contains(flat, "github.head_ref")):
		return "runs on pull_request_target and checks out the pull request's code: a fork's code runs with the repository's secrets and write token"
	case strings.Contains(flat, "pull_request_target"):
		return "runs on pull_request_target: pull requests from forks run with the repository's secrets and write token"
	case outsiderTrigger(text) != "" && !strings.Contains(flat, "author_association") && !strings.Contains(flat, "github.actor"):
		return "runs on " + outsiderTrigger(text) + ": anyone who comments or opens an issue starts it, with the repository's secrets and token"
	case strings.Contains(flat, "permissions:write-all"):
		return "gives its token write access to everything (permissions: write-all)"
	case strings.Contains(flat, "tojson(secrets)"):
		return "hands every repository secret to a job at once (toJSON(secrets))"
	case strings.Contains(flat, "actions_allow_unsecure_commands:true") || strings.Contains(flat, "actions_allow_unsecure_commands:1"):
		return "turns the deprecated set-env and add-path commands back on (ACTIONS_ALLOW_UNSECURE_COMMANDS): any log line a step prints can set its environment or PATH"
	case strings.Contains(flat, "action-tmate") || strings.Contains(flat, "action-upterm") || strings.Contains(flat, "debugger-action"):
		return "opens an interactive shell into the runner from outside (a tmate or upterm session), with the job's secrets and token"
	case untrustedExpression(flat) != "":
		return "puts " + untrustedExpression(flat) + ", which anyone who comments or opens an issue or pull request writes, into a script it runs: they choose the commands"
	case strings.Contains(flat, "upload-artifact") && (strings.Contains(flat, "path:.\n") || strings.Contains(flat, "path:.,") ||
		strings.Contains(flat, "path:.}") || strings.Contains(flat, "path:./\n") || strings.Contains(flat, "github.workspace")) &&
		strings.Contains(flat, "include-hidden-files:true"):
		return "uploads the whole workspace, hidden files and .git included, as an artifact anyone with read access can download"
	}
	return ""
}

// inRunStep reports whether position i of a flattened workflow is in a
// run: script: on a run: line, or below a run: | whose block no other
// key has ended (env: BODY: ${{ … }} is the safe way to pass a value).
func inRunStep(flat string, i int) bool {
	start := strings.LastIndexByte(flat[:i], '\n') + 1
	if strings.Contains(flat[start:i], "run:") || strings.HasPrefix(flat[start:], "-run:") {
		return true
	}
	if strings.Contains(flat[start:i], ":") {
		return false // another key's value: env:, with:, if:
	}
	for end := start - 1; end > 0; {
		prev := strings.LastIndexByte(flat[:end], '\n') + 1
		line := flat[prev:end]
		if strings.HasPrefix(line, "run:") || strings.HasPrefix(line, "-run:") {
			return true
		}
		if strings.HasSuffix(line, ":") || strings.HasSuffix(line, ":|") || strings.HasSuffix(line, ":>") {
			return false
		}
		end = prev - 1
	}
	return false
}

// untrustedExpression returns a ${{ github.event… }} expression of text
// (flattened) whose value an outsider writes (an issue's or comment's
// body or title, a pull request's branch name), when a run step uses it,
// or "".
func untrustedExpression(flat string) string {
	if !strings.Contains(flat, "run:") {
		return ""
	}
	for _, field := range []string{"github.event.comment.body", "github.event.issue.title", "github.event.issue.body",
		"github.event.pull_request.title", "github.event.pull_request.body", "github.event.review.body",
		"github.event.discussion.title", "github.event.discussion.body", "github.event.head_commit.message",
		"github.event.pull_request.head.ref", "github.head_ref", "github.event.review_comment.body"} {
		if i := strings.Index(flat, "${{"+field+"}}"); i >= 0 && inRunStep(flat, i) {
			return "${{ " + field + " }}"
		}
	}
	return ""
}

// checkSkippedChecks flags a commit or hook run told to skip security
// hooks by name: SKIP=gitleaks,detect-secrets git commit (pre-commit's
// own switch).
func (s *scan) checkSkippedChecks(v *cmdView) {
	for _, a := range v.c.Assigns {
		if list, ok := strings.CutPrefix(a, "SKIP="); ok && securityChecks.in(strings.ReplaceAll(list, ",", " ")) && s.enabled(rDefWeakeningEdit) {
			s.add(rDefWeakeningEdit, v.prog+" runs with "+a+": the security hooks it names are skipped for this change; run them, or have a person decide",
				a+" "+v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// policyWidened reports (under infra.access-grant) a substitution of
// v's that widens an access policy to a wildcard, and whether it did.
func (s *scan) policyWidened(v *cmdView, subs [][2]string) bool {
	if !s.enabled(rCloudGrant) {
		return false
	}
	for _, sub := range subs {
		if grant := policyWildcard(sub[1]); grant != "" && policyWildcard(sub[0]) == "" {
			s.add(rCloudGrant, v.prog+" widens an access policy to "+grant+": granting access is for a person to do on purpose; a human should approve it",
				v.prog+" "+evJoin(v.args))
			return true
		}
	}
	return false
}

// policyWildcard returns the wildcard grant an access policy's text
// holds ("Action": ["*"], "Action": "*", actions = ["*"]), or "".
func policyWildcard(text string) string {
	flat := flatSetting(text)
	for _, key := range []string{"action:", "action=", "actions:", "actions="} {
		for from := 0; ; {
			i := strings.Index(flat[from:], key)
			if i < 0 {
				break
			}
			i += from
			from = i + len(key)
			if i > 0 && isWordByte(flat[i-1]) && flat[i-1] != '.' {
				continue // notaction, …
			}
			val, _, _ := strings.Cut(topLevelValue(strings.TrimPrefix(flat[from:], "[")), "|") // yq: .a = "*" | .b = …
			for _, item := range strings.Split(val, ",") {
				if item = strings.Trim(item, "[]"); item == "*" || strings.HasSuffix(item, ":*") {
					return "every action of a service or more (" + key + item + ")"
				}
			}
		}
	}
	for _, everyone := range []string{"member=allusers", "member=allauthenticatedusers", "members=[allusers", "members=[allauthenticatedusers"} {
		if strings.Contains(flat, everyone) {
			return "everyone on the internet (" + everyone + ")"
		}
	}
	for _, managed := range []string{"policy/administratoraccess", "policy/poweruseraccess", "policy/iamfullaccess", "roles/owner", "roles/editor"} {
		if strings.Contains(flat, managed) {
			return "an administrator's managed policy (" + managed + ")"
		}
	}
	return openCIDR(flat)
}

// openCIDR returns a network rule of flattened text open to the whole
// internet, or "". A written load balancer's rule may be that on
// purpose; an edit that widens one to it is judged (policyWildcard).
func openCIDR(flat string) string {
	for _, open := range []string{"cidr_blocks=[0.0.0.0/0", "ipv6_cidr_blocks=[::/0", "source_ranges=[0.0.0.0/0", "cidr_ipv4=0.0.0.0/0"} {
		if strings.Contains(flat, open) {
			return "the whole internet (" + open + ")"
		}
	}
	return ""
}

// checkGrantWrite reports infrastructure code written into a file that
// grants every action or an administrator's managed policy
// (AdministratorAccess attached to a new user).
func (s *scan) checkGrantWrite(abs, content string) {
	switch path.Ext(abs) {
	case ".tf", ".hcl", ".json", ".yaml", ".yml":
	default:
		return
	}
	if !s.enabled(rCloudGrant) || !containsFold(content, "action") && !containsFold(content, "access") && !containsFold(content, "roles/") &&
		!containsFold(content, "allusers") && !containsFold(content, "allauthenticatedusers") {
		return
	}
	if grant := policyWildcard(content); grant != "" && openCIDR(flatSetting(content)) != grant {
		s.add(rCloudGrant, "writes "+baseName(abs)+", which grants "+grant+": granting access is for a person to do on purpose; a human should approve it", abs)
	}
}

// topLevelValue returns s up to the first , ; } ) or newline outside
// parentheses and brackets: a setting's value expression.
func topLevelValue(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			if depth == 0 {
				return s[:i]
			}
			depth--
		case ',', ';', '}', '\n':
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return s
}

// settingsModule reports a source file that holds an application's
// settings (settings.py, config/production.rb, app.config.ts).
func settingsModule(abs string) bool {
	b := strings.ToLower(baseName(abs))
	return strings.Contains(b, "setting") || strings.Contains(b, "config") || strings.Contains(b, "conf.") ||
		strings.Contains(abs, "/config/") || strings.Contains(abs, "/settings/") || strings.Contains(b, "production")
}

// codeSwitches mark the protections code switches in place: certificate
// and host-name checks, CSRF.
var codeSwitches = []string{"verify", "insecure", "rejectunauthorized", "reject_unauthorized", "danger_accept", "hostnameverifier",
	"trustall", "cert_none", "check_hostname", "csrf"}

// writtenCodeMarkers finds, in one pass over a written source file, what its
// checks need: a process started and a request read (a web shell,
// patches.go), a protection's switch, a credential's name, a header
// read, an identity or rate-limit assignment, the whole environment, an
// account or sign-in (weakeningCode).
var writtenCodeMarkers = func() *foldSet {
	fs := &foldSet{}
	fs.addAll(webProcess, processStarts)
	fs.addAll(webRequest, requestInputs)
	fs.addAll(markSwitch, codeSwitches)
	fs.addAll(markCredential, credentialNames)
	fs.addAll(markHeader, headerReads)
	fs.addAll(markIdentity, identitySinks)
	fs.addAll(markEnvironment, []string{"environ", "process.env", "getenv()", "env::vars"})
	fs.addAll(markBackdoor, []string{"admin", "login", "superuser", "create_user", "createuser", "gate::", "authorize(", "sign_in(", "canactivate("})
	return fs
}()

const (
	webProcess uint32 = 1 << iota
	webRequest
	markSwitch
	markCredential
	markHeader
	markIdentity
	markEnvironment // the whole environment named (backdoorCode, envDumped)
	markBackdoor    // an account, a sign-in or an authorisation hook
	allCodeMarks    = webProcess | webRequest | markSwitch | markCredential | markHeader | markIdentity | markEnvironment | markBackdoor
)

// codeMarks returns writtenCodeMarkers' bits for content, once per text.
func (s *scan) codeMarks(content string) uint32 {
	if s.codeText != content || content == "" {
		s.codeText, s.codeBits = content, writtenCodeMarkers.scanBits(content, allCodeMarks)
	}
	return s.codeBits
}

// weakeningCode says how source code written into abs (named base) takes
// a protection out, or "": a protection's setting turned off (in
// settings modules and security code, where settings live), identity
// taken from a header, a credential compared with a literal. Tests are
// left alone: they compare tokens with literals on purpose.
func weakeningCode(abs, base, content string, marks uint32) string {
	if testPath(abs) {
		return ""
	}
	// Every setting in settings modules and security code; elsewhere,
	// where a file seldom holds one, only once a certificate or CSRF
	// switch is named at all.
	if settingsModule(abs) || securitySubjects.in(abs) || marks&markSwitch != 0 {
		if setting := insecureSetting(content); setting != "" {
			return "writes " + setting + " into " + base + ", which turns a protection off"
		}
	}
	// The tests below read the code lower-cased: made once, and only
	// when one of them will run.
	lower := ""
	if marks&(markHeader|markIdentity|markCredential|markEnvironment|markBackdoor) != 0 {
		lower = strings.ToLower(content)
	}
	if marks&(markHeader|markIdentity) == markHeader|markIdentity && requestIdentity(lower) {
		return "writes code into " + base + " that takes the caller's identity or rate-limit key from a header the caller sets"
	}
	if marks&markCredential != 0 && (credentialLiteral(lower) || guardCalls.in(lower) && literalAccepted(lower)) {
		return "writes code into " + base + " that lets in whoever presents a literal written into it"
	}
	if marks&(markCredential|markHeader|markEnvironment) != 0 {
		if host := credentialsSentOut("", lower); host != "" {
			return "writes code into " + base + " that sends credentials or request headers to " + host
		}
	}
	if marks&markEnvironment != 0 && envDumped(lower) {
		return "writes code into " + base + " that sends the whole environment, every secret in it, to the client"
	}
	if marks&markBackdoor != 0 && !plantedCodePath(abs) {
		if what := backdoorCode(lower); what != "" {
			return "writes code into " + base + " that " + what
		}
	}
	return ""
}

// otherRefusals are answers that still refuse, without saying why: a 404
// in place of a 403 hides that the record exists.
var otherRefusals = []string{"notfound", "not_found", "404", "badrequest", "bad_request", "400", "410", "gone", "conflict", "409"}

// strongRefusal reports text that refuses a request outright: a 401 or
// 403, Forbidden, PermissionDenied, AccessDenied, Unauthorized.
func strongRefusal(s string) bool {
	return containsAnyOf(s, []string{"401", "403", "forbidden", "permissiondenied", "accessdenied", "access_denied", "unauthorized", "unauthorised", "notauthorized"})
}

// securityNamedCode reports application code (not tests) named for a
// protection: auth.py, csrf.go, oauth.py.
func securityNamedCode(files []string) bool {
	for _, f := range files {
		if sourceCode([]string{f}) && !testPath(f) && securitySubjects.in(f) {
			return true
		}
	}
	return false
}

// perlDeletions returns a perl -n / -p program's line deletions as sed
// /re/d lines: print unless /re/, print if !/re/, next if /re/.
func perlDeletions(code string) string {
	var b strings.Builder
	for _, form := range []string{"print unless /", "print if !/", "next if /", "next if(/"} {
		shell.EachIndex(code, form, func(i int) bool {
			rest := code[i+len(form):]
			if end := closingSlash(rest); end >= 0 {
				b.WriteString("\n/" + rest[:end] + "/d")
			}
			return true
		})
	}
	return b.String()
}

// perlCommentOuts returns, as substitutions (the address, a comment
// marker), the lines a perl or ruby -p program comments out through a
// statement modifier: $_ = "# $_" if /re/, $_ = "# " + $_ if $_ =~ /re/,
// s/^/# / if /re/.
func perlCommentOuts(code string) [][2]string {
	var subs [][2]string
	for _, form := range []string{" if /", " if $_ =~ /", " if ($_ =~ /", " if (/", " if(/"} {
		shell.EachIndex(code, form, func(i int) bool {
			rest := code[i+len(form):]
			end := closingSlash(rest)
			if end <= 0 {
				return true
			}
			stmt := code[:i]
			if j := strings.LastIndexAny(stmt, ";\n{"); j >= 0 {
				stmt = stmt[j+1:]
			}
			if commentAssignment(strings.TrimSpace(stmt)) {
				subs = append(subs, [2]string{rest[:end], "# "})
			}
			return true
		})
	}
	return subs
}

// commentAssignment reports a statement that puts a comment marker
// before the line: $_ = "# $_", $_ = "// " . $_, s/^/# /.
func commentAssignment(stmt string) bool {
	if rest, ok := strings.CutPrefix(stmt, "$_"); ok {
		rest = strings.TrimSpace(rest)
		if rest, ok = strings.CutPrefix(rest, "="); !ok {
			return false
		}
		rest = strings.TrimLeft(rest, " \t\"'")
		return strings.HasPrefix(rest, "#") || strings.HasPrefix(rest, "//")
	}
	return strings.HasPrefix(stmt, "s/^/#") || strings.HasPrefix(stmt, `s/^/\/\/`)
}

// requestKeyedAllow reports a Rego allow rule whose body compares what
// the request carries (a header, a query parameter) with a literal:
// anyone who sends that value is let in.
func requestKeyedAllow(rego string) bool {
	keyed := false
	shell.EachIndex(rego, "allow", func(i int) bool {
		body := rego[i:min(len(rego), i+300)]
		if end := strings.Index(body, "}"); end > 0 {
			body = body[:end]
		}
		keyed = containsAnyOf(body, []string{"headers[", "headers.", ".query", "params[", "input.request.path"}) &&
			containsAnyOf(body, []string{"== \"", "== '"})
		return !keyed
	})
	return keyed
}

// withoutMessages returns s without its quoted strings that hold a blank
// or a slash: messages and paths, not the names of checks.
func withoutMessages(s string) string {
	if !strings.ContainsAny(s, "\"'") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '"' && c != '\'' {
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i+1:], c)
		if end < 0 {
			b.WriteString(s[i:])
			break
		}
		if lit := s[i+1 : i+1+end]; !strings.ContainsAny(lit, " /") {
			b.WriteString(s[i : i+2+end])
		}
		i += end + 1
	}
	return b.String()
}
