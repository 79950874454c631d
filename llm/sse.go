package llm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseEvent is one server-sent event: the "event:" name (empty when the
// server gave none) and its "data:" lines joined by newlines.
type sseEvent struct {
	Name string
	Data []byte
}

// sseReader reads server-sent events as the WHATWG spec defines them, for
// the subset providers use: event and data fields, comments, any line
// ending. id and retry are ignored: we never reconnect a stream.
type sseReader struct {
	sc      *bufio.Scanner
	maxData int
	name    string
	data    []byte
	hasData bool
}

// errEventTooLarge is returned for an event whose data exceeds the cap.
var errEventTooLarge = errors.New("event larger than the size cap")

// newSSEReader reads events of at most maxEvent bytes of data each.
func newSSEReader(r io.Reader, maxEvent int) *sseReader {
	sc := bufio.NewScanner(r)
	// A line can't be longer than an event; a little slack for the field name.
	sc.Buffer(make([]byte, 0, min(4096, maxEvent+64)), maxEvent+64)
	sc.Split(scanSSELine)
	return &sseReader{sc: sc, maxData: maxEvent}
}

// Next returns the next event, io.EOF at a clean end of the stream, or the
// read error. An event left unterminated by the end of the stream is
// dropped, as the spec says: a cut-off stream must not yield half an event.
func (r *sseReader) Next() (sseEvent, error) {
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if !r.hasData {
				r.name = ""
				continue
			}
			ev := sseEvent{Name: r.name, Data: r.data}
			r.name, r.data, r.hasData = "", nil, false
			return ev, nil
		}
		if line[0] == ':' {
			continue // comment, used as keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			r.name = string(value)
		case "data":
			if r.hasData {
				r.data = append(r.data, '\n')
			}
			if len(r.data)+len(value) > r.maxData {
				return sseEvent{}, fmt.Errorf("%w (%d bytes)", errEventTooLarge, r.maxData)
			}
			r.data = append(r.data, value...)
			r.hasData = true
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return sseEvent{}, fmt.Errorf("%w (%d bytes)", errEventTooLarge, r.maxData)
		}
		return sseEvent{}, err
	}
	return sseEvent{}, io.EOF
}

// scanSSELine splits on "\r\n", "\n" or a lone "\r".
func scanSSELine(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// A "\r" at the end of the buffer may be the first half of "\r\n".
		if i+1 == len(data) && !atEOF {
			return 0, nil, nil
		}
		if i+1 < len(data) && data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	}
	if atEOF {
		// The last line had no terminator; the event it belongs to can't
		// have been dispatched, so Next drops it.
		return len(data), data, nil
	}
	return 0, nil, nil
}
