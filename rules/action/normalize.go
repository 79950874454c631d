package action

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/parapet-dev/parapet/internal/textcut"
)

// Normalize returns s prepared for matching: zero-width, bidi, tag and control
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
	skipTo := 0
	note := func(kind string, r rune) {
		if !seen[kind] {
			seen[kind] = true
			ev = append(ev, Evasion{Kind: kind, Evidence: runeName(r)})
		}
	}
	for i, r := range s {
		if i < skipTo {
			continue
		}
		if r == blackFlag {
			if n := flagTagSequence(s[i+blackFlagLen:]); n > 0 {
				// An emoji subdivision flag (England, Scotland, Wales) is
				// the one honest use of tag characters: keep it whole.
				b.WriteString(s[i : i+blackFlagLen+n])
				skipTo = i + blackFlagLen + n
				continue
			}
		}
		switch {
		case isZeroWidth(r):
			note("zero-width", r)
		case isBidi(r):
			note("bidi", r)
		case isTagChar(r):
			note("tag", r)
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

// isTagChar reports Unicode tag characters (U+E0000–U+E007F): invisible,
// and each mirrors an ASCII character, so a whole sentence can ride
// unseen inside ordinary text ("ASCII smuggling").
func isTagChar(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

const blackFlag rune = 0x1F3F4

// blackFlagLen is blackFlag's length in UTF-8.
const blackFlagLen = 4

// flagTagSequence returns the length in bytes of the tag characters that
// make a black flag a subdivision flag (2–6 tag letters or digits and the
// cancel tag U+E007F), or 0.
func flagTagSequence(s string) int {
	n, off := 0, 0
	for off < len(s) {
		r, size := utf8.DecodeRuneInString(s[off:])
		switch {
		case r == 0xE007F:
			if n < 2 || n > 6 {
				return 0
			}
			return off + size
		case r >= 0xE0061 && r <= 0xE007A || r >= 0xE0030 && r <= 0xE0039:
			n++
			off += size
		default:
			return 0
		}
	}
	return 0
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
