package shell

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCurlConfigArgs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"url = \"http://h/rc\"\noutput = \"/home/dev/.bashrc\"\n", "'--url' 'http://h/rc' '--output' '/home/dev/.bashrc'"},
		{"# a comment\n  silent\n--url https://h/x trailing\n", "'--silent' '--url' 'https://h/x'"},
		{"-o out\nheader: \"X-A: \\\"b\\\"\\tc\"", "'-o' 'out' '--header' 'X-A: \"b\"\tc'"},
		{"user-agent=\"it's\"", `'--user-agent' 'it'\''s'`},
		{"\n\n", ""},
	}
	for _, tt := range tests {
		if got := CurlConfigArgs(tt.in); got != tt.want {
			t.Errorf("%q: got %s, want %s", tt.in, got, tt.want)
		}
	}
}

// FuzzCurlConfigArgs: any configuration becomes plain words of one
// command (the parser refuses invalid UTF-8 and NUL, as the shield's
// input does).
func FuzzCurlConfigArgs(f *testing.F) {
	for _, s := range []string{"url = \"http://h/x\"\noutput = f\n", "-K \"a\\\"b\"", "#x\n:=\n\"", "data-binary @-\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := CurlConfigArgs(s)
		if args == "" || strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
			return
		}
		sc := Parse("curl " + args)
		defer sc.Release()
		if sc.ParseError != "" || len(sc.Commands) != 1 || sc.Commands[0].Program != "curl" {
			t.Fatalf("%q: curl %s parses as %d commands (%s)", s, args, len(sc.Commands), sc.ParseError)
		}
	})
}
