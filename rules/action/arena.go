package action

import "unsafe"

// arena carves the strings one canonicalisation derives (the payload
// copy the parser slices, decoded escapes, the canonical JSON, joined
// paths) out of one growing buffer, so that they cost one allocation
// between them instead of one each.
//
// It is append-only: bytes are written once, past the end of everything
// handed out so far, before the string that covers them exists, and never
// again. When the buffer is full, the arena moves on to a new one and the
// strings already made keep the old one alive. So every string it returns
// is as immutable as Go requires. The zero arena is ready to use.
type arena struct {
	buf []byte
}

// mark is where the next string starts.
func (m *arena) mark() int { return len(m.buf) }

// since returns the bytes written after start as a string.
func (m *arena) since(start int) string {
	if start == len(m.buf) {
		return ""
	}
	return unsafe.String(&m.buf[start], len(m.buf)-start)
}

// reserve makes room for n more bytes. A full buffer is not grown (that
// would copy everything in it) but left to the strings that use it.
func (m *arena) reserve(n int) {
	if cap(m.buf)-len(m.buf) < n {
		m.buf = make([]byte, 0, max(n, 256))
	}
}

// concat returns a + b + c as a string in the arena.
func (m *arena) concat(a, b, c string) string {
	m.reserve(len(a) + len(b) + len(c))
	start := m.mark()
	m.buf = append(m.buf, a...)
	m.buf = append(m.buf, b...)
	m.buf = append(m.buf, c...)
	return m.since(start)
}
