package heuristics

import (
	"testing"

	"github.com/parapet-dev/parapet/rules/action"
)

// criticalClass consults systemDirs only for paths right under the root.
func TestSystemDirsAreTopLevel(t *testing.T) {
	for d := range systemDirs {
		if parentDir(d) != "/" {
			t.Errorf("systemDirs holds %q, which is not directly under /", d)
		}
	}
}

func TestCriticalDir(t *testing.T) {
	const root, home = "/home/u/proj", "/home/u"
	cases := []struct {
		abs, rel string
		kind     critKind
		want     string
	}{
		{"/home/u/proj", ".", critWorkspace, "the whole workspace"},
		{"/", "", critRoot, "the filesystem root"},
		{"/home/u", "", critHome, "a home directory (/home/u)"},
		{"/home/other", "", critHome, "a home directory (/home/other)"},
		{"/home", "", critHoldsWorkspace, "a directory containing the workspace (/home)"},
		{"/etc", "", critSystem, "the system directory /etc"},
		{"/etc/*", "", critSystem, "the system directory /etc"},
		{"/usr/lib", "", critSystem, "the system directory /usr/lib"},
		{"/var/log", "", critSystem, "the system directory /var/log"},
		{"/var/tmp", "", critNone, ""},
		{"/home/u/.ssh", "", critUserDir, "your .ssh directory"},
		{"/home/u/proj/build", "build", critNone, ""},
		{"/etc/nginx/sites", "", critNone, ""},
		{"/tmp/x", "", critNone, ""},
	}
	for _, c := range cases {
		p := action.Path{Abs: c.abs, Rel: c.rel}
		if got := criticalDir(p, root, home); got != c.want {
			t.Errorf("criticalDir(%q) = %q, want %q", c.abs, got, c.want)
		}
		if got := criticalKind(p, root, home); got != c.kind {
			t.Errorf("criticalKind(%q) = %d, want %d", c.abs, got, c.kind)
		}
	}
}
