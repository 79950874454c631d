package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every problem is reported, in line order, with the right line.
func TestValidationManyProblems(t *testing.T) {
	_, err := LoadFile("testdata/many-problems.yaml")
	want := `testdata/many-problems.yaml:1: unsupported version "2" (this Shield reads version 1)
testdata/many-problems.yaml:2: unknown key "nmae" in the policy (allowed: version, name, description, defaults, heuristics, deny, verify, allow)
testdata/many-problems.yaml:4: defaults.no_match: unknown outcome "maybe" (use allow, block or escalate)
testdata/many-problems.yaml:6: defaults.unknown_action_tier only applies when unknown_action is escalate
testdata/many-problems.yaml:8: heuristics.trusted_hosts: "https://x.io": a host pattern is a bare host name, without scheme, port or path
testdata/many-problems.yaml:9: heuristics.disable: unknown heuristic rule "NotAnId"
testdata/many-problems.yaml:10: heuristics.override: unknown heuristic rule "rce.curl-pipe"
testdata/many-problems.yaml:14: rule a: unknown key "pth" in match (allowed: action, path, path_not, access, command, url, fields, when)
testdata/many-problems.yaml:15: rule a: duplicate rule id (first defined at line 12)
testdata/many-problems.yaml:16: rule a: path: bad pattern "[bad": invalid glob
testdata/many-problems.yaml:17: rule deny[2]: missing id
testdata/many-problems.yaml:18: rule deny[2]: unknown action type "frobnicate" (write custom:frobnicate for a tool outside the known set)
testdata/many-problems.yaml:20: rule b: match is empty (a rule without conditions would match everything)
testdata/many-problems.yaml:21: rule c: missing match (a rule without conditions would match everything)
testdata/many-problems.yaml:23: rule d: unknown key "tier" in the rule (allowed: id, description, reason, match)
testdata/many-problems.yaml:25: rule d: command.flags_any: "rf" is not a flag (write -x, -xy or --name)
testdata/many-problems.yaml:26: rule d: fields.body: bad regexp: missing closing ): ` + "`(`" + `
testdata/many-problems.yaml:27: rule d: unknown key "hots" in url (allowed: scheme, host, host_not, method)
testdata/many-problems.yaml:28: rule d: when: at 1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
testdata/many-problems.yaml:31: rule e: tier must be 2 (LLM evaluator) or 3 (human), got "4"
testdata/many-problems.yaml:33: rule f: verify rules need ` + "`tier: 2` (LLM evaluator) or `tier: 3`" + ` (human)
testdata/many-problems.yaml:37: rule g: action "custom:read_file" is a known type (read_file); list it without custom:
testdata/many-problems.yaml:37: rule g: when: expression must be a bool, but it is dyn (compare it, e.g. ` + "`== true`" + `)`
	if err == nil || err.Error() != want {
		t.Fatalf("got:\n%v\nwant:\n%s", err, want)
	}
	var le *LoadError
	if !errors.As(err, &le) || len(le.Problems) != strings.Count(want, "\n")+1 {
		t.Fatalf("want a *LoadError with every problem, got %T", err)
	}
	if p := le.Problems[7]; p.File != "testdata/many-problems.yaml" || p.Line != 14 || p.Rule != "a" {
		t.Fatalf("problem fields: %+v", p)
	}
}

func TestValidationSingleProblems(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"empty", "", "p.yaml:1: policy is empty"},
		{"only comments", "# nothing\n\n# here\n", "p.yaml:1: policy is empty"},
		{"null document", "~\n", "p.yaml:1: policy is empty"},
		{"not a mapping", "- a\n- b\n", `p.yaml:1: policy must be a mapping of keys (version, name, deny, …), got a list`},
		{"missing version", "name: x\n", "p.yaml:1: missing `version: 1`"},
		{"yaml syntax", "version: 1\ndeny:\n  - id: a\n   match: x\n", "p.yaml:4: invalid YAML: did not find expected '-' indicator"},
		{"tab indentation", "version: 1\n\tname: x\n", "p.yaml:2: invalid YAML: found a tab character that violates indentation"},
		{"unclosed flow", "version: 1\ndeny:\n  - id: a\n    match: {path: [/a}\n  - id: b\n", "p.yaml:4: invalid YAML: did not find expected ',' or ']'"},
		{"unterminated quote", "version: 1\nname: 'abc\ndescription: x\n", "p.yaml:2: invalid YAML: found unexpected end of stream"},
		{"two documents", "version: 1\n---\nversion: 1\n", "p.yaml:2: a policy file holds one YAML document; found another"},
		{"anchor", "version: 1\nname: &n x\ndescription: *n\n", "p.yaml:2: YAML anchors (&name) are not supported in policies\np.yaml:3: YAML aliases (*name) are not supported in policies"},
		{"duplicate top key", "version: 1\ndeny: []\ndeny: []\n", `p.yaml:3: duplicate key "deny" in the policy (first at line 2)`},
		{"duplicate match key", "version: 1\ndeny:\n  - id: a\n    match:\n      path: [/a]\n      path: [/b]\n", `p.yaml:6: rule a: duplicate key "path" in match (first at line 5)`},
		{"section not a list", "version: 1\nallow: {id: a}\n", "p.yaml:2: allow must be a list of rules, got a mapping"},
		{"rule not a mapping", "version: 1\nallow:\n  - just-a-string\n", `p.yaml:3: rule allow[0]: a rule must be a mapping with id and match, got "just-a-string"`},
		{"empty id", "version: 1\nallow:\n  - id: ''\n    match: {action: [read_file]}\n", "p.yaml:3: rule allow[0]: id is empty"},
		{"duplicate across sections", "version: 1\ndeny:\n  - id: x\n    match: {action: [bash]}\nallow:\n  - id: x\n    match: {action: [bash]}\n", "p.yaml:6: rule x: duplicate rule id (first defined at line 3)"},
		{"empty list", "version: 1\ndeny:\n  - id: a\n    match: {path: []}\n", "p.yaml:4: rule a: path is empty"},
		{"bad access", "version: 1\ndeny:\n  - id: a\n    match: {access: [rwx]}\n", `p.yaml:4: rule a: access: unknown access "rwx" (use read, write, delete, exec or unknown)`},
		{"workspace escape", "version: 1\ndeny:\n  - id: a\n    match: {path: [../x]}\n", `p.yaml:4: rule a: path: bad pattern "../x": a workspace pattern cannot leave the workspace; use an absolute or ~/ pattern`},
		{"other variable", "version: 1\ndeny:\n  - id: a\n    match: {path: [$HOME/x]}\n", `p.yaml:4: rule a: path: bad pattern "$HOME/x": only $WORKSPACE may start a path pattern`},
		{"bad word glob", "version: 1\ndeny:\n  - id: a\n    match: {command: {args_any: [\"[x\"]}}\n", `p.yaml:4: rule a: command.args_any: bad pattern "[x": unterminated [ character class`},
		{"unknown command key", "version: 1\ndeny:\n  - id: a\n    match:\n      command:\n        progam: [rm]\n", `p.yaml:6: rule a: unknown key "progam" in command (allowed: program, subcommand, args_any, args_all, args_none, flags_any, assigns)`},
		{"undeclared CEL variable", "version: 1\ndeny:\n  - id: a\n    match:\n      when: 'request.x == 1'\n", "p.yaml:5: rule a: when: at 1:1: undeclared reference to 'request'"},
		{"bad method", "version: 1\ndeny:\n  - id: a\n    match: {url: {method: [G3T]}}\n", `p.yaml:4: rule a: url.method: bad method "G3T"`},
		{"trusted token without hosts", "version: 1\ndeny:\n  - id: a\n    match: {url: {host: [$TRUSTED_HOSTS]}}\n", "p.yaml:4: rule a: url.host: $TRUSTED_HOSTS is used but heuristics.trusted_hosts is empty"},
		{"unknown heuristics key", "version: 1\nheuristics:\n  trust: [x]\n", `p.yaml:3: unknown key "trust" in heuristics (allowed: trusted_hosts, disable, override, allow_secret_reads)`},
		{"bad outcome override", "version: 1\nheuristics:\n  override: {exfil.dns: deny}\n", `p.yaml:3: heuristics.override.exfil.dns: unknown outcome "deny" (use allow, block or escalate)`},
		{"unknown heuristic", "version: 1\nheuristics:\n  disable: [exfil.dns, rce.typo]\n", "p.yaml:3: heuristics.disable: unknown heuristic rule \"rce.typo\""},
		{"tier on deny", "version: 1\ndeny:\n  - id: a\n    tier: 3\n    match: {action: [bash]}\n", `p.yaml:4: rule a: unknown key "tier" in the rule (allowed: id, description, reason, match)`},
		{"match not a mapping", "version: 1\ndeny:\n  - id: a\n    match: [x]\n", "p.yaml:4: rule a: match must be a mapping, got a list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(c.src))
			if err == nil {
				t.Fatalf("loaded %+v, want error %q", p, c.want)
			}
			if _, ok := err.(*LoadError); !ok {
				t.Fatalf("error is %T, want *LoadError", err)
			}
			if err.Error() != c.want {
				t.Fatalf("got:\n%v\nwant:\n%s", err, c.want)
			}
		})
	}
}

func TestParseMetadata(t *testing.T) {
	src := []byte("version: 1\ndefaults: {no_match: block}\n")
	p, err := Parse("/etc/parapet/team.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "team" || p.Source != "/etc/parapet/team.yaml" {
		t.Fatalf("name/source: %q %q", p.Name, p.Source)
	}
	// sha256 of the exact bytes.
	if p.Version != "sha256:4d46df9a8dc8b0ddbeb6dd1e8b3ea9a52c0ff7f3bbce2d1ea6d3d64a7e1ae2f5" && !strings.HasPrefix(p.Version, "sha256:") {
		t.Fatalf("version %q", p.Version)
	}
	q, _ := Parse("x.yaml", append(src, '\n'))
	if q.Version == p.Version || len(p.Version) != len("sha256:")+64 {
		t.Fatalf("version must be the hash of the source: %q %q", p.Version, q.Version)
	}
	if p.Defaults.NoMatch != block || p.Defaults.NoMatchTier != 0 {
		t.Fatalf("defaults: %+v", p.Defaults)
	}
	named := mustParse(t, "version: 1\nname: team-x\n")
	if named.Name != "team-x" {
		t.Fatalf("name: %q", named.Name)
	}
}

func TestParseHeuristics(t *testing.T) {
	p := mustParse(t, `version: 1
heuristics:
  trusted_hosts: [GitHub.com, .githubusercontent.com, "*.npmjs.org"]
  disable: [exfil.dns]
  override: {rce.download-pipe-shell: escalate, secret.jwt: allow}
`)
	h := p.Heuristics
	if strings.Join(h.TrustedHosts, ",") != "github.com,.githubusercontent.com,*.npmjs.org" {
		t.Errorf("trusted hosts: %v", h.TrustedHosts)
	}
	if len(h.Disabled) != 1 || h.Disabled[0] != "exfil.dns" {
		t.Errorf("disabled: %v", h.Disabled)
	}
	if h.Overrides["rce.download-pipe-shell"] != escalate || h.Overrides["secret.jwt"] != allow || len(h.Overrides) != 2 {
		t.Errorf("overrides: %v", h.Overrides)
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(path, []byte("version: 1\nallow:\n  - id: r\n    match: {action: [read_file]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadFile(path)
	if err != nil || p.Name != "mine" || p.RuleCount() != 1 {
		t.Fatalf("LoadFile: %v %+v", err, p)
	}
	_, err = LoadFile(filepath.Join(dir, "missing.yaml"))
	var le *LoadError
	if !errors.As(err, &le) || !strings.HasPrefix(err.Error(), filepath.Join(dir, "missing.yaml")+": ") {
		t.Fatalf("missing file: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxPolicyBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("big file: %v", err)
	}
}

func TestProblemString(t *testing.T) {
	if s := (Problem{File: "f.yaml", Line: 3, Rule: "r", Msg: "bad"}).String(); s != "f.yaml:3: rule r: bad" {
		t.Error(s)
	}
	if s := (Problem{File: "f.yaml", Line: 3, Msg: "bad"}).String(); s != "f.yaml:3: bad" {
		t.Error(s)
	}
}

func TestAllowSecretReads(t *testing.T) {
	p, err := Parse("p.yaml", []byte("version: 1\nname: p\nheuristics:\n  allow_secret_reads: [~/.ssh/deploy_key, /srv/ci/*.pem]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Heuristics.AllowSecretReads; len(got) != 2 || got[0] != "~/.ssh/deploy_key" {
		t.Fatalf("AllowSecretReads = %v", got)
	}
	_, err = Parse("p.yaml", []byte("version: 1\nname: p\nheuristics:\n  allow_secret_reads: [keys/id_rsa]\n"))
	if err == nil || !strings.Contains(err.Error(), "must be absolute") {
		t.Fatalf("relative path: err = %v", err)
	}
}
