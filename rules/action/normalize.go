package action

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/parapet-dev/parapet/internal/textcut"
)

// Normalize returns s prepared for matching: zero-width, bidi and control
// characters removed (tab, newline and carriage return kept) and NFKC
// applied, so "ｒｍ" and "r\u200bm" both read "rm". It reports each kind of
// trick it undid, and mixed-script words (a Cyrillic "с" inside "сurl"),
// which it flags but does not rewrite: a look-alike host is a different host.
func Normalize(s string) (string, []Evasion) {
	if isPlainASCII(s) {
		return s, nil
	}
	var ev []Evasion
	var b strings.Builder
	b.Grow(len(s))
	seen := map[string]bool{}
	note := func(kind string, r rune) {
		if !seen[kind] {
			seen[kind] = true
			ev = append(ev, Evasion{Kind: kind, Evidence: runeName(r)})
		}
	}
	for _, r := range s {
		switch {
		case isZeroWidth(r):
			note("zero-width", r)
		case isBidi(r):
			note("bidi", r)
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			note("control", r)
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	if !norm.NFKC.IsNormalString(out) {
		n := norm.NFKC.String(out)
		if n != out {
			ev = append(ev, Evasion{Kind: "fullwidth", Evidence: textcut.Truncate(out, 40)})
		}
		out = n
	}
	if w := mixedScriptWord(out); w != "" {
		ev = append(ev, Evasion{Kind: "homoglyph", Evidence: w})
	}
	return out, ev
}

func runeName(r rune) string { return fmt.Sprintf("U+%04X", r) }

func isPlainASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !plainASCIIWord(load8(s, i)) && !plainASCIIBytes(s[i:i+8]) {
			return false
		}
	}
	return plainASCIIBytes(s[i:])
}

func plainASCIIBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			return false
		}
	}
	return true
}

func isZeroWidth(r rune) bool {
	switch r {
	case 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x180E, 0x00AD, 0x034F, 0x2061, 0x2062, 0x2063, 0x2064:
		return true
	}
	return false
}

func isBidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// mixedScriptWord returns the first word that mixes Latin letters with
// Cyrillic or Greek ones, the usual homoglyph trick, or "".
func mixedScriptWord(s string) string {
	start := -1
	var latin, other bool
	for i, r := range s + " " {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start, latin, other = i, false, false
			}
			if r < utf8.RuneSelf || unicode.Is(unicode.Latin, r) {
				latin = latin || unicode.IsLetter(r)
			} else if unicode.Is(unicode.Cyrillic, r) || unicode.Is(unicode.Greek, r) || unicode.Is(unicode.Armenian, r) {
				other = true
			}
			continue
		}
		if start >= 0 && latin && other {
			return s[start:i]
		}
		start = -1
	}
	return ""
}
