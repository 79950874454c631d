package shell

import (
	"unicode/utf8"
)

// PrintfEscapes returns a printf format with the backslash escapes
// printf writes as characters decoded (\n, \t, \\, \xHH, octal): the
// same set as bash's $'…' strings.
func PrintfEscapes(format string) string {
	out, _ := decodeANSIC(format)
	return out
}

// decodeANSIC decodes the body of a $'…' string the way bash does.
//
// hidden reports whether a numeric escape (\x72, \162, \u0072) spelled a
// printable ASCII character: that only serves to hide text from matching.
// Escapes for control characters (\n, \t, \x1b colours) are ordinary.
func decodeANSIC(s string) (out string, hidden bool) {
	if !containsByte(s, '\\') {
		return s, false
	}
	buf := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			buf = append(buf, c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			buf = append(buf, 7)
		case 'b':
			buf = append(buf, 8)
		case 'e', 'E':
			buf = append(buf, 27)
		case 'f':
			buf = append(buf, 12)
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'v':
			buf = append(buf, 11)
		case '\\', '\'', '"', '?':
			buf = append(buf, e)
		case 'c':
			// \cX is control-X.
			if i+1 < len(s) {
				i++
				buf = append(buf, s[i]&0x1f)
			} else {
				buf = append(buf, '\\', 'c')
			}
		case 'x', 'u', 'U':
			maxDigits := 2
			if e == 'u' {
				maxDigits = 4
			} else if e == 'U' {
				maxDigits = 8
			}
			v, n := hexValue(s[i+1:], maxDigits)
			if n == 0 {
				buf = append(buf, '\\', e)
				continue
			}
			i += n
			if isPrintableASCII(v) {
				hidden = true
			}
			if e == 'x' {
				buf = append(buf, byte(v))
			} else {
				buf = utf8.AppendRune(buf, rune(v))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := octalValue(s[i:], 3)
			i += n - 1
			if isPrintableASCII(v) {
				hidden = true
			}
			buf = append(buf, byte(v))
		default:
			buf = append(buf, '\\', e)
		}
	}
	return string(buf), hidden
}

func hexValue(s string, maxDigits int) (v uint32, n int) {
	for n < len(s) && n < maxDigits {
		c := s[n]
		var d uint32
		switch {
		case c >= '0' && c <= '9':
			d = uint32(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint32(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint32(c-'A') + 10
		default:
			return v, n
		}
		v = v<<4 | d
		n++
	}
	return v, n
}

func octalValue(s string, maxDigits int) (v uint32, n int) {
	for n < len(s) && n < maxDigits && s[n] >= '0' && s[n] <= '7' {
		v = v<<3 | uint32(s[n]-'0')
		n++
	}
	return v, n
}

func isPrintableASCII(v uint32) bool {
	return v > ' ' && v < 0x7f
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}
