package policy

import "testing"

func TestWordGlob(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"main", "main", true},
		{"main", "maint", false},
		{"*:main", "HEAD:main", true},
		{"*:main", "refs/heads/x:main", true},
		{"*:main", "main", false},
		{"+*", "+feature", true},
		{"+*", "feature", false},
		{"--output*", "--output=x", true},
		{"python?", "python3", true},
		{"python?", "python", false},
		{"[a-c]x", "bx", true},
		{"[a-c]x", "dx", false},
		{"[!a-c]x", "dx", true},
		{"[!a-c]x", "ax", false},
		{"[]]", "]", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"*.example.*", "api.example.org", true},
		{"*.example.*", "example.org", false},
		{"*a*b*c", "xaxbxc", true},
		{"*a*b*c", "xaxcxb", false},
		{"**", "", true},
	}
	for _, c := range cases {
		g, err := compileWordGlob(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := g.match(c.s); got != c.want {
			t.Errorf("%q ~ %q = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	for _, bad := range []string{"", "[abc", `abc\`} {
		if _, err := compileWordGlob(bad); err == nil {
			t.Errorf("%q must not compile", bad)
		}
	}
}

// The fast forms must agree with the general matcher.
func FuzzWordGlobForms(f *testing.F) {
	for _, s := range [][2]string{{"*:main", "HEAD:main"}, {"ab*", "abc"}, {"*x*", "axb"}, {"**", ""}, {"*", "x"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		g, err := compileWordGlob(pattern)
		if err != nil || g.literal {
			return
		}
		if got, want := g.match(s), globMatch(pattern, s); got != want {
			t.Fatalf("%q ~ %q: fast form %v, general %v", pattern, s, got, want)
		}
	})
}
