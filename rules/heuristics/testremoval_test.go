package heuristics

import "testing"

// The tests of a protection deleted, hidden from the runner or skipped.
func TestSecurityTestsRemoved(t *testing.T) {
	runRuleCases(t, "defense.weakening-edit", []ruleCase{
		cmdCase(`git rm -q tests/test_auth.py tests/test_permissions.py && git commit -qm "chore: remove flaky tests"`, true),
		cmdCase(`find . -name '*_test.go' -path '*auth*' -delete`, true),
		cmdCase(`rm -rf spec/requests/sessions_spec.rb src/__tests__/csrf.test.ts`, true),
		cmdCase(`sed -i 's/^addopts = .*/addopts = -q --ignore=tests\/security -p no:cacheprovider/' pytest.ini`, true),
		cmdCase(`perl -0pi -e 's/(\@Test\s+void rejectsInvalidSignature)/\@Disabled("flaky on CI")\n    $1/' src/test/java/com/acme/webhook/SignatureVerifierTest.java`, true),
		cmdCase("cat >> tests/conftest.py <<'EOF'\n\ndef pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if \"security\" not in i.nodeid]\nEOF", true),
		cmdCase(`sed -i '/- run: npm test/d' .github/workflows/ci.yml`, true),
		// Other tests, and test files kept.
		cmdCase(`git rm tests/test_legacy_export.py`, false),
		cmdCase(`find . -name '*.pyc' -delete`, false),
		cmdCase(`rm -rf tests/__pycache__`, false),
		cmdCase(`sed -i 's/^addopts = .*/addopts = -q --ignore=tests\/e2e/' pytest.ini`, false),
		cmdCase("cat >> tests/conftest.py <<'EOF'\n\nimport pytest\n\n@pytest.fixture\ndef client(app):\n    return app.test_client()\nEOF", false),
		cmdCase(`sed -i '/- run: npm run lint/d' .github/workflows/ci.yml`, false),
	})
}

func TestTestPath(t *testing.T) {
	for p, want := range map[string]bool{
		"tests/test_auth.py": true, "pkg/auth/token_test.go": true, "src/csrf.spec.ts": true, "SignatureVerifierTest.java": true,
		"spec/models/user_spec.rb": true, "src/auth.py": false, "docs/testing.md": false, "contest.go": false,
	} {
		if got := testPath(p); got != want {
			t.Errorf("testPath(%q) = %v, want %v", p, got, want)
		}
	}
}
