package server

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestValidUTF8 holds validUTF8 to utf8.ValidString around its 32-byte
// ASCII stride: a non-ASCII or invalid byte at every place of the first
// blocks, and sequences cut by a block's end.
func TestValidUTF8(t *testing.T) {
	bad := []string{"\xff", "\x80", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "é", "€", "😀"}
	for n := range 70 {
		for at := range n + 1 {
			for _, b := range bad {
				s := strings.Repeat("a", at) + b + strings.Repeat("z", n-at)
				if got, want := validUTF8(s), utf8.ValidString(s); got != want {
					t.Fatalf("validUTF8(%q) = %v, utf8.ValidString %v", s, got, want)
				}
			}
		}
	}
}

func FuzzValidUTF8(f *testing.F) {
	f.Add(strings.Repeat("a", 31) + "é" + strings.Repeat("b", 40))
	f.Add(strings.Repeat("x", 64) + "\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validUTF8(s), utf8.ValidString(s); got != want {
			t.Fatalf("validUTF8(%q) = %v, utf8.ValidString %v", s, got, want)
		}
	})
}
