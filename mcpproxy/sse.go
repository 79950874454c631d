package mcpproxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Server-Sent Events as the Streamable HTTP transport uses them: each
// event's data is one JSON-RPC message.

// sseEvent is one dispatched event.
type sseEvent struct {
	Event string
	ID    string
	Data  []byte
}

// errEventTooLarge: an event's data exceeds the limit.
var errEventTooLarge = errors.New("SSE event larger than the message limit")

// readSSE calls fn for each event in r until EOF (nil) or an error.
// Events of a type other than "message" are skipped; so are empty ones.
func readSSE(r io.Reader, max int, fn func(sseEvent) error) error {
	lr := bufio.NewReaderSize(r, 64<<10)
	var ev sseEvent
	var data bytes.Buffer
	hasData := false
	dispatch := func() error {
		defer func() { ev, hasData = sseEvent{}, false; data.Reset() }()
		if !hasData || (ev.Event != "" && ev.Event != "message") {
			return nil
		}
		ev.Data = append([]byte(nil), data.Bytes()...)
		return fn(ev)
	}
	for {
		line, err := readSSELine(lr, max)
		if err != nil {
			if err == io.EOF {
				return dispatch() // a last event without a blank line
			}
			return err
		}
		if len(line) == 0 {
			if err := dispatch(); err != nil {
				return err
			}
			continue
		}
		if line[0] == ':' {
			continue // comment (keep-alive)
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if data.Len()+len(value)+1 > max {
				return errEventTooLarge
			}
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "event":
			ev.Event = string(value)
		case "id":
			ev.ID = string(value)
		}
	}
}

// readSSELine reads one line (LF, CRLF or CR endings collapse to LF
// handling here: a trailing CR is dropped) of at most max bytes.
func readSSELine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+2 {
			return nil, errEventTooLarge
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				break
			}
			return nil, err
		}
		break
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}

// writeSSE writes one message as an SSE event.
func writeSSE(w io.Writer, m *Message) error {
	var b bytes.Buffer
	b.WriteString("event: message\ndata: ")
	b.Write(m.Raw) // compact JSON: no newlines
	b.WriteString("\n\n")
	_, err := w.Write(b.Bytes())
	return err
}
