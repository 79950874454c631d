package action

// Scanning eight bytes at a time ("SIMD within a register"): the scans
// below run over every string of every uncached decision, and most
// strings are plain ASCII with nothing to stop at. Each word test may
// report a word that needs no attention (a borrow can flag a byte above a
// real hit), never miss one; callers re-check flagged words byte by byte.

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load8 reads s[i:i+8] as a little-endian word.
func load8(s string, i int) uint64 {
	w := s[i : i+8] // one bounds check, and the compiler merges the loads
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// hasZero flags the words with a zero byte.
func hasZero(x uint64) bool { return (x-lows)&^x&highs != 0 }

// zeroBytes sets the high bit of exactly the zero bytes of x.
func zeroBytes(x uint64) uint64 {
	const low7 = 0x7f7f7f7f7f7f7f7f
	return ^((x&low7 + low7) | x | low7)
}

// belowBytes sets the high bit of exactly the bytes of x below n (n <= 128).
func belowBytes(x uint64, n byte) uint64 {
	const low7 = 0x7f7f7f7f7f7f7f7f
	// A byte's low seven bits plus 0x80-n cannot carry out of the byte;
	// the high bit is set when they are at least n, or by the byte's own.
	return ^((x&low7 + lows*uint64(0x80-n)) | x) & highs
}

// jsonSpecialBytes sets the high bit of exactly the bytes of x that end a
// JSON string's plain run: quote, backslash and control characters.
func jsonSpecialBytes(x uint64) uint64 {
	return zeroBytes(x^(lows*'"')) | zeroBytes(x^(lows*'\\')) | belowBytes(x, 0x20)
}

// hasByte flags the words with byte c.
func hasByte(x uint64, c byte) bool { return hasZero(x ^ (lows * uint64(c))) }

// hasLess flags the words with a byte below n (n <= 128).
func hasLess(x uint64, n byte) bool { return (x-lows*uint64(n))&^x&highs != 0 }

// plainASCIIWord reports words of printable ASCII (0x20-0x7e), tab,
// newline or carriage return only; a flagged word may still be plain.
func plainASCIIWord(x uint64) bool {
	return x&highs == 0 && !hasByte(x, 0x7f) && !hasLess(x, 0x20)
}

// jsonPlainWord reports words that need nothing escaped in a JSON
// string: no quote, no backslash, no control character. A flagged word
// may still be plain.
func jsonPlainWord(x uint64) bool {
	return !hasByte(x, '"') && !hasByte(x, '\\') && !hasLess(x, 0x20)
}

// belowDEL reports whether every byte of s is below 0x7f: ASCII without
// DEL. Exact per word: with no high bit set, adding one to each byte
// cannot carry into the next, and sets a high bit only where a byte was
// 0x7f.
func belowDEL(s string) bool {
	n := len(s)
	if n < 8 {
		for i := 0; i < n; i++ {
			if s[i] >= 0x7f {
				return false
			}
		}
		return true
	}
	for i := 0; i < n-8; i += 8 {
		if x := load8(s, i); (x|(x+lows))&highs != 0 {
			return false
		}
	}
	x := load8(s, n-8) // the last word, overlapping the one before
	return (x|(x+lows))&highs == 0
}
