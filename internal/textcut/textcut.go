// Package textcut keeps text fit for protobuf string fields, which must
// be UTF-8: it shortens text for messages and events without cutting a
// character, and checks text quickly where the usual string is ASCII.
package textcut

import "unicode/utf8"

// Truncate returns s if it is at most n bytes, else its longest prefix of
// at most n bytes that ends on a character boundary, followed by "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Cut(s, n) + "…"
}

// Cut returns s if it is at most n bytes, else its longest prefix of at
// most n bytes that ends on a character boundary (without a mark that
// it was cut).
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ValidUTF8 is utf8.ValidString, faster over ASCII: it reads 32 bytes a
// step, then 8 (the last word overlapping the one before), and hands the
// rest to utf8.ValidString from the first word with a byte above 0x7f.
// Every string of every action and every verdict is checked, nearly all
// of them ASCII.
func ValidUTF8(s string) bool {
	const high = 0x8080808080808080
	n := len(s)
	if n < 8 {
		for i := 0; i < n; i++ {
			if s[i] >= 0x80 {
				return utf8.ValidString(s)
			}
		}
		return true
	}
	i := 0
	for ; i+32 <= n; i += 32 {
		if (load8(s, i)|load8(s, i+8)|load8(s, i+16)|load8(s, i+24))&high != 0 {
			return utf8.ValidString(s[i:])
		}
	}
	for ; i+8 <= n; i += 8 {
		if load8(s, i)&high != 0 {
			return utf8.ValidString(s[i:])
		}
	}
	// Bytes before i are ASCII, so a high bit here lies at i or after.
	if i < n && load8(s, n-8)&high != 0 {
		return utf8.ValidString(s[i:])
	}
	return true
}

// load8 reads s[i:i+8] as a little-endian word (one load once compiled).
func load8(s string, i int) uint64 {
	w := s[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}
