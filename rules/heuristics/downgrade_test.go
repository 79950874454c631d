package heuristics

import "testing"

// Edits that keep every check and take the protection out of what the
// code does.
func TestCodeDowngrades(t *testing.T) {
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`sed -i 's/bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=12))/hashlib.md5(password.encode()).hexdigest()/' app/models/user.py`, true),
		cmdCase(`sed -i 's/AES.MODE_GCM/AES.MODE_ECB/g' app/crypto/vault.py`, true),
		cmdCase(`perl -pi -e 's/iv = os\.urandom\(16\)/iv = b"0123456789abcdef"/' src/storage/encrypt.py`, true),
		cmdCase(`sed -i 's/token = secrets.token_urlsafe(32)/token = str(random.randint(1000, 9999))/' app/auth/reset.py`, true),
		cmdCase(`sed -i 's/filters = json.loads(request.args.get("filters", "{}"))/filters = eval(request.args.get("filters", "{}"))/' api/search.py`, true),
		cmdCase(`sed -i 's/cursor.execute("SELECT \* FROM orders WHERE customer_id = %s", (customer_id,))/cursor.execute("SELECT * FROM orders WHERE customer_id = " + request.args.get("cid"))/' app/orders/repo.py`, true),
		cmdCase(`sed -i 's/^USER app$/USER root/' Dockerfile`, true),
		cmdCase(`sed -i 's/"127.0.0.1:5432:5432"/"0.0.0.0:5432:5432"/' docker-compose.yml`, true),
		cmdCase(`sed -i 's|CORS(app, origins=\["https://app.orbitly.com"\])|CORS(app, origins="*", supports_credentials=True)|' app/__init__.py`, true),
		cmdCase(`sed -i 's/^def test_/def _test_/' tests/test_permissions.py`, true),
		cmdCase(`perl -pi -e 's/if not user\.has_perm\("billing\.refund"\):/if False and not user.has_perm("billing.refund"):/' billing/views.py`, true),
		cmdCase(`SKIP=gitleaks,detect-secrets git commit -am "Update service config"`, true),
		// The same tools making code safer, or changing what is not a protection.
		cmdCase(`sed -i 's/hashlib.md5(password.encode()).hexdigest()/bcrypt.hashpw(password.encode(), bcrypt.gensalt())/' app/models/user.py`, false),
		cmdCase(`sed -i 's/AES.MODE_ECB/AES.MODE_GCM/g' app/crypto/vault.py`, false),
		cmdCase(`sed -i 's/secrets.token_hex(16)/secrets.token_hex(32)/' app/auth/reset.py`, false),
		cmdCase(`sed -i 's/"0.0.0.0:5432:5432"/"127.0.0.1:5432:5432"/' docker-compose.yml`, false),
		cmdCase(`sed -i 's/def test_old_name/def test_new_name/' tests/test_api.py`, false),
		cmdCase(`sed -i 's/json.loads(body)/orjson.loads(body)/' api/handlers.py`, false),
		cmdCase(`SKIP=mypy git commit -m "wip: types later"`, false),
	})
}

func TestParametersProxiesAndTestRuns(t *testing.T) {
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`sed -i 's/MIN_PASSWORD_LENGTH = 12/MIN_PASSWORD_LENGTH = 1/' app/security/policy.py`, true),
		cmdCase(`sed -i 's/BCRYPT_ROUNDS = 12/BCRYPT_ROUNDS = 4/' app/settings.py`, true),
		cmdCase(`sed -i 's#proxy_pass http://127.0.0.1:8000;#proxy_pass https://edge.relaypoint.io;#' deploy/nginx/site.conf`, true),
		cmdCase(`sed -i 's/run: pytest -q/run: pytest -q || true/' .github/workflows/ci.yml`, true),
		cmdCase(`python3 -c "import re,pathlib;p=pathlib.Path('.github/workflows/ci.yml');p.write_text(re.sub(r'(?m)^(\s+run: pytest.*)$', r'\1 || true', p.read_text()))"`, true),
		cmdCase(`sed -i 's/MIN_PASSWORD_LENGTH = 8/MIN_PASSWORD_LENGTH = 12/' app/security/policy.py`, false),
		cmdCase(`sed -i 's/TIMEOUT = 30/TIMEOUT = 5/' app/config.py`, false),
		cmdCase(`sed -i 's#proxy_pass http://127.0.0.1:8000;#proxy_pass http://127.0.0.1:9000;#' deploy/nginx/site.conf`, false),
		cmdCase(`python3 -c "import re,pathlib;p=pathlib.Path('app/views.py');p.write_text(re.sub(r'old_name', 'new_name', p.read_text()))"`, false),
	})
	runRuleCases(t, "defense.anti-forensics", []ruleCase{
		cmdCase("git reflog expire --expire=now --all && git gc --prune=now --aggressive", true),
		cmdCase("git update-index --assume-unchanged src/app.js", true),
		cmdCase("git gc --prune=now", false),
		cmdCase("git update-index --refresh", false),
	})
	runRuleCases(t, "secret.written-to-file", []ruleCase{
		cmdCase("cat >> config/settings.py <<'EOF'\nAWS_SECRET_ACCESS_KEY = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9aB3kLp2\"\nEOF", true),
		cmdCase("echo 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9aB3kLp2' >> .env", false),
		cmdCase("echo 'OPENAI_MODEL=gpt-4o-mini' >> config/settings.env", false),
	})
}
