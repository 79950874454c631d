package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // é is two bytes: not split
		{"日本語", 4, "日…"},
		{"x", 0, "…"},
	} {
		if got := Truncate(tc.s, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc"},
		{"héllo", 2, "h"}, // é is two bytes: not split
		{"日本語", 4, "日"},
		{"x", 0, ""},
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("héllo wörld", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || !utf8.ValidString(s) {
			return
		}
		got := Truncate(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q: invalid UTF-8", s, n, got)
		}
		if len(s) > n && len(got) > n+len("…") {
			t.Fatalf("Truncate(%q, %d) = %q: too long", s, n, got)
		}
	})
}

// TestValidUTF8 holds ValidUTF8 to utf8.ValidString around its 32-byte
// ASCII stride: a non-ASCII or invalid byte at every place of the first
// blocks, and sequences cut by a block's end.
func TestValidUTF8(t *testing.T) {
	bad := []string{"\xff", "\x80", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "é", "€", "😀"}
	for n := range 70 {
		for at := range n + 1 {
			for _, b := range bad {
				s := strings.Repeat("a", at) + b + strings.Repeat("z", n-at)
				if got, want := ValidUTF8(s), utf8.ValidString(s); got != want {
					t.Fatalf("ValidUTF8(%q) = %v, utf8.ValidString %v", s, got, want)
				}
			}
		}
	}
}

func FuzzValidUTF8(f *testing.F) {
	f.Add(strings.Repeat("a", 31) + "é" + strings.Repeat("b", 40))
	f.Add(strings.Repeat("x", 64) + "\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidUTF8(s), utf8.ValidString(s); got != want {
			t.Fatalf("ValidUTF8(%q) = %v, utf8.ValidString %v", s, got, want)
		}
	})
}
