package heuristics

import (
	"slices"
	"strings"
	"testing"
)

func TestRegexLiterals(t *testing.T) {
	tests := []struct {
		pat  string
		want []string // texts that must be among the literals (spaces trimmed)
	}{
		{`pass(word|wd)?\s*[=:]`, []string{"pass", "password", "passwd"}},
		{`(api|secret)_?key`, []string{"apikey", "api_key", "secretkey", "secret_key"}},
		{`AKIA[0-9A-Z]{16}`, []string{"AKIA"}},
		{`BEGIN (RSA|OPENSSH) PRIVATE KEY`, []string{"BEGIN RSA PRIVATE KEY", "BEGIN OPENSSH PRIVATE KEY"}},
	}
	for _, tt := range tests {
		got := regexLiterals(tt.pat)
		var trimmed []string
		for _, g := range got {
			trimmed = append(trimmed, strings.TrimSpace(g))
		}
		for _, w := range tt.want {
			if !slices.Contains(trimmed, w) {
				t.Errorf("%q: literals %q lack %q", tt.pat, got, w)
			}
		}
	}
	if got := regexLiterals(`(aa|bb)(cc|dd)(ee|ff)(gg|hh)(ii|jj)(kk|ll)`); got != nil {
		t.Errorf("64 expansions: got %d texts, want none", len(got))
	}
	if got := regexLiterals(`(unclosed`); got != nil {
		t.Errorf("a pattern that does not parse: got %q", got)
	}
}

// FuzzRegexLiterals: any pattern gives a bounded list or none, never a
// panic.
func FuzzRegexLiterals(f *testing.F) {
	for _, s := range []string{`pass(word|wd)?\s*[=:]`, `(a|b)*c+`, `x{2,5}`, `^$`, `\bkey\b`, `((((a))))?`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := regexLiterals(s); len(got) > maxRegexLiterals {
			t.Fatalf("%q: %d literals", s, len(got))
		}
	})
}
