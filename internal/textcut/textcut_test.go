package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCutAndTruncate: Cut keeps the longest prefix that ends on a
// character boundary; Truncate marks the cut with "…".
func TestCutAndTruncate(t *testing.T) {
	for _, tc := range []struct {
		s         string
		n         int
		cut, trun string
	}{
		{"short", 10, "short", "short"},
		{"exactly", 7, "exactly", "exactly"},
		{"abcdef", 3, "abc", "abc…"},
		{"héllo", 2, "h", "h…"}, // é is two bytes: not split
		{"日本語", 4, "日", "日…"},
		{"x", 0, "", "…"},
	} {
		if got := Cut(tc.s, tc.n); got != tc.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.cut)
		}
		if got := Truncate(tc.s, tc.n); got != tc.trun {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.trun)
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
