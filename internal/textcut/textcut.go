// Package textcut shortens text for messages and events without breaking
// UTF-8: a string cut inside a character would make a protobuf string
// field unmarshalable.
package textcut

import "unicode/utf8"

// Truncate returns s if it is at most n bytes, else its longest prefix of
// at most n bytes that ends on a character boundary, followed by "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
