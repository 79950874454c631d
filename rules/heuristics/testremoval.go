package heuristics

import (
	"path"
	"slices"
	"strings"
)

// Tests of a protection taken away. A protection's tests are what notice
// when a later change breaks it; a line that deletes them, hides them
// from the runner or skips them leaves the protection unguarded:
//
//   - the test files deleted: rm, git rm, find … -delete whose paths or
//     patterns are tests (test_*.py, *_test.go, *.spec.ts, tests/…) of a
//     security subject (auth, permissions, signatures, CSRF, …);
//   - the runner told to leave them out: --ignore=tests/security,
//     --deselect, -k "not auth", go test -skip, a collection hook or
//     collect_ignore naming them.
//
// Deleting or skipping other tests is everyday.

// securitySubjects name what a test of a protection is about.
var securitySubjects = newFoldSet("auth", "login", "permission", "security", "csrf", "xsrf", "signature", "crypto", "password",
	"acl", "rbac", "jwt", "sanitiz", "xss", "injection", "session", "access_control", "accesscontrol", "mfa", "totp", "privilege",
	"secret", "webhook", "verif", "tenant", "forbid", "ssrf", "polic", "guard")

// testPath reports a path or glob that names tests: a test file by the
// conventions of the common runners, or a path under a tests directory.
func testPath(p string) bool {
	p = strings.ToLower(p)
	if strings.Contains("/"+p, "/tests/") || strings.Contains("/"+p, "/test/") || strings.Contains("/"+p, "/spec/") ||
		strings.Contains(p, "__tests__") || p == "tests" || p == "test" || p == "spec" {
		return true
	}
	base := path.Base(p)
	ext := path.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	switch ext {
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test")
	case ".go":
		return strings.HasSuffix(stem, "_test")
	case ".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec")
	case ".java", ".kt", ".php", ".cs", ".scala":
		return strings.HasSuffix(stem, "test") || strings.HasSuffix(stem, "tests")
	case ".rb":
		return strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "_test")
	case ".rs":
		return strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_tests")
	}
	return false
}

// securityTests returns the first of names that is a test path (or a
// glob of one) about a security subject, or "". For find, names are its
// starting directories and -name / -path patterns, which together pick
// the files: one may say tests and another the subject.
func securityTests(names []string, together bool) string {
	if together {
		joined := strings.Join(names, "/")
		if securitySubjects.in(joined) && (testPath(joined) || anyTestPath(names)) {
			return joined
		}
		return ""
	}
	for _, n := range names {
		if securitySubjects.in(n) && testPath(n) {
			return n
		}
	}
	return ""
}

func anyTestPath(names []string) bool {
	for _, n := range names {
		if testPath(n) {
			return true
		}
	}
	return false
}

// checkTestRemoval judges rm, git rm and find … -delete / -exec rm.
func (s *scan) checkTestRemoval(v *cmdView) {
	if !s.enabled(rDefWeakeningEdit) {
		return
	}
	if what := testSuiteDeleted(v); what != "" {
		s.add(rDefWeakeningEdit, v.prog+" deletes the project's tests ("+what+"): the suite then passes with nothing in it; keep them, or have a person decide",
			v.prog+" "+evJoin(v.args))
		return
	}
	named := false // most deletions name no security subject: look no further
	for _, a := range v.args {
		named = named || securitySubjects.in(a)
	}
	if !named {
		return
	}
	var hit string
	switch v.prog {
	case "rm", "unlink":
		hit = securityTests(v.plainOperands(), false)
	case "git":
		if sub, rest := gitSubcommand(v.args); sub == "rm" {
			hit = securityTests(operands(rest, "", nil), false)
		}
	case "find":
		if !findRemoves(v.args, "git") { // find … -exec git rm {} +
			return
		}
		var names []string
		for i, a := range v.args {
			switch {
			case !strings.HasPrefix(a, "-") && (i == 0 || !findNamePattern(v.args[i-1])):
				names = append(names, a)
			case findNamePattern(a) && i+1 < len(v.args):
				names = append(names, v.args[i+1])
			}
		}
		hit = securityTests(names, true)
	}
	if hit != "" {
		s.add(rDefWeakeningEdit, v.prog+" deletes the tests of a protection ("+hit+"): with them gone, a change that breaks it passes; keep them, or have a person decide",
			v.prog+" "+evJoin(v.args))
	}
}

// testRoot reports a directory a project keeps its tests in, as an
// operand names it (tests, ./spec/).
func testRoot(op string) bool {
	switch strings.TrimSuffix(strings.TrimPrefix(op, "./"), "/") {
	case "tests", "test", "spec", "__tests__":
		return true
	}
	return false
}

// testSuiteDeleted returns what of the whole test suite v deletes: a
// test directory removed recursively (rm -r tests/, git rm -r spec), or
// every test file find lists from the top (find . -name 'test_*.py'
// -delete); else "".
func testSuiteDeleted(v *cmdView) string {
	switch v.prog {
	case "rm", "git":
		// Most deletions name no test directory: look no further.
		root := ""
		for _, a := range v.args {
			if len(a) >= 4 && len(a) <= 12 && (a[0] == 't' || a[0] == 's' || a[0] == '.' || a[0] == '_') && testRoot(a) {
				root = a
				break
			}
		}
		if root == "" {
			return ""
		}
		if v.prog == "rm" {
			if !hasFlag(v.args, 'r', "recursive") && !hasShortFlag(v.args, 'R') {
				return ""
			}
			return root
		}
		sub, rest := gitSubcommand(v.args)
		if sub != "rm" || !hasShortFlag(rest, 'r') || hasLongFlag(rest, "cached") { // --cached keeps the files
			return ""
		}
		return root
	case "find":
		for i, a := range v.args {
			if i > 0 && (v.args[i-1] == "-name" || v.args[i-1] == "-iname") && (strings.Contains(a, "test") || strings.Contains(a, "spec")) &&
				strings.ContainsAny(a, "*?") && testPath(a) && findRemoves(v.args, "git") {
				return "every file named " + a
			}
		}
	}
	return ""
}

// findNamePattern reports find's tests whose value is a name pattern:
// findFilters but -empty.
func findNamePattern(a string) bool {
	return a != "-empty" && slices.Contains(findFilters, a)
}

// testExclusions are the runner options that leave tests out, as written
// lower-cased: pytest's --ignore / --deselect / -k "not …", go test
// -skip, jest's testPathIgnorePatterns, a conftest's collect_ignore or
// collection hook.
var testExclusions = []string{"--ignore", "--deselect", "-k not", "-k \"not", "-k 'not", "-skip", "testpathignorepatterns",
	"modulepathignorepatterns", "collect_ignore", "pytest_collection_modifyitems", "--exclude", "exclude:"}

// testsExcluded returns the exclusion text r brings in that p lacks and
// that names a security subject, or "".
func testsExcluded(p, r string) string {
	for _, x := range testExclusions {
		i := strings.Index(r, x)
		if i < 0 || strings.Contains(p, x) {
			continue
		}
		rest := r[i:]
		if j := strings.IndexByte(rest, '\n'); j > 0 && x != "pytest_collection_modifyitems" {
			rest = rest[:j]
		}
		if securitySubjects.in(rest) {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// testConfigFile reports a file that decides which tests run: pytest's
// conftest and settings, jest's and vitest's configurations.
func testConfigFile(base string) bool {
	switch base {
	case "conftest.py", "pytest.ini", "setup.cfg", "tox.ini", "pyproject.toml", "package.json":
		return true
	}
	return strings.HasPrefix(base, "jest.config.") || strings.HasPrefix(base, "vitest.config.")
}

// allTests reports files that are all tests.
func allTests(files []string) bool {
	for _, f := range files {
		if !testPath(f) {
			return false
		}
	}
	return len(files) > 0
}
