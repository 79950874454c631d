package llm

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func readEvents(t *testing.T, in string, max int) ([]sseEvent, error) {
	t.Helper()
	r := newSSEReader(strings.NewReader(in), max)
	var out []sseEvent
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestSSEReader(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string // "name|data"
	}{
		{"lf", "data: a\n\ndata: b\n\n", []string{"|a", "|b"}},
		{"crlf", "event: x\r\ndata: a\r\n\r\n", []string{"x|a"}},
		{"lone cr", "data: a\r\rdata: b\r\r", []string{"|a", "|b"}},
		{"multi-line data", "data: a\ndata:  b\ndata\n\n", []string{"|a\n b\n"}},
		{"comments and unknown fields", ": keep-alive\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\n", []string{"|x"}},
		{"no space after colon", "event:ping\ndata:{}\n\n", []string{"ping|{}"}},
		{"name without data is dropped", "event: ping\n\ndata: y\n\n", []string{"|y"}},
		{"unterminated event is dropped", "data: whole\n\ndata: cut", []string{"|whole"}},
		{"unterminated line is dropped", "data: whole\n\ndata: cut\n", []string{"|whole"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs, err := readEvents(t, c.in, 1024)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ev := range evs {
				got = append(got, ev.Name+"|"+string(ev.Data))
			}
			if strings.Join(got, ";") != strings.Join(c.want, ";") {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestSSEReaderCapsEvents(t *testing.T) {
	for _, in := range []string{
		"data: " + strings.Repeat("x", 200) + "\n\n",              // one long line
		strings.Repeat("data: "+strings.Repeat("x", 30)+"\n", 10), // many lines
	} {
		if _, err := readEvents(t, in, 100); !errors.Is(err, errEventTooLarge) {
			t.Errorf("err = %v, want errEventTooLarge", err)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": "0"}, 0},
		{map[string]string{"Retry-After": "-4"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "9", "retry-after-ms": "250"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": "9", "retry-after-ms": "junk"}, 9 * time.Second},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != c.want {
			t.Errorf("retryAfter(%v) = %v, want %v", c.h, got, c.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	c := &caller{cfg: Config{RetryBaseDelay: 100 * time.Millisecond, MaxRetryWait: 5 * time.Second}}
	for attempt := 1; attempt <= 10; attempt++ {
		full := 100 * time.Millisecond << min(attempt-1, 3)
		d, ok := c.backoff(attempt, &Error{Kind: ErrUnavailable})
		if !ok || d < full/2 || d > full {
			t.Errorf("attempt %d: backoff %v, want within [%v, %v]", attempt, d, full/2, full)
		}
	}
	if d, ok := c.backoff(1, &Error{RetryAfter: 2 * time.Second}); !ok || d != 2*time.Second {
		t.Errorf("Retry-After within the cap: %v, %v", d, ok)
	}
	if _, ok := c.backoff(1, &Error{RetryAfter: time.Minute}); ok {
		t.Error("a Retry-After beyond the cap was honoured")
	}
}

func TestErrorBodyMessage(t *testing.T) {
	cases := []struct{ body, msg, typ string }{
		{`{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}`, "Incorrect API key", "invalid_api_key"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "Overloaded", "overloaded_error"},
		{`{"error":{"message":"quota","type":"insufficient_quota","code":429}}`, "quota", "insufficient_quota"},
		{`{"error":"model 'x' not found"}`, "model 'x' not found", ""},
		{`{"message":"upstream timeout"}`, "upstream timeout", ""},
		{"<html>Bad Gateway</html>", "<html>Bad Gateway</html>", ""},
		{"", "", ""},
	}
	for _, c := range cases {
		msg, typ := errorBodyMessage([]byte(c.body))
		if msg != c.msg || typ != c.typ {
			t.Errorf("errorBodyMessage(%q) = %q, %q; want %q, %q", c.body, msg, typ, c.msg, c.typ)
		}
	}
	long, _ := errorBodyMessage([]byte(strings.Repeat("é", 1000)))
	if !utf8.ValidString(long) || len(long) > maxMessage+len("…") {
		t.Errorf("long message not truncated cleanly: %d bytes", len(long))
	}
}

func TestCappedReader(t *testing.T) {
	r := &cappedReader{r: strings.NewReader("12345"), left: 5, limit: 5}
	if b, err := io.ReadAll(r); err != nil || string(b) != "12345" {
		t.Errorf("exactly at the cap: %q, %v", b, err)
	}
	r = &cappedReader{r: strings.NewReader("123456"), left: 5, limit: 5}
	var tl *tooLargeError
	if _, err := io.ReadAll(r); !errors.As(err, &tl) {
		t.Errorf("over the cap: err = %v", err)
	}
}

func TestUsageAdd(t *testing.T) {
	got := Usage{1, 2, 3, 4}.Add(Usage{10, 20, 30, 40})
	if got != (Usage{11, 22, 33, 44}) {
		t.Errorf("Add = %+v", got)
	}
}

func TestStopReason(t *testing.T) {
	cases := []struct {
		raw   string
		calls bool
		want  string
	}{
		{"stop", false, StopEndTurn}, {"end_turn", false, StopEndTurn}, {"length", false, StopMaxTokens},
		{"max_tokens", false, StopMaxTokens}, {"tool_use", true, StopToolCalls}, {"stop", true, StopToolCalls},
		{"", true, StopToolCalls}, {"content_filter", false, StopContentFilter}, {"refusal", false, StopContentFilter},
		{"pause_turn", false, "pause_turn"}, {"", false, ""},
	}
	for _, c := range cases {
		if got := stopReason(c.raw, c.calls); got != c.want {
			t.Errorf("stopReason(%q, %v) = %q, want %q", c.raw, c.calls, got, c.want)
		}
	}
}

// Decoder details the server-driven tests don't reach.

func TestOpenAIStreamVariants(t *testing.T) {
	// A server that sends whole tool calls without index and omits [DONE],
	// ending on a finish_reason.
	in := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":{"x":1}}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	resp, err := decodeOpenAIStream(strings.NewReader(in), 1<<16, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].Arguments != `{"x":1}` || resp.ToolCalls[1].Name != "g" || resp.StopReason != StopToolCalls {
		t.Errorf("resp = %+v", resp)
	}
	// Fragments without an id get one.
	in = `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{\"a\""}}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":2}"}}]}}]}` + "\n\n" +
		"data: [DONE]\n\n"
	resp, err = decodeOpenAIStream(strings.NewReader(in), 1<<16, func(string) {})
	if err != nil || len(resp.ToolCalls) != 1 || !strings.HasPrefix(resp.ToolCalls[0].ID, "call_") || resp.ToolCalls[0].Arguments != `{"a":2}` {
		t.Errorf("resp = %+v, err %v", resp, err)
	}
	// A tool call that never gets a name is a broken answer.
	in = `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]}}]}` + "\n\ndata: [DONE]\n\n"
	if _, err := decodeOpenAIStream(strings.NewReader(in), 1<<16, func(string) {}); !errors.Is(err, ErrBadResponse) {
		t.Errorf("nameless call: err = %v", err)
	}
}

func TestAnthropicStreamProtocolErrors(t *testing.T) {
	ev := func(s string) string { return "data: " + s + "\n\n" }
	start := ev(`{"type":"message_start","message":{"usage":{"input_tokens":1}}}`)
	cases := map[string]string{
		"delta before start":  start + ev(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`),
		"double start":        start + ev(`{"type":"content_block_start","index":0,"content_block":{"type":"text"}}`) + ev(`{"type":"content_block_start","index":0,"content_block":{"type":"text"}}`),
		"json into text":      start + ev(`{"type":"content_block_start","index":0,"content_block":{"type":"text"}}`) + ev(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`),
		"tool use without id": start + ev(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"f"}}`),
		"bad input json": start + ev(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f"}}`) +
			ev(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`) + ev(`{"type":"content_block_stop","index":0}`) + ev(`{"type":"message_stop"}`),
		"no message_stop": start + ev(`{"type":"content_block_start","index":0,"content_block":{"type":"text"}}`),
	}
	for name, in := range cases {
		if _, err := decodeAnthropicStream(strings.NewReader(in), 1<<16, func(string) {}); !errors.Is(err, ErrBadResponse) {
			t.Errorf("%s: err = %v, want ErrBadResponse", name, err)
		}
	}
	// Thinking blocks, unknown events and deltas are skipped.
	in := start + ev(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`) +
		ev(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`) +
		ev(`{"type":"content_block_stop","index":0}`) + ev(`{"type":"some_future_event"}`) +
		ev(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`) +
		ev(`{"type":"content_block_stop","index":1}`) +
		ev(`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`) + ev(`{"type":"message_stop"}`)
	resp, err := decodeAnthropicStream(strings.NewReader(in), 1<<16, func(string) {})
	if err != nil || resp.Text != "" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != "{}" || resp.Usage.OutputTokens != 9 {
		t.Errorf("resp = %+v, err = %v", resp, err)
	}
}

func TestStreamErrorEventKinds(t *testing.T) {
	for typ, kind := range map[string]error{
		"rate_limit_error": ErrRateLimited, "overloaded_error": ErrUnavailable, "api_error": ErrUnavailable,
		"authentication_error": ErrAuth, "invalid_request_error": ErrBadRequest, "": ErrUnavailable,
	} {
		in := `data: {"type":"error","error":{"type":"` + typ + `","message":"m"}}` + "\n\n"
		if _, err := decodeAnthropicStream(strings.NewReader(in), 1<<16, func(string) {}); !errors.Is(err, kind) {
			t.Errorf("%q: err = %v, want %v", typ, err, kind)
		}
	}
}

// Fuzz targets: every decoder of provider output must fail with a typed
// error, never panic, and a success must be well formed.

func checkDecoded(t *testing.T, resp Response, err error, emitted string) {
	t.Helper()
	if err != nil {
		var e *Error
		if !errors.As(err, &e) && !errors.Is(err, errEventTooLarge) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		return
	}
	if emitted != "" && emitted != resp.Text {
		t.Fatalf("emitted %q but the response text is %q", emitted, resp.Text)
	}
	if len(resp.ToolCalls) > maxToolCalls {
		t.Fatalf("%d tool calls", len(resp.ToolCalls))
	}
	for _, tc := range resp.ToolCalls {
		if tc.Name == "" || tc.ID == "" {
			t.Fatalf("tool call without name or id: %+v", tc)
		}
	}
}

var streamSeeds = []string{
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":1}}}\n\n" +
		"data: [DONE]\n\n",
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":2}}}\n\n" +
		"event: ping\ndata: {\"type\":\"ping\"}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"1}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":7}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
	"data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n",
	": ping\r\n\r\ndata: x\r\r",
}

var bodySeeds = []string{
	`{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9,"completion_tokens":3}}`,
	`{"choices":[{"message":{"content":[{"type":"text","text":"parts"}]},"finish_reason":"stop"}]}`,
	`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":1}}],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":2,"cache_creation_input_tokens":1}}`,
	`{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`,
	`{"error":"plain"}`,
	`null`,
}

func FuzzSSEReader(f *testing.F) {
	for _, s := range streamSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newSSEReader(bytes.NewReader(data), 512)
		for n := 0; ; n++ {
			ev, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, errEventTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(ev.Data) > 512 {
				t.Fatalf("event of %d bytes passed a 512-byte cap", len(ev.Data))
			}
			if n > len(data) {
				t.Fatal("more events than input bytes")
			}
		}
	})
}

func fuzzStream(f *testing.F, decode func(io.Reader, int, func(string)) (Response, error)) {
	for _, s := range streamSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var emitted strings.Builder
		resp, err := decode(bytes.NewReader(data), 4096, func(s string) { emitted.WriteString(s) })
		checkDecoded(t, resp, err, emitted.String())
	})
}

func FuzzOpenAIStream(f *testing.F)    { fuzzStream(f, decodeOpenAIStream) }
func FuzzAnthropicStream(f *testing.F) { fuzzStream(f, decodeAnthropicStream) }

func fuzzBody(f *testing.F, decode func([]byte) (Response, error)) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := decode(data)
		checkDecoded(t, resp, err, "")
	})
}

func FuzzOpenAIResponse(f *testing.F)    { fuzzBody(f, decodeOpenAIResponse) }
func FuzzAnthropicResponse(f *testing.F) { fuzzBody(f, decodeAnthropicResponse) }

func FuzzErrorBody(f *testing.F) {
	for _, s := range bodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, _ := errorBodyMessage(data)
		if len(msg) > maxMessage+len("…") || !utf8.ValidString(msg) {
			t.Fatalf("message of %d bytes, valid UTF-8 %v", len(msg), utf8.ValidString(msg))
		}
	})
}

func FuzzParseScript(f *testing.F) {
	for _, s := range []string{
		"- text: hi\n",
		"- text: a\n  tool_calls:\n    - name: f\n      arguments: {x: [1, {y: null}], z: 2024-01-01}\n- tool_calls:\n    - name: g\n      arguments: 'raw'\n",
		"- &a {text: x}\n- *a\n",
		"- tool_calls:\n    - name: f\n      arguments: {<<: {a: 1}}\n",
		"[]", "{}", "- {}\n", "---\n- text: a\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		replies, err := ParseScript("fuzz.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(replies) == 0 {
			t.Fatal("no replies and no error")
		}
		for i, r := range replies {
			if r.Text == "" && len(r.ToolCalls) == 0 {
				t.Fatalf("reply %d is empty", i)
			}
			for _, tc := range r.ToolCalls {
				if strings.TrimSpace(tc.Name) == "" {
					t.Fatalf("reply %d has a nameless tool call", i)
				}
			}
		}
	})
}
