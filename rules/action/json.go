package action

import (
	"math/bits"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonParser decodes one JSON object into the tree Canonicalize works on.
// It is strict where a lenient parser would let an engine and the shield
// read different arguments from the same bytes: duplicate member names,
// lone surrogates in \u escapes and anything after the top-level value are
// errors (invalid UTF-8 is rejected before parsing). It is hand-written
// because it is on every uncached decision and a general token API costs
// several times more; FuzzJSONParser checks it against go-json-experiment's
// jsontext, which accepts and rejects exactly the same documents.
type jsonParser struct {
	b []byte
	// s is b as one string: strings without escapes are substrings of it,
	// one allocation per payload instead of one per string.
	s string
	// mem holds s and the strings decoded from escapes. (A value, not a
	// pointer: escape analysis would move a pointed-to arena to the heap.)
	mem   arena
	i     int
	depth int
	lim   Limits
	// nstrings counts string values (not member names), so the caller can
	// size Action.Strings once.
	nstrings int
	// nonCanonical is set when the document is not in its RFC 8785 form
	// (whitespace, an escape JCS would not write, keys out of order, a
	// number JCS would spell differently). Payloads are often canonical
	// already, and then they are their own canonical form.
	nonCanonical bool
	// nonPlainEscape is set when an escape decodes to a character outside
	// printable ASCII, tab, newline and carriage return: the one way a
	// payload of such bytes can carry a string Normalize would change.
	nonPlainEscape bool
	// topRoom, if the top-level object's members fit, holds them.
	topRoom []Member
}

func parseJSONObject(b []byte, lim Limits) (Object, error) {
	m, _, err := parseJSONObjectCount(b, lim, &arena{})
	return m, err
}

// parseJSONObjectCount is parseJSONObject that also returns the number of
// string values in the document. It copies b into mem, where the decoded
// strings live too.
func parseJSONObjectCount(b []byte, lim Limits, mem *arena) (Object, int, error) {
	m, n, _, _, err := parseJSONObjectCanonical(b, lim, mem, nil)
	return m, n, err
}

// parseJSONObjectCanonical is parseJSONObjectCount that also returns b's
// copy in mem when b is already in its RFC 8785 form, nil otherwise. The
// top-level object's members go in room when they fit.
//
// escapesPlain reports that no escape in b decodes to a character outside
// printable ASCII, tab, newline and carriage return.
func parseJSONObjectCanonical(b []byte, lim Limits, mem *arena, room []Member) (m Object, nstrings int, canonical []byte, escapesPlain bool, err error) {
	mem.reserve(len(b))
	start := mem.mark()
	mem.buf = append(mem.buf, b...)
	end := mem.mark()
	p := jsonParser{b: mem.buf[start:end:end], s: mem.since(start), mem: *mem, lim: lim, topRoom: room}
	m, err = p.topObject()
	*mem = p.mem
	if err == nil && !p.nonCanonical {
		canonical = p.b
	}
	return m, p.nstrings, canonical, !p.nonPlainEscape, err
}

func (p *jsonParser) topObject() (Object, error) {
	p.skipSpace()
	if p.i >= len(p.b) {
		return nil, invalidf("payload_json is not valid JSON: unexpected end of input")
	}
	if c := p.b[p.i]; c != '{' {
		switch {
		case c == '[':
			return nil, invalidf("payload_json must be a JSON object, got an array")
		case c == '"':
			return nil, invalidf("payload_json must be a JSON object, got a string")
		case c == '-' || c >= '0' && c <= '9':
			return nil, invalidf("payload_json must be a JSON object, got a number")
		case c == 't' || c == 'f':
			return nil, invalidf("payload_json must be a JSON object, got a boolean")
		case c == 'n':
			return nil, invalidf("payload_json must be a JSON object, got null")
		}
		return nil, p.syntaxError()
	}
	// Called directly, not through value: an Object in an interface
	// costs an allocation of its own, which the top level does without.
	obj, err := p.object()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.b) {
		return nil, invalidf("payload_json has data after the top-level object")
	}
	return obj, nil
}

func (p *jsonParser) syntaxError() error {
	if p.i >= len(p.b) {
		return invalidf("payload_json is not valid JSON: unexpected end of input")
	}
	r, _ := utf8.DecodeRune(p.b[p.i:])
	return invalidf("payload_json is not valid JSON: unexpected %q at byte %d", r, p.i)
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
			p.nonCanonical = true
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	p.skipSpace()
	if p.i >= len(p.b) {
		return nil, p.syntaxError()
	}
	switch c := p.b[p.i]; {
	case c == '{':
		obj, err := p.object()
		if err != nil {
			return nil, err
		}
		return obj, nil
	case c == '[':
		return p.array()
	case c == '"':
		p.nstrings++
		return p.string()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	}
	return nil, p.syntaxError()
}

func (p *jsonParser) literal(word string) bool {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		return tooLargef("payload_json nests deeper than %d levels", p.lim.MaxDepth)
	}
	return nil
}

func (p *jsonParser) object() (Object, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // '{'
	// Members are gathered on the stack while there are few, and the
	// Object allocated once at its final size.
	var buf [8]Member
	members := buf[:0]
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.depth--
		return Object{}, nil
	}
	sorted := true // members arrived in byte order
	for {
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.syntaxError()
		}
		key, err := p.string()
		if err != nil {
			return nil, err
		}
		if n := len(members); n > 0 {
			prev := members[n-1].Key
			if key <= prev {
				sorted = false
			}
			if !p.nonCanonical && compareUTF16(prev, key) >= 0 {
				p.nonCanonical = true // RFC 8785 sorts members
			}
		}
		// Small objects check for a repeated name as they go; large ones
		// once sorted, so a hostile payload cannot make this quadratic.
		if len(members) < len(buf) {
			for i := range members {
				if members[i].Key == key {
					return nil, duplicateMember(key)
				}
			}
		}
		p.skipSpace()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.syntaxError()
		}
		p.i++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		members = append(members, Member{Key: key, Value: v})
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.syntaxError()
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			p.depth--
			var obj Object
			if p.depth == 0 && len(members) <= cap(p.topRoom) {
				obj = Object(p.topRoom[:len(members):len(members)])
			} else {
				obj = make(Object, len(members))
			}
			copy(obj, members)
			if !sorted {
				slices.SortFunc(obj, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
			}
			if len(obj) > len(buf) {
				for i := 1; i < len(obj); i++ {
					if obj[i].Key == obj[i-1].Key {
						return nil, duplicateMember(obj[i].Key)
					}
				}
			}
			return obj, nil
		default:
			return nil, p.syntaxError()
		}
	}
}

func duplicateMember(key string) error {
	return invalidf("payload_json is not valid JSON: duplicate object member name %q", key)
}

func (p *jsonParser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.i++ // '['
	var arr []any
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.depth--
		return arr, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.syntaxError()
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			p.depth--
			return arr, nil
		default:
			return nil, p.syntaxError()
		}
	}
}

// string decodes a JSON string starting at its opening quote.
func (p *jsonParser) string() (string, error) {
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes. Whole words are passed over, and the scan
	// stops right at the first quote, backslash or control character of
	// a word, rather than stepping a byte at a time to the closing quote.
	for p.i < len(p.b) {
		for p.i+8 <= len(p.s) {
			if m := jsonSpecialBytes(load8(p.s, p.i)); m != 0 {
				p.i += bits.TrailingZeros64(m) >> 3
				break
			}
			p.i += 8
		}
		if p.i >= len(p.b) {
			break
		}
		c := p.b[p.i]
		if c == '"' {
			s := p.s[start:p.i]
			p.i++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", invalidf("payload_json is not valid JSON: control character 0x%02x in a string at byte %d", c, p.i)
		}
		p.i++
	}
	// The decoded string is written to the arena as it is read.
	outStart := p.mem.mark()
	out := append(p.mem.buf, p.b[start:p.i]...)
	for p.i < len(p.b) {
		// Copy the run of plain bytes up to the next quote, backslash or
		// control character in one go.
		j := p.i
		for j+8 <= len(p.s) && jsonPlainWord(load8(p.s, j)) {
			j += 8
		}
		for j < len(p.b) && p.b[j] >= 0x20 && p.b[j] != '"' && p.b[j] != '\\' {
			j++
		}
		out = append(out, p.b[p.i:j]...)
		if p.i = j; p.i >= len(p.b) {
			break
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			p.mem.buf = out
			return p.mem.since(outStart), nil
		case c < 0x20:
			return "", invalidf("payload_json is not valid JSON: control character 0x%02x in a string at byte %d", c, p.i)
		}
		if p.i+1 >= len(p.b) {
			return "", p.syntaxError()
		}
		esc := p.b[p.i+1]
		p.i += 2
		switch esc {
		case '"', '\\', '/':
			out = append(out, esc)
			p.nonCanonical = p.nonCanonical || esc == '/' // RFC 8785 writes "/" as is
		case 'b':
			out = append(out, '\b')
			p.nonPlainEscape = true
		case 'f':
			out = append(out, '\f')
			p.nonPlainEscape = true
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", invalidf("payload_json is not valid JSON: bad \\u escape at byte %d", p.i)
			}
			if !p.nonCanonical && !jcsUnicodeEscape(r, p.b[p.i-4:p.i]) {
				p.nonCanonical = true
			}
			if utf16.IsSurrogate(r) {
				lo, ok := rune(-1), false
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					lo, ok = p.hex4()
				}
				r = utf16.DecodeRune(r, lo)
				if !ok || r == utf8.RuneError {
					return "", invalidf("payload_json is not valid JSON: invalid surrogate pair in a string at byte %d", p.i)
				}
			}
			if !(r >= 0x20 && r < 0x7f || r == '\t' || r == '\n' || r == '\r') {
				p.nonPlainEscape = true
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", invalidf("payload_json is not valid JSON: invalid escape \\%c at byte %d", esc, p.i-1)
		}
	}
	return "", p.syntaxError()
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// number scans a JSON number (RFC 8259 grammar) and keeps its literal.
func (p *jsonParser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, p.syntaxError()
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, p.syntaxError()
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, p.syntaxError()
		}
	}
	if !p.nonCanonical && !jcsInteger(p.s[start:p.i]) {
		p.nonCanonical = true
	}
	return Number(p.s[start:p.i]), nil
}

// jcsUnicodeEscape reports whether RFC 8785 writes rune r as \u with these
// four hex digits: only control characters without a short escape, in
// lower-case hex.
func jcsUnicodeEscape(r rune, digits []byte) bool {
	if r >= 0x20 {
		return false
	}
	switch r {
	case '\b', '\t', '\n', '\f', '\r':
		return false
	}
	for _, c := range digits {
		if c >= 'A' && c <= 'F' {
			return false
		}
	}
	return true
}

// jcsInteger reports whether RFC 8785 writes the number literal n as is:
// an integer without leading zeros, not "-0", of at most 15 digits (every
// such integer is exact in a float64, and ECMAScript prints it digit for
// digit). Anything else is left to the full number formatting.
func jcsInteger(n string) bool {
	digits := n
	if digits != "" && digits[0] == '-' {
		digits = digits[1:]
		if digits == "0" {
			return false
		}
	}
	if digits == "" || len(digits) > 15 || digits[0] == '0' && len(digits) > 1 {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}
