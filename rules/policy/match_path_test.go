package policy

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/parapet-dev/parapet/rules/action"
)

func TestPathMatcher(t *testing.T) {
	read := func(p string) string { return `{"path":` + jsonString(p) + `}` }
	cases := []struct {
		name, match string
		typ, args   string
		want        bool
	}{
		{"abs glob matches", "path: [/etc/**]", "read_file", read("/etc/shadow"), true},
		{"abs glob matches the dir itself", "path: [/etc/**]", "read_file", read("/etc"), true},
		{"abs glob after cleaning", "path: [/etc/**]", "read_file", read("/tmp/../etc/passwd"), true},
		{"abs glob no match on sibling prefix", "path: [/etc/**]", "read_file", read("/etcetera/x"), false},
		{"abs exact", "path: [/etc/shadow]", "read_file", read("/etc/shadow"), true},
		{"abs exact no match", "path: [/etc/shadow]", "read_file", read("/etc/shadow-"), false},
		{"abs star stays in segment", "path: [/etc/*.conf]", "read_file", read("/etc/nginx/a.conf"), false},
		{"abs star in segment", "path: [/etc/*.conf]", "read_file", read("/etc/a.conf"), true},
		{"home pattern on caller home", "path: [~/.ssh/**]", "read_file", read("/home/dev/.ssh/id_rsa"), true},
		{"home pattern via ~", "path: [~/.ssh/**]", "read_file", read("~/.ssh/id_rsa"), true},
		{"home pattern via $HOME", "path: [~/.ssh/**]", "read_file", read("$HOME/.ssh/config"), true},
		{"home pattern not other home", "path: [~/.ssh/**]", "read_file", read("/home/eve/.ssh/id_rsa"), false},
		{"home pattern not prefix-sharing dir", "path: [~/.ssh/**]", "read_file", read("/home/devil/.ssh/id_rsa"), false},
		{"bare ~ is home itself", "path: [\"~\"]", "list_directory", read("/home/dev"), true},
		{"bare ~ not below", "path: [\"~\"]", "list_directory", read("/home/dev/x"), false},
		{"relative is workspace", "path: [src/**]", "read_file", read("src/a/b.go"), true},
		{"relative via abs in workspace", "path: [src/**]", "read_file", read("/home/dev/project/src/x"), true},
		{"relative does not match outside", "path: [src/**]", "read_file", read("/src/x"), false},
		{"relative escaping workspace", "path: [src/**]", "read_file", read("src/../../other/src/x"), false},
		{"doublestar any depth", "path: [\"**/*.go\"]", "read_file", read("a/b/c.go"), true},
		{"doublestar top level", "path: [\"**/*.go\"]", "read_file", read("c.go"), true},
		{"$WORKSPACE/** inside", "path: [$WORKSPACE/**]", "read_file", read("deep/er/file"), true},
		{"$WORKSPACE/** root", "path: [$WORKSPACE/**]", "list_directory", read("."), true},
		{"$WORKSPACE/** outside", "path: [$WORKSPACE/**]", "read_file", read("/home/dev/other"), false},
		{"$WORKSPACE is root only", "path: [$WORKSPACE]", "list_directory", read("/home/dev/project"), true},
		{"$WORKSPACE not child", "path: [$WORKSPACE]", "read_file", read("a.txt"), false},
		{"$WORKSPACE/sub", "path: [$WORKSPACE/docs/**]", "read_file", read("docs/x.md"), true},
		{"list is OR", "path: [/etc/**, /var/**]", "read_file", read("/var/log/x"), true},
		{"access matches", "path: [/etc/**]\naccess: [write]", "write_file", read("/etc/hosts"), true},
		{"access filters", "path: [/etc/**]\naccess: [write]", "read_file", read("/etc/hosts"), false},
		{"access alone", "access: [delete]", "delete_file", read("x"), true},
		{"access alone no", "access: [delete]", "write_file", read("x"), false},
		{"path_not excludes", "path_not: [$WORKSPACE/**]", "read_file", read("src/a"), false},
		{"path_not admits others", "path_not: [$WORKSPACE/**]", "read_file", read("/etc/x"), true},
		{"no paths never match", "path: [\"/**\"]", "web_search", `{"query":"x"}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := oneRule(t, "deny", c.match)
			if got := matched(p, act(t, c.typ, c.args)); got != c.want {
				t.Fatalf("match %q on %s %s = %v, want %v\n%v", c.match, c.typ, c.args, got, c.want, p.Explain(act(t, c.typ, c.args)))
			}
		})
	}
}

func TestHomePatternWithoutCallerHome(t *testing.T) {
	noHome := action.Caller{WorkspaceRoot: "/w"}
	p := oneRule(t, "deny", "path: [~/.ssh/**]")
	if !matched(p, actAs(t, "write_file", `{"path":"~/.ssh/authorized_keys"}`, noHome)) {
		t.Fatal("~ pattern must match a literal ~ path when the caller gave no home")
	}
	if matched(p, actAs(t, "write_file", `{"path":"/home/dev/.ssh/authorized_keys"}`, noHome)) {
		t.Fatal("without a home, an absolute path is not known to be the home")
	}
}

// Allow rules need every path to match; deny rules any.
func TestPathQuantifiers(t *testing.T) {
	twoPaths := `{"source":"src/a","destination":"/etc/b"}`
	deny := oneRule(t, "deny", "path: [/etc/**]")
	if !matched(deny, act(t, "copy_file", twoPaths)) {
		t.Fatal("deny: one matching path must be enough")
	}
	allowSrc := oneRule(t, "allow", "path: [src/**]")
	if matched(allowSrc, act(t, "copy_file", twoPaths)) {
		t.Fatal("allow: a write to src/a and /etc/b is not allowed by path: [src/**]")
	}
	if !matched(allowSrc, act(t, "copy_file", `{"source":"src/a","destination":"src/b"}`)) {
		t.Fatal("allow: all paths inside src/** must be allowed")
	}
	if matched(allowSrc, act(t, "list_directory", `{}`)) {
		t.Fatal("allow: an action without paths must not satisfy a path matcher")
	}
	allowNot := oneRule(t, "allow", "path_not: [/etc/**]")
	if matched(allowNot, act(t, "copy_file", twoPaths)) {
		t.Fatal("allow path_not: every path must avoid the excluded patterns")
	}
}

// The literal-run prefilter must never reject what doublestar accepts.
func FuzzPathGlobPrefilter(f *testing.F) {
	for _, s := range [][2]string{{"/home/*/.ssh/**", "/home/x/.ssh"}, {"**/*.go", "a.go"}, {"/a/**/b", "/a/b"}, {"/usr/lib/python3*/**", "/usr/lib/python3.12/x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		g, err := compilePathGlob(pattern)
		// Canonical paths are valid UTF-8 (canonicalisation rejects the rest).
		if err != nil || g.anchor != anchorAbs || !strings.HasPrefix(subject, "/") || !utf8.ValidString(subject) {
			return
		}
		p := action.Path{Abs: subject}
		if got, want := g.match(&p, ""), doublestar.MatchUnvalidated(g.pattern, subject); got != want {
			t.Fatalf("%q ~ %q: fast %v, doublestar %v", g.pattern, subject, got, want)
		}
	})
}
