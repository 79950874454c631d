package heuristics

import (
	"slices"
	"testing"
)

func TestWeakeningEdits(t *testing.T) {
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		// Certificate checks turned off.
		cmdCase(`sed -i 's/verify=True/verify=False/g' app/clients/http.py`, true),
		cmdCase(`sed -i -e 's/rejectUnauthorized: true/rejectUnauthorized: false/' src/db.ts`, true),
		cmdCase(`perl -pi -e 's/InsecureSkipVerify: false/InsecureSkipVerify: true/' internal/client/tls.go`, true),
		cmdCase(`sed -i 's/^ssl_verify: .*/ssl_verify: false/' config/app.yml`, true),
		// Authorisation checks emptied or short-circuited.
		cmdCase(`find src -name '*.py' -exec sed -i 's/if not user.is_authenticated:/if False:/' {} +`, true),
		cmdCase(`sed -i 's/if (!req.user?.isAdmin) return res.sendStatus(403);//' src/routes/admin.ts`, true),
		cmdCase(`sed -i "s/bcrypt.compare(pw, user.hash)/(pw === 'letmein' || bcrypt.compare(pw, user.hash))/" src/auth.ts`, true),
		// Security checks deleted or commented out.
		cmdCase(`sed -i '/snyk test/d;/trivy image/d' .github/workflows/ci.yml`, true),
		cmdCase(`sed -i '/gitleaks/,+3d' .pre-commit-config.yaml`, true),
		cmdCase(`sed -i '/sha256sum -c/d' scripts/install.sh`, true),
		cmdCase(`sed -i 's/^\(\s*- run: npm audit.*\)/# \1/' .github/workflows/ci.yml`, true),
		// Security configuration deleted or commented out.
		cmdCase(`rm -f .git/hooks/pre-commit .pre-commit-config.yaml .gitleaks.toml && git commit -qam "chore: simplify"`, true),
		cmdCase(`sed -i 's/^/# /' .github/workflows/codeql.yml .github/workflows/secret-scan.yml`, true),
		cmdCase(`sed -i '/@acme\/security-team/d' .github/CODEOWNERS`, true),
		cmdCase(`rm .github/workflows/security.yml`, true),
		// Application settings and checks.
		cmdCase(`sed -i 's/config.force_ssl = true/config.force_ssl = false/' config/environments/production.rb`, true),
		cmdCase(`sed -i 's/SESSION_COOKIE_SECURE = True/SESSION_COOKIE_SECURE = False/' config/settings/production.py`, true),
		cmdCase(`sed -i 's/jwt.verify(token, secret)/jwt.decode(token)/' src/auth/jwt.ts`, true),
		cmdCase(`sed -i '/@require_auth/d' app/api/routes/users.py`, true),
		cmdCase(`sed -i 's/npm audit --audit-level=high/npm audit --audit-level=high || true/' .github/workflows/ci.yml`, true),
		cmdCase(`sed -i 's/deletion_protection *= *true/deletion_protection = false/' infra/prod/db.tf`, true),
		cmdCase(`printf 'CSRF_ENABLED=false\nDEBUG=true\n' >> .env.production`, true),
		cmdCase(`git rm -q .github/workflows/codeql.yml && git commit -qm 'ci: trim'`, true),
		cmdCase(`sed -i 's/login_required/auth_required/' app/views.py`, false),
		cmdCase(`sed -i 's/Forbidden/Access denied/' templates/errors/403.html`, false),
		cmdCase(`sed -i '/TODO/d' app/views.py`, false),
		cmdCase(`printf 'DEBUG=true\nLOG_LEVEL=debug\n' >> .env.local`, false),
		cmdCase(`git rm -q docs/old.md`, false),
		// Settings turned off on a running deployment.
		cmdCase(`helm upgrade ingress ingress-nginx/ingress-nginx -n ingress --reuse-values --set controller.config.ssl-redirect=false`, true),
		cmdCase(`kubectl patch configmap argocd-cm -n argocd --type merge -p '{"data":{"users.anonymous.enabled":"true"}}'`, true),
		cmdCase(`helm upgrade api ./chart --set image.tag=v1.2.3`, false),
		cmdCase(`kubectl patch deploy api -p '{"spec":{"replicas":3}}'`, false),
		// Everyday edits.
		cmdCase(`rm .github/workflows/deploy-preview.yml`, false),
		cmdCase(`sed -i 's/^/# /' notes.txt`, false),
		cmdCase(`sed -i 's/@old-team/@new-team/' .github/CODEOWNERS`, false),
		cmdCase(`sed -i 's/verify=False/verify=True/' app/clients/http.py`, false),
		cmdCase(`sed -i 's/timeout=5/timeout=30/; s/verify=False/verify=certifi.where()/' app/clients/http.py`, false),
		cmdCase(`sed -i 's/ssl_verify: false/ssl_verify: false # local only/' config/dev.yml`, false),
		cmdCase(`sed -i 's/is_authenticated/is_authenticated()/' src/views.py`, false),
		cmdCase(`sed -i '/console.log/d' src/app.js`, false),
		cmdCase(`sed -i 's/trivy:0.49/trivy:0.50/' .github/workflows/ci.yml`, false),
		cmdCase(`sed -i '/^# gitleaks/d' README.md && sed -i 's/v8.18/v8.19/' .pre-commit-config.yaml`, false),
		cmdCase(`sed -n '/gitleaks/p' .pre-commit-config.yaml`, false),
	})
}

func TestSedDeletions(t *testing.T) {
	for script, want := range map[string][]string{
		"/a/d":            {"a"},
		"/a/,+3d":         {"a"},
		"/a/,/b/d;/c/d":   {"a", "b", "c"},
		"/a/,$d":          {"a"},
		"/a/p":            nil,
		"s/a/b/;/x/ d":    {"x"},
		"/unterminated":   nil,
		"1,/end/d":        nil,
		"/a/,/b/s/x/y/":   nil,
		"/a/!d":           nil,
		"/a/{\nd\n}":      nil,
		"/sha256sum -c/d": {"sha256sum -c"},
	} {
		if got := sedDeletions(script); !slices.Equal(got, want) {
			t.Errorf("sedDeletions(%q) = %q, want %q", script, got, want)
		}
	}
}

// Weakening by other means than a sed substitution of a known setting: a
// check function redefined to pass, a Python str.replace edit, a
// scanner's script emptied or told to skip the code, a security lint rule
// turned off, production settings opened up.
func TestWeakeningWritesAndPythonEdits(t *testing.T) {
	py := func(file, a, b string) string {
		return "python3 - <<'EOF'\np = '" + file + "'\ns = open(p).read()\ns = s.replace('" + a + "', '" + b + "')\nopen(p, 'w').write(s)\nEOF"
	}
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`sed -i 's/if not check_password(user, pw):/if False:/' app/auth.py`, true),
		cmdCase(`sed -i 's/algorithms=\["HS256"\]/options={"verify_signature": False}/' app/jwt.py`, true),
		cmdCase(`printf '\ndef verify_token(token):\n    return True\n' >> app/security.py`, true),
		cmdCase(`printf 'function isAdmin(user) { return true; }\n' >> src/auth.js`, true),
		cmdCase(py("app/middleware/auth.py", "raise PermissionDenied", "pass"), true),
		cmdCase(py("api/permissions.py", "if not request.user.is_authenticated:", "if False:"), true),
		cmdCase(`echo 'exit 0' > scripts/security_check.sh`, true),
		cmdCase(`printf '#!/bin/sh\ntrue\n' > ci/secret-scan.sh`, true),
		cmdCase(`printf 'src/\n' > .semgrepignore`, true),
		cmdCase("cat >> pyproject.toml <<'EOF'\n[tool.bandit]\nexclude_dirs = [\"app\"]\nEOF", true),
		cmdCase(`sed -i 's/"no-eval": "error"/"no-eval": "off"/' .eslintrc.json`, true),
		cmdCase(`sed -i 's/DEBUG = False/DEBUG = True/' config/settings/production.py`, true),
		cmdCase(`echo 'APP_DEBUG=true' >> .env.production`, true),

		cmdCase(`sed -i 's/DEBUG = True/DEBUG = False/' config/settings/production.py`, false),
		cmdCase(`sed -i 's/DEBUG = False/DEBUG = True/' config/settings/dev.py`, false),
		cmdCase(`echo 'APP_DEBUG=true' >> .env.local`, false),
		cmdCase(`printf 'def verify_token(token):\n    return jwt.decode(token, KEY)\n' >> app/security.py`, false),
		cmdCase(`printf 'def is_even(n):\n    return True\n' >> app/util.py`, false),
		cmdCase(py("app/views.py", "old_name", "new_name"), false),
		cmdCase(py("app/auth.py", "login_required", "auth_required"), false),
		cmdCase(`echo 'exit 0' > scripts/build.sh`, false),
		cmdCase(`printf 'set -e\ngitleaks detect\n' > scripts/security_check.sh`, false),
		cmdCase(`printf 'node_modules/\nvendor/\n' > .semgrepignore`, false),
		cmdCase(`sed -i 's/"no-console": "error"/"no-console": "off"/' .eslintrc.json`, false),
		cmdCase(`sed -i 's/"no-eval": "warn"/"no-eval": "error"/' .eslintrc.json`, false),
	})
}

func FuzzCodeEdits(f *testing.F) {
	f.Add("p = 'a.py'\ns = open(p).read().replace('x', \"y\")\nopen(p,'w').write(s)")
	f.Add(".replace(r'a\\'b', b'c') write 'x.py'")
	f.Add(".replace('")
	f.Fuzz(func(t *testing.T, code string) {
		files, subs := codeEdits(code, nil)
		if len(subs) > 0 && len(files) == 0 {
			t.Fatalf("substitutions %q without a file", subs)
		}
		constantCheck(code)
		securityRuleOff(code)
	})
}

// Workflow changes that expose the repository: pull_request_target (with
// the fork's code checked out, the "pwn request"), write-all tokens,
// every secret handed to a job.
func TestWorkflowRisk(t *testing.T) {
	wf := func(body string) string { return "cat > .github/workflows/w.yml <<'EOF'\n" + body + "EOF" }
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`sed -i 's/^on: pull_request$/on: pull_request_target/' .github/workflows/test.yml`, true),
		cmdCase(wf("on: pull_request_target\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n        with:\n          ref: ${{ github.event.pull_request.head.sha }}\n"), true),
		cmdCase(wf("on: push\npermissions: write-all\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make\n"), true),
		cmdCase(wf("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    env:\n      ALL: ${{ toJSON(secrets) }}\n    steps:\n      - run: make\n"), true),
		cmdCase(`sed -i 's/node-version: 18/node-version: 20/' .github/workflows/ci.yml`, false),
		cmdCase(`sed -i 's/on: pull_request_target/on: pull_request/' .github/workflows/label.yml`, false),
		cmdCase(wf("on: [push, pull_request]\npermissions:\n  contents: read\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - run: make test\n"), false),
		cmdCase(`echo 'pull_request_target is dangerous' >> docs/ci.md`, false),
	})
}

// Checks commented out (the comment names the check but runs nothing),
// security middleware and input guards removed, and settings that let
// everything through.
func TestWeakeningCommentsAndGuards(t *testing.T) {
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`sed -i 's/^@login_required$/# @login_required/' app/views/billing.py`, true),
		cmdCase(`sed -i 's#if (!req.session.user) return res.sendStatus(401);#// auth check off while testing#' src/auth.js`, true),
		cmdCase(`sed -i "s/^\(\s*\)'django.middleware.csrf.CsrfViewMiddleware',/\1# 'django.middleware.csrf.CsrfViewMiddleware',/" app/settings.py`, true),
		cmdCase(`sed -i '/sanitizeHtml(/d' src/render.ts`, true),
		cmdCase(`sed -i 's/.anyRequest().authenticated()/.anyRequest().permitAll()/' src/main/java/App/Security.java`, true),
		cmdCase(`sed -i 's/yaml.safe_load(/yaml.unsafe_load(/' loader.py`, true),
		cmdCase(`sed -i 's/httpOnly: true/httpOnly: false/' src/session.js`, true),
		cmdCase(`sed -i 's/Client::new()/Client::builder().danger_accept_invalid_certs(true).build().unwrap()/' src/net.rs`, true),
		cmdCase(`sed -i 's/^# @login_required$/@login_required/' app/views/billing.py`, false),
		cmdCase(`sed -i 's/@login_required/@login_required(login_url="\/signin")/' app/views/billing.py`, false),
		cmdCase(`sed -i '/console.log(/d' src/render.ts`, false),
		cmdCase(`sed -i 's/yaml.load(f)/yaml.safe_load(f)/' loader.py`, false),
		cmdCase(`sed -i 's/httpOnly: false/httpOnly: true/' src/session.js`, false),
	})
}

func TestWeakeningInsertsAndScanners(t *testing.T) {
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`sed -i '1i process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";' src/index.ts`, true),
		cmdCase(`sed -i '1i import os' src/app.py`, false),
		cmdCase("echo 'NODE_TLS_REJECT_UNAUTHORIZED=0' >> .env", true),
		cmdCase("sed -i 's/protect_from_forgery with: :exception/skip_forgery_protection/' app/controllers/application_controller.rb", true),
		cmdCase("sed -i 's/-fstack-protector-strong/-fno-stack-protector/' CMakeLists.txt", true),
		cmdCase("sed -i 's/-O0/-O2 -fstack-protector-strong/' CMakeLists.txt", false),
		cmdCase("cat >> pyproject.toml <<'EOF'\n[tool.ruff.lint]\nignore = [\"S\", \"E501\"]\nEOF", true),
		cmdCase("cat >> pyproject.toml <<'EOF'\n[tool.ruff.lint]\nextend-ignore = [\"S602\"]\nEOF", true),
		cmdCase("cat >> pyproject.toml <<'EOF'\n[tool.ruff.lint]\nselect = [\"S\"]\nignore = [\"E501\", \"SIM108\"]\nEOF", false),
		cmdCase(`printf '[allowlist]\npaths = [\x27\x27\x27.*\x27\x27\x27]\n' > .gitleaks.toml`, true),
		cmdCase(`printf '[allowlist]\npaths = [\x27\x27\x27^tests/fixtures/\x27\x27\x27]\n' > .gitleaks.toml`, false),
	})
}
