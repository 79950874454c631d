package action

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"unicode/utf8"
)

// maxDecodedBytes bounds the decoded text kept per string value.
const maxDecodedBytes = 64 << 10

// decodeLayers finds URL-encoded, base64 and hex layers in s, decodes them
// and repeats on the result up to maxLayers deep, so that later tiers scan
// what an encoded payload really says.
func decodeLayers(s string, maxLayers int) []String {
	var out []String
	budget := maxDecodedBytes
	current := []string{s}
	for layer := 1; layer <= maxLayers && len(current) > 0 && budget > 0; layer++ {
		var next []string
		for _, text := range current {
			for _, d := range decodeOnce(text) {
				if budget-len(d.text) < 0 {
					return out
				}
				budget -= len(d.text)
				norm, _ := Normalize(d.text)
				out = append(out, String{Value: norm, Raw: d.text, Layer: layer, Encoding: d.encoding})
				next = append(next, norm)
			}
		}
		current = next
	}
	return out
}

type decoded struct {
	text, encoding string
}

// minEncodedLen is the length below which decodeOnce finds nothing.
const minEncodedLen = 8

func decodeOnce(s string) []decoded {
	if len(s) < minEncodedLen {
		return nil
	}
	// Find which decoders could apply; most strings need none.
	pct := strings.IndexByte(s, '%') >= 0
	hexEsc := strings.Contains(s, `\x`)
	b64 := hasBase64Run(s, minBase64Run)
	if !pct && !hexEsc && !b64 {
		return nil
	}
	var out []decoded
	if pct {
		if u, err := url.PathUnescape(s); err == nil && u != s && utf8.ValidString(u) {
			out = append(out, decoded{u, "url"})
		}
	}
	if hexEsc {
		if d, ok := decodeHexEscapes(s); ok {
			out = append(out, decoded{d, "hex"})
		}
	}
	if b64 {
		forEachBase64Run(s, func(run string) {
			if d, ok := decodeBase64(run); ok {
				out = append(out, decoded{d, "base64"})
			} else if len(run)%2 == 0 && isAllHex(run) {
				if b, err := hex.DecodeString(run); err == nil && printable(b) {
					out = append(out, decoded{string(b), "hex"})
				}
			}
		})
	}
	return out
}

// minBase64Run is the shortest run of base64 characters worth decoding.
const minBase64Run = 16

// hasBase64Run reports whether s has a run of at least n (8 < n <= 16)
// base64 characters. Such a run covers two positions 8 apart that are
// both 7 modulo 8, so only those positions are looked at until both of a
// pair are base64; then the run through the first is measured.
func hasBase64Run(s string, n int) bool {
	for k := 7; k+8 < len(s); k += 8 {
		if !base64Byte[s[k]] || !base64Byte[s[k+8]] {
			continue
		}
		start, end := k, k // the run through k is s[start:end+1]
		for start > 0 && base64Byte[s[start-1]] {
			start--
		}
		for end+1 < len(s) && base64Byte[s[end+1]] {
			end++
		}
		if end-start+1 >= n {
			return true
		}
		for k+8 <= end { // the next pair starts past this run
			k += 8
		}
	}
	return false
}

// base64Byte marks the bytes of the standard and URL-safe base64 alphabets.
var base64Byte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isBase64Byte(byte(c))
	}
	return t
}()

func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// forEachBase64Run calls fn for each run of at least 16 base64 characters
// with up to two "=" of padding after it. "=" only ends a run, so the value
// in "X=aGVsbG8…" is found without its "X=" prefix.
func forEachBase64Run(s string, fn func(string)) {
	for i := 0; i < len(s); {
		if !base64Byte[s[i]] {
			i++
			continue
		}
		start := i
		for i < len(s) && base64Byte[s[i]] {
			i++
		}
		end := i
		for end < len(s) && end-i < 2 && s[end] == '=' {
			end++
		}
		if i-start >= 16 {
			fn(s[start:end])
		}
		i = end
	}
}

func isAllHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func decodeBase64(run string) (string, bool) {
	trimmed := strings.TrimRight(run, "=")
	if strings.Contains(trimmed, "=") {
		return "", false
	}
	var enc *base64.Encoding
	if strings.ContainsAny(trimmed, "-_") {
		if strings.ContainsAny(trimmed, "+/") {
			return "", false
		}
		enc = base64.RawURLEncoding
	} else {
		enc = base64.RawStdEncoding
	}
	// Most runs are short: decode them on the stack, so that only one
	// that decodes to text costs an allocation (the string).
	var srcBuf, dstBuf [256]byte
	var b []byte
	var err error
	if len(trimmed) <= len(srcBuf) {
		src := srcBuf[:copy(srcBuf[:], trimmed)]
		var n int
		n, err = enc.Decode(dstBuf[:enc.DecodedLen(len(src))], src)
		b = dstBuf[:n]
	} else {
		b, err = enc.DecodeString(trimmed)
	}
	if err != nil || len(b) < 6 || !printable(b) {
		return "", false
	}
	return string(b), true
}

// printable reports whether b is UTF-8 text with few control characters:
// random identifiers decode to binary and are skipped.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	bad := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f {
			bad++
		}
	}
	return bad*20 <= len(b)
}

func decodeHexEscapes(s string) (string, bool) {
	var b []byte
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && isAllHex(s[i+2:i+4]) {
			v, _ := hex.DecodeString(s[i+2 : i+4])
			b = append(b, v[0])
			i += 3
			n++
			continue
		}
		b = append(b, s[i])
	}
	if n < 2 || !printable(b) {
		return "", false
	}
	return string(b), true
}
