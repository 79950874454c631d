package action

import (
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/parapet-dev/parapet/internal/textcut"
)

// appendCanonical appends the RFC 8785 (JCS) form of a decoded JSON tree.
// Building it from the tree we already decoded saves parsing the payload a
// second time; FuzzCanonicalize checks it byte for byte against jsontext's
// canonicaliser.
func appendCanonical(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case Object:
		// Members are in byte order, which is RFC 8785's UTF-16 order
		// unless a name has a character beyond the BMP.
		if !inUTF16Order(x) {
			x = slices.Clone(x)
			slices.SortFunc(x, func(a, b Member) int { return compareUTF16(a.Key, b.Key) })
		}
		b = append(b, '{')
		for i := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSONString(b, x[i].Key)
			b = append(b, ':')
			var err error
			if b, err = appendCanonical(b, x[i].Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCanonical(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case string:
		return AppendJSONString(b, x), nil
	case Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, invalidf("payload_json: number %s is out of the range JSON numbers can be compared in", textcut.Truncate(string(x), 40))
		}
		return appendES6Number(b, f), nil
	case bool:
		if x {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case nil:
		return append(b, "null"...), nil
	}
	return nil, invalidf("payload_json: unexpected value %T", v)
}

// inUTF16Order reports whether o's byte order is also UTF-16 order: the
// two differ only for characters beyond the BMP (4-byte UTF-8).
func inUTF16Order(o Object) bool {
	for i := range o {
		for j := 0; j < len(o[i].Key); j++ {
			if o[i].Key[j] >= 0xF0 {
				return false
			}
		}
	}
	return true
}

// compareUTF16 orders object keys by their UTF-16 code units, as RFC 8785
// requires; for the usual ASCII keys that is byte order.
func compareUTF16(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] >= utf8.RuneSelf || b[i] >= utf8.RuneSelf {
			return slices.Compare(utf16.Encode([]rune(a[i:])), utf16.Encode([]rune(b[i:])))
		}
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return len(a) - len(b)
}

// AppendJSONString appends s as an RFC 8785 (JCS) JSON string: only what
// JSON requires is escaped (quote, backslash and control characters, with
// the short forms where they exist). s must be valid UTF-8. Shared by the
// canonical action form and the audit log's canonical lines.
func AppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		for i+8 <= len(s) && jsonPlainWord(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendES6Number formats f as ECMAScript's Number.prototype.toString does,
// which RFC 8785 adopts: plain notation from 1e-6 up to 1e21, exponent
// notation outside, shortest digits that round-trip, no "-0".
func appendES6Number(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0')
	}
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// strconv writes "1e-07"; ECMAScript writes "1e-7".
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
