package tools

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// truncMarker is the visible note left where output was cut, so the model
// knows it did not see everything.
func truncMarker(more int64) string {
	return fmt.Sprintf("\n[... truncated: %d more bytes]", more)
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a multi-byte character.
func cutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i]
		}
	}
	return s[:n]
}

// capString truncates s to limit bytes with a marker. It reports whether
// anything was cut.
func capString(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	head := cutUTF8(s, limit)
	return head + truncMarker(int64(len(s)-len(head))), true
}

// headTail keeps the first and last bytes of a stream and counts what it
// drops in between, so a runaway command can't grow memory while the start
// (what ran) and the end (how it failed) of its output are both kept.
type headTail struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // may grow to 2*tailCap before it is compacted
	total   int64
}

func newHeadTail(limit int) *headTail {
	h := limit / 2
	return &headTail{headCap: h, tailCap: limit - h}
}

func (b *headTail) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	if room := b.headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || b.tailCap == 0 {
		return n, nil
	}
	if len(p) >= b.tailCap {
		b.tail = append(b.tail[:0], p[len(p)-b.tailCap:]...)
		return n, nil
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > 2*b.tailCap {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.tailCap:]...)
	}
	return n, nil
}

// String returns the kept output and whether bytes were dropped.
func (b *headTail) String() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := b.tail
	if len(tail) > b.tailCap {
		tail = tail[len(tail)-b.tailCap:]
	}
	dropped := b.total - int64(len(b.head)) - int64(len(tail))
	if dropped <= 0 {
		return string(b.head) + string(tail), false
	}
	var sb strings.Builder
	sb.Write(b.head)
	fmt.Fprintf(&sb, "\n[... truncated: %d more bytes omitted here ...]\n", dropped)
	sb.Write(tail)
	return sb.String(), true
}
