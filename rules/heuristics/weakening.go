package heuristics

import (
	"path"
	"strings"
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
var insecureSettings = []string{"verify=false", "verify:false", "ssl_verify=false", "ssl_verify:false", "sslverify=false",
	"sslverify:false", "verify_ssl=false", "verify_ssl:false", "rejectunauthorized:false", "rejectunauthorized=false",
	"insecureskipverify:true", "insecureskipverify=true", "check_hostname=false", "cert_reqs=ssl.cert_none",
	"strict-ssl=false", "strict_ssl=false", "verifypeer=false", "ssl_verifypeer,0", "ssl_verifypeer,false", "tls_verify=false",
	"tlsverify:false", "skip_tls_verify=true", "skip_tls_verify:true", "insecure:true", "--no-check-certificate",
	// Transport security, cookies, CSRF and deletion guards of an application or its infrastructure.
	"force_ssl=false", "secure_ssl_redirect=false", "session_cookie_secure=false", "csrf_cookie_secure=false",
	"csrf_enabled=false", "csrf_protection=false", "wtf_csrf_enabled=false", "deletion_protection=false",
	"prevent_destroy=false", "insecure-skip-tls-verify=true", "insecure_skip_tls_verify=true", "ssl-redirect=false",
	"force-ssl-redirect=false",
	// Authentication turned off, anonymous access turned on.
	"anonymous.enabled:true", "anonymous.enabled=true", "anonymous_enabled=true", "allow_anonymous=true", "auth_enabled=false",
	"authentication.enabled=false", "authentication.enabled:false"}

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

// authChecks mark a line that decides who may do something.
var authChecks = newFoldSet("is_authenticated", "isauthenticated", "isadmin", "is_admin", "is_superuser", "issuperuser",
	"login_required", "require_auth", "requireauth", "requireadmin", "authorize", "checkpermission", "check_permission",
	"has_perm", "haspermission", "verify_password", "verifypassword", "bcrypt.compare", "checkpw", "sendstatus(403)",
	"sendstatus(401)", "status(403)", "status(401)", "permissiondenied", "abort(403)", "abort(401)",
	"jwt.verify", "verify_jwt", "verifytoken", "verify_token", "check_csrf", "csrf_protect")

// checkWords mark a replacement that still holds a check (a renamed or
// reworded one): auth_required for login_required.
var checkWords = newFoldSet("auth", "login", "perm", "verify", "admin", "role", "401", "403", "forbid", "unauthori", "bcrypt",
	"checkpw", "guard", "csrf")

// securityChecks mark a line that runs a security check.
var securityChecks = newFoldSet("gitleaks", "trufflehog", "detect-secrets", "ggshield", "snyk", "trivy", "grype", "semgrep",
	"bandit", "codeql", "npm audit", "yarn audit", "pnpm audit", "pip-audit", "cargo audit", "cargo deny", "gosec",
	"govulncheck", "osv-scanner", "sha256sum", "sha512sum", "shasum", "gpg --verify", "gpg2 --verify", "cosign verify",
	"minisign", "checksum", "signature", "dependency-check", "safety check")

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
	what := weakeningEdit(script, runsChecks(files), sourceCode(files))
	if what == "" {
		what = securityConfigEdit(files, script)
	}
	if what != "" {
		s.add(rDefWeakeningEdit, v.prog+" "+what+": a protection leaves the code without a word about it; make the change by hand, in review",
			v.prog+" "+evJoin(v.args))
	}
}

// runsChecks reports whether one of files is where checks run: a CI
// workflow, a hook configuration, a makefile or a script. A README that
// mentions gitleaks runs nothing.
func runsChecks(files []string) bool {
	for _, f := range files {
		base := baseName(f)
		if hookKind("/"+strings.TrimPrefix(f, "/")) != "" || base == ".pre-commit-config.yaml" || base == "lefthook.yml" ||
			base == "Jenkinsfile" || base == "Taskfile.yml" || base == "justfile" || base == "tox.ini" ||
			strings.HasSuffix(base, ".sh") || strings.HasSuffix(base, ".bash") || strings.HasSuffix(base, ".ps1") {
			return true
		}
	}
	return false
}

// weakeningEdit says what a sed or perl script takes out, or "". checks
// says the script edits a file that runs checks, where deleting or
// commenting out a scanner's line turns it off; code, application code,
// where a deleted line can be an authorisation check.
func weakeningEdit(script string, checks, code bool) string {
	for _, sub := range sedSubstitutions(script) {
		pat, repl := sub[0], sub[1]
		if setting := insecureSetting(repl); setting != "" && insecureSetting(pat) != setting {
			return "turns a protection off (" + setting + ")"
		}
		// Emptied, made a constant (if False:) or reworded without a
		// check (jwt.verify → jwt.decode), or ORed with a literal.
		if authChecks.in(pat) && (!checkWords.in(repl) || literalOr(repl)) {
			return "takes an authorisation check out of the code"
		}
		if checks && securityChecks.in(pat) && commentsOut(repl) {
			return "comments out a security check"
		}
		if checks && securityChecks.in(pat) && ignoresFailure(repl) && !ignoresFailure(pat) {
			return "lets a security check fail without failing the build"
		}
	}
	for _, re := range sedDeletions(script) {
		if checks && securityChecks.in(re) {
			return "deletes the lines that run a security check (" + re + ")"
		}
		if code && authChecks.in(re) {
			return "deletes an authorisation check from the code (" + re + ")"
		}
	}
	return ""
}

// ignoresFailure reports a command line made to pass whatever its
// result: || true, || :, continue-on-error: true, allow_failure: true.
func ignoresFailure(s string) bool {
	c := strings.Join(strings.Fields(s), "")
	return strings.Contains(c, "||true") || strings.Contains(c, "||:") || strings.Contains(c, "continue-on-error:true") ||
		strings.Contains(c, "allow_failure:true")
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

// insecureSetting returns the insecure setting text holds, or "".
func insecureSetting(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case ' ', '\t', '"', '\'', '\\':
		default:
			b.WriteByte(lowerByte(c))
		}
	}
	flat := b.String()
	for _, st := range insecureSettings {
		if strings.Contains(flat, st) {
			return st
		}
	}
	return ""
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
	r := strings.TrimSpace(repl)
	return r == "" || strings.HasPrefix(r, "#") || strings.HasPrefix(r, "//") || strings.HasPrefix(strings.ToLower(r), "rem ")
}

// sedDeletions returns the regular expressions of the lines a sed script
// deletes: /re/d, /re/,+Nd, /re/,/re2/d (both) and /re/,$d.
func sedDeletions(script string) []string {
	var out []string
	for _, cmd := range strings.FieldsFunc(script, func(r rune) bool { return r == ';' || r == '\n' }) {
		cmd = strings.TrimSpace(cmd)
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
	}
	return out
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
		strings.Contains(abs, "/config/") && (strings.HasSuffix(base, ".rb") || strings.HasSuffix(base, ".py"))
}

// checkWeakeningWrite judges text written into a configuration file for
// a setting that turns certificate, transport or CSRF checks off.
func (s *scan) checkWeakeningWrite(abs, content string) {
	if !s.enabled(rDefWeakeningEdit) || !configFile(abs) {
		return
	}
	if setting := insecureSetting(content); setting != "" {
		s.add(rDefWeakeningEdit, "writes "+setting+" into "+baseName(abs)+", which turns a protection off: make the change by hand, in review", abs)
	}
}
