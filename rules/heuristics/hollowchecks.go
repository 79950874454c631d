package heuristics

import (
	"strings"
)

// Checks hollowed out: the project's test or check run kept in name but
// made to do nothing. The test script set to `echo ok && exit 0`, a CI
// step's `pytest` replaced by `echo ok`, assertions turned into `pass`,
// a collection hook that skips every test, a build told to ignore its
// test failures. The run still reports success, so nobody looks; these
// are judged wherever an edit or a written file is (weakening.go).

// noOpCommand reports a command line that does nothing but succeed:
// echo, printf, true, :, exit 0, joined by &&, || or ;.
func noOpCommand(line string) bool {
	line = strings.TrimSpace(strings.Trim(strings.TrimSpace(line), `"'`))
	if line == "" {
		return false
	}
	parts := strings.FieldsFunc(line, func(r rune) bool { return r == '&' || r == '|' || r == ';' })
	if len(parts) == 0 {
		return false
	}
	for _, part := range parts {
		f := strings.Fields(part)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "echo", "printf", "true", ":", "/bin/true":
		case "exit":
			if len(f) > 1 && f[1] != "0" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// checkScriptKeys are the names package scripts and task runners give
// the project's checks.
var checkScriptKeys = []string{"test", "lint", "check", "verify", "typecheck", "type-check", "validate", "ci"}

// hollowScript returns the name of a check script that text sets to a
// command doing nothing ("test": "echo ok && exit 0", lint: true), or "".
func hollowScript(text string) string {
	if !mentionsNoOp(text) {
		return ""
	}
	for line := range strings.Lines(unescapeRegex(text)) {
		for _, pair := range strings.Split(line, ",") {
			key, val, ok := strings.Cut(pair, ":")
			if !ok {
				if key, val, ok = strings.Cut(pair, "="); !ok {
					continue
				}
			}
			key = strings.Trim(strings.TrimSpace(key), `"'{`)
			name, _, _ := strings.Cut(key, ":") // test:unit
			val = strings.TrimRight(val, "} \t\r\n")
			if t := strings.TrimSpace(val); t == "true" || t == "True" {
				continue // a setting (lint: true), not a script
			}
			for _, k := range checkScriptKeys {
				if strings.EqualFold(name, k) && noOpCommand(val) {
					return key
				}
			}
		}
	}
	return ""
}

// hollowRun says how a substitution (pat → repl) hollows a check out,
// or "": the test run replaced by a no-op, a check script set to one,
// a build told to pass whatever its tests say.
func hollowRun(pat, repl string) string {
	if sw := failureSwitch(repl); sw != "" && failureSwitch(pat) != sw {
		return "tells the build to pass when its tests or checks fail (" + sw + ")"
	}
	if !mentionsNoOp(repl) {
		return "" // both tests below need a command that does nothing
	}
	repl = withFirstGroup(pat, repl)
	if checkRuns.in(pat) && noOpCommand(afterKey(withoutGroupRefs(unescapeRegex(repl)))) {
		return "replaces the test run with a command that does nothing (" + strings.TrimSpace(repl) + ")"
	}
	if key := hollowScript(repl); key != "" && hollowScript(pat) != key {
		return "sets the " + key + " script to a command that does nothing"
	}
	return ""
}

// mentionsNoOp reports text that names a command doing nothing (echo,
// true, exit, printf): the cheap test before the others.
func mentionsNoOp(text string) bool {
	return strings.Contains(text, "echo") || strings.Contains(text, "true") || strings.Contains(text, "exit") || strings.Contains(text, "printf")
}

// withFirstGroup returns repl with a leading back-reference to pat's
// first group (\1, $1) replaced by that group's text, when the group
// is plain text: s/("lint": )".*"/\1"true"/ sets "lint": "true".
func withFirstGroup(pat, repl string) string {
	rest, ok := strings.CutPrefix(repl, `\1`)
	if !ok {
		if rest, ok = strings.CutPrefix(repl, "$1"); !ok {
			return repl
		}
	}
	open := strings.IndexByte(pat, '(') // ERE's ( or BRE's \(
	if open < 0 {
		return repl
	}
	start := open + 1
	end := strings.IndexByte(pat[start:], ')')
	if end < 0 {
		return repl
	}
	group := regexPadding.Replace(strings.TrimSuffix(pat[start:start+end], `\`)) // BRE's \); \s* is padding
	if strings.ContainsAny(group, "[]*+?|^$") {
		return repl // a pattern, not text
	}
	return unescapeRegex(group) + rest
}

// afterKey returns a YAML or JSON line's value ("run: echo ok" → "echo ok").
func afterKey(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "- ")
	if i := strings.Index(s, ":"); i > 0 && !strings.ContainsAny(s[:i], " \t") || i > 0 && strings.HasPrefix(s, `"`) {
		return s[i+1:]
	}
	return s
}

// failureSwitches are build settings that let tests or checks fail
// without failing the build, in flattened form (flatSetting).
var failureSwitches = []string{"ignorefailures=true", "ignorefailures:true", "failonerror=false", "failonerror:false",
	"testfailureignore>true", "testfailureignore=true", "maven.test.failure.ignore=true", "failonviolation=false",
	"abortonerror=false", "failonwarning=false", "ignoretestfailures=true"}

// failureSwitch returns the failure switch text sets, or "".
func failureSwitch(text string) string {
	if !containsAnyOf(text, []string{"ail", "AIL", "bort", "BORT", "gnore", "GNORE"}) {
		return "" // names no failure switch (flattening costs an allocation)
	}
	flat := flatSetting(text)
	if !strings.Contains(flat, "fail") && !strings.Contains(flat, "abort") {
		return ""
	}
	for _, sw := range failureSwitches {
		// Gradle's DSL also sets a property without =: abortOnError false.
		if strings.Contains(flat, sw) || strings.Contains(flat, strings.Replace(sw, "=", "", 1)) {
			return sw
		}
	}
	return ""
}

// assertionWords are what make a test check something.
var assertionWords = []string{"assert", "expect(", "should", "must.", "require."}

// assertionsRemoved reports a substitution in test files that turns an
// assertion into a statement that checks nothing: assert → pass, a
// comment, nothing.
func assertionsRemoved(pat, repl string) bool {
	if !containsAnyOf(pat, []string{"ssert", "xpect", "hould", "ust.", "equire."}) {
		return false // names no assertion (lower-casing costs an allocation)
	}
	p, r := strings.ToLower(unescapeRegex(pat)), strings.ToLower(unescapeRegex(repl))
	if !containsAnyOf(p, assertionWords) {
		return false
	}
	if containsAnyOf(r, assertionWords) {
		// assert True, expect(true).toBe(true): an assertion of a constant.
		c := withoutGroupRefs(r)
		return assertionsCommented(pat, repl) || c == "assert true" || c == "assert 1" || c == "assert(true)" ||
			strings.HasPrefix(c, "expect(true)") || c == "asserttrue(true)" || c == "assert.true(true)"
	}
	r = withoutGroupRefs(r) // the kept indentation: $1pass
	return r == "" || commentsOut(r) || strings.HasPrefix(r, "pass") || strings.HasPrefix(r, "true") || strings.HasPrefix(r, "nil")
}

// assertionsCommented reports a substitution that keeps an assertion's
// text behind a comment marker: s/expect(/\/\/ expect(/.
func assertionsCommented(pat, repl string) bool {
	p := strings.ToLower(unescapeRegex(pat))
	return containsAnyOf(p, assertionWords) && commentsOut(unescapeRegex(repl))
}

// skipsEveryTest returns how text written into a test configuration
// file takes every test out of the run, or "": a pytest collection
// hook that marks each item skipped or drops them all, or a catch-all
// ignore list.
func skipsEveryTest(base, text string) string {
	if base == "conftest.py" {
		l := strings.ToLower(text)
		// A report hook that overwrites each test's outcome.
		if i := strings.Index(l, "def pytest_runtest_makereport"); i >= 0 {
			if body := strings.Join(strings.Fields(l[i:]), ""); strings.Contains(body, `.outcome="passed"`) || strings.Contains(body, `.outcome='passed'`) {
				return "a report hook that marks every test passed"
			}
		}
		if i := strings.Index(l, "def pytest_collection_modifyitems"); i >= 0 {
			body := l[i:]
			if strings.Contains(body, "mark.skip") || strings.Contains(body, "items.clear()") || strings.Contains(body, "items[:] = []") ||
				strings.Contains(body, "del items[:]") {
				return "a collection hook that skips every test"
			}
		}
		flat := flatSetting(text)
		for _, ig := range []string{"collect_ignore_glob=[*]", "collect_ignore_glob=[**]", "collect_ignore_glob=[*.py]", "collect_ignore_glob=[test_*.py]"} {
			if strings.Contains(flat, ig) {
				return ig
			}
		}
	}
	return ""
}

// checkTools are programs that check a project: linters, type checkers,
// test runners.
var checkTools = map[string]bool{"eslint": true, "tsc": true, "jest": true, "vitest": true, "mocha": true, "pytest": true, "ruff": true,
	"mypy": true, "flake8": true, "pylint": true, "black": true, "prettier": true, "golangci-lint": true, "rubocop": true, "rspec": true,
	"phpunit": true, "phpstan": true, "swiftlint": true, "gitleaks": true, "semgrep": true, "bandit": true, "trivy": true}

// hollowTool returns the check tool that ln's operands (ln -sf /bin/true
// node_modules/.bin/eslint) replace with a program that does nothing,
// or "".
func hollowTool(ops []string) string {
	switch baseName(ops[0]) {
	case "true", ":":
	default:
		return ""
	}
	if dst := baseName(strings.TrimSuffix(ops[len(ops)-1], "/")); checkTools[dst] {
		return dst
	}
	return ""
}
