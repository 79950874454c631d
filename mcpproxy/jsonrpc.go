package mcpproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// JSON-RPC 2.0 as MCP uses it: requests (method and id), notifications
// (method, no id) and responses (id with result or error). The proxy
// routes on these few fields and forwards every message it does not
// change byte for byte, so fields it does not know survive.

// Message is one parsed JSON-RPC message with its original bytes.
type Message struct {
	ID     json.RawMessage // nil for notifications
	Method string
	Params json.RawMessage
	Result json.RawMessage
	Error  *RPCError
	// Raw is the message as received (compact, one line).
	Raw []byte
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// JSON-RPC error codes.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
	codeInternalError  = -32603
)

// IsRequest, IsNotification and IsResponse classify a parsed message.
func (m *Message) IsRequest() bool      { return m.Method != "" && m.ID != nil }
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }
func (m *Message) IsResponse() bool     { return m.Method == "" && m.ID != nil }

// idKey is a request id as a map key: its JSON text (1 and "1" differ).
func idKey(id json.RawMessage) string { return string(id) }

// wireMessage is the JSON shape, decoded strictly enough to route.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// ParseMessage parses one JSON-RPC 2.0 message. Batches (arrays) are
// refused: MCP 2025-06-18 removed them.
func ParseMessage(b []byte) (*Message, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, errors.New("empty message")
	}
	if b[0] == '[' {
		return nil, errors.New("JSON-RPC batches are not supported (MCP 2025-06-18 removed them)")
	}
	if b[0] != '{' {
		return nil, errors.New("a JSON-RPC message must be a JSON object")
	}
	var w wireMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	if w.JSONRPC != "2.0" {
		return nil, fmt.Errorf(`"jsonrpc" must be "2.0", not %q`, w.JSONRPC)
	}
	m := &Message{Params: w.Params, Result: w.Result}
	if len(w.ID) > 0 && !bytes.Equal(w.ID, []byte("null")) {
		if !validID(w.ID) {
			return nil, errors.New(`"id" must be a string or an integer`)
		}
		m.ID = w.ID
	}
	if w.Method != nil {
		if *w.Method == "" {
			return nil, errors.New(`"method" is empty`)
		}
		if w.Result != nil || w.Error != nil {
			return nil, errors.New("a message cannot have both a method and a result or error")
		}
		m.Method = *w.Method
		if bytes.Equal(w.Params, []byte("null")) {
			w.Params, m.Params = nil, nil // as if omitted
		}
		if len(w.Params) > 0 && w.Params[0] != '{' && w.Params[0] != '[' {
			return nil, errors.New(`"params" must be an object or an array`)
		}
	} else {
		if m.ID == nil && !bytes.Equal(w.ID, []byte("null")) {
			return nil, errors.New(`a message needs a "method" or an "id"`)
		}
		switch {
		case w.Result != nil && w.Error != nil:
			return nil, errors.New("a response cannot have both a result and an error")
		case w.Result == nil && w.Error == nil:
			return nil, errors.New(`a response needs a "result" or an "error"`)
		case w.Error != nil:
			var e RPCError
			if err := json.Unmarshal(w.Error, &e); err != nil {
				return nil, fmt.Errorf(`"error" is not a JSON-RPC error object: %v`, err)
			}
			m.Error = &e
		}
		if m.ID == nil {
			// A response with id null answers a message that could not
			// be parsed; nothing waits for it, so there is nothing to route.
			return nil, errors.New("a response with a null id (an unparseable message's error) cannot be routed")
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	m.Raw = compact.Bytes()
	return m, nil
}

// idOf digs the id out of a message ParseMessage refused, so the error
// can answer the request it belongs to; nil when there is none.
func idOf(b []byte) json.RawMessage {
	var w struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if json.Unmarshal(b, &w) != nil || w.Method == nil || len(w.ID) == 0 || !validID(w.ID) {
		return nil
	}
	return w.ID
}

// validID accepts strings and integers (MCP: "string | number", and ids
// must not be null).
func validID(id json.RawMessage) bool {
	if id[0] == '"' {
		var s string
		return json.Unmarshal(id, &s) == nil
	}
	var n json.Number
	if json.Unmarshal(id, &n) != nil {
		return false
	}
	_, err := n.Int64()
	return err == nil
}

// response builds a response to id with a result.
func response(id json.RawMessage, result any) *Message {
	r, err := json.Marshal(result)
	if err != nil {
		// Results built here are plain maps and strings.
		panic(err)
	}
	raw, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{"2.0", id, r})
	return &Message{ID: id, Result: r, Raw: raw}
}

// errorResponse builds an error response; id nil means null (an
// unparseable message).
func errorResponse(id json.RawMessage, code int, msg string) *Message {
	e := &RPCError{Code: code, Message: msg}
	wireID := id
	if wireID == nil {
		wireID = json.RawMessage("null")
	}
	raw, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *RPCError       `json:"error"`
	}{"2.0", wireID, e})
	return &Message{ID: id, Error: e, Raw: raw}
}

// request builds a request or, with id nil, a notification.
func request(id json.RawMessage, method string, params any) *Message {
	p, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	raw, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", id, method, p})
	return &Message{ID: id, Method: method, Params: p, Raw: raw}
}

// LineReader reads newline-delimited messages (the stdio transport: one
// JSON-RPC message per line, no embedded newlines).
type LineReader struct {
	r   *bufio.Reader
	max int
}

// ErrLineTooLong is returned (once per such line) for a line longer than
// the limit; the line is skipped and reading can continue.
var ErrLineTooLong = errors.New("message longer than the line limit")

// NewLineReader reads lines of at most max bytes.
func NewLineReader(r io.Reader, max int) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next non-blank line without its line ending (LF or
// CRLF). A line whose content is over the limit is consumed and reported
// as ErrLineTooLong.
func (l *LineReader) Next() ([]byte, error) {
	for {
		var line []byte
		tooLong := false
		for {
			chunk, err := l.r.ReadSlice('\n')
			if !tooLong {
				if len(line)+len(chunk) > l.max+2 { // +2: CRLF
					tooLong, line = true, nil
				} else {
					line = append(line, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if err == io.EOF && (len(line) > 0 || tooLong) {
					break // a last line without newline
				}
				return nil, err
			}
			break
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if tooLong || len(line) > l.max {
			return nil, ErrLineTooLong
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, nil
	}
}
