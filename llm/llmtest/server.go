// Package llmtest is a real HTTP server that stands in for an LLM in
// tests: it speaks the OpenAI chat completions and the Anthropic Messages
// wire formats, streamed and not, answers from a queue of scripted
// replies (or a handler), and records every request it gets.
//
// It checks requests the way the real APIs do (required fields, roles,
// tool results matching tool calls, headers) and refuses malformed ones
// with the API's own 400 shape, so a client bug fails a test here rather
// than in production.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/llm"
)

// Reply is one scripted answer.
type Reply struct {
	// Text is the answer's text; with an error Status it is the error
	// message.
	Text string
	// ToolCalls are the calls the model makes; Arguments must be a JSON
	// object (or empty). Empty IDs become call_<n> (OpenAI) or toolu_<n>
	// (Anthropic), numbered across the server's life.
	ToolCalls []llm.ToolCall
	// Usage is reported as given (InputTokens counting cached tokens too,
	// as in package llm); zero means an estimate from the sizes involved.
	Usage llm.Usage
	// StopReason overrides the wire stop reason, e.g. "length" (OpenAI)
	// or "max_tokens" (Anthropic).
	StopReason string
	// Status is the HTTP status; 0 means 200. A non-2xx status sends an
	// error body in the API's own format.
	Status int
	// RetryAfter, if set, is sent as the Retry-After header.
	RetryAfter string
	// Delay is waited before anything is sent.
	Delay time.Duration
	// ChunkDelay is waited between streamed events.
	ChunkDelay time.Duration
	// Raw is sent verbatim as the body instead of a built answer (with
	// Status, or 200): malformed JSON, a hand-written stream. A Raw that
	// starts like an event stream is sent as text/event-stream.
	Raw string
	// Truncate ends the answer early: a stream stops halfway, before its
	// final events; a JSON body is cut in half.
	Truncate bool
}

// Recorded is one request as the server saw it, decoded from either wire
// format into package llm's terms.
type Recorded struct {
	N      int // 1 for the first request
	At     time.Time
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// API is "openai" or "anthropic"; empty for an unknown path.
	API         string
	Model       string
	Stream      bool
	System      string
	MaxTokens   int
	Temperature *float64
	// JSONMode is set when an OpenAI request asked for a json_object answer.
	JSONMode bool
	// IncludeUsage is set when an OpenAI stream asked for a usage chunk.
	IncludeUsage bool
	Messages     []llm.Message
	Tools        []llm.Tool
	// Invalid says why the server refused the request; "" when it was
	// accepted.
	Invalid string
}

// Prompt is all the text the model would read: system prompt, messages
// and tool results. Handlers search it, e.g. for a canary to echo.
func (r Recorded) Prompt() string {
	var b strings.Builder
	b.WriteString(r.System)
	for _, m := range r.Messages {
		b.WriteString("\n")
		b.WriteString(m.Content)
	}
	return b.String()
}

// Server is the stand-in LLM. The zero value is not usable; use New or
// Start.
type Server struct {
	// URL is the server's root, http://127.0.0.1:<port>.
	URL string

	srv     *httptest.Server
	mu      sync.Mutex
	queue   []Reply
	handler func(Recorded) Reply
	reqs    []Recorded
	waiters map[int][]chan Recorded
	ids     atomic.Int64
}

// New starts a server on 127.0.0.1 with a free port. Close it when done.
func New() *Server {
	s := &Server{waiters: map[int][]chan Recorded{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Start is New, closed when the test ends.
func Start(tb testing.TB) *Server {
	s := New()
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server, ending answers still being sent.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// OpenAIBaseURL is the base URL an OpenAI client is given (…/v1).
func (s *Server) OpenAIBaseURL() string { return s.URL + "/v1" }

// AnthropicBaseURL is the base URL an Anthropic client is given.
func (s *Server) AnthropicBaseURL() string { return s.URL }

// Config is an llm.Config for provider ("openai" or "anthropic") pointed
// at this server, with model "test-model" and a dummy key; tests adjust
// the rest.
func (s *Server) Config(provider string) llm.Config {
	base := s.OpenAIBaseURL()
	if provider == llm.ProviderAnthropic {
		base = s.AnthropicBaseURL()
	}
	return llm.Config{Provider: provider, BaseURL: base, Model: "test-model", APIKey: "test-key"}
}

// Enqueue adds replies, answered in order, one per accepted request.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Handle sets the function that answers accepted requests once the queue
// is empty. It runs on the request's goroutine, concurrently for
// concurrent requests.
func (s *Server) Handle(f func(Recorded) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

// Pending is the number of queued replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Count is the number of requests received, refused ones included.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.reqs...)
}

// Arrived returns a channel that receives the nth request (from 1) once
// it has arrived: at once if it already has.
func (s *Server) Arrived(n int) <-chan Recorded {
	ch := make(chan Recorded, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= 1 && len(s.reqs) >= n {
		ch <- s.reqs[n-1]
		return ch
	}
	s.waiters[n] = append(s.waiters[n], ch)
	return ch
}

// record stores a request and wakes whoever waits for it.
func (s *Server) record(r *Recorded) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.N = len(s.reqs) + 1
	s.reqs = append(s.reqs, *r)
	for _, ch := range s.waiters[r.N] {
		ch <- *r
	}
	delete(s.waiters, r.N)
}

// next is the reply to an accepted request.
func (s *Server) next(r Recorded) Reply {
	s.mu.Lock()
	if len(s.queue) > 0 {
		rep := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return rep
	}
	h := s.handler
	s.mu.Unlock()
	if h != nil {
		return h(r)
	}
	return Reply{Status: http.StatusInternalServerError, Text: fmt.Sprintf("llmtest: no reply queued for request %d", r.N)}
}

// maxRequestBody bounds what the server reads of a request.
const maxRequestBody = 32 << 20

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rec := Recorded{At: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()}
	var api wireAPI
	switch r.URL.Path {
	case "/v1/chat/completions", "/chat/completions":
		rec.API, api = llm.ProviderOpenAI, openAIWire{}
	case "/v1/messages":
		rec.API, api = llm.ProviderAnthropic, anthropicWire{}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	rec.Body = body
	status := 0
	switch {
	case api == nil:
		status, rec.Invalid = http.StatusNotFound, fmt.Sprintf("llmtest: no API at %s %s", r.Method, r.URL.Path)
	case r.Method != http.MethodPost:
		status, rec.Invalid = http.StatusMethodNotAllowed, fmt.Sprintf("llmtest: %s wants POST, got %s", r.URL.Path, r.Method)
	case err != nil:
		status, rec.Invalid = http.StatusRequestEntityTooLarge, "llmtest: reading the request: "+err.Error()
	default:
		status, rec.Invalid = api.decode(r.Header, body, &rec)
	}
	s.record(&rec)
	if rec.Invalid != "" {
		if api == nil {
			api = openAIWire{}
		}
		api.writeError(w, status, rec.Invalid)
		return
	}
	rep := s.next(rec)
	if !wait(r, rep.Delay) {
		return
	}
	if rep.RetryAfter != "" {
		w.Header().Set("Retry-After", rep.RetryAfter)
	}
	w.Header().Set("request-id", fmt.Sprintf("req_%d", rec.N))
	switch {
	case rep.Raw != "":
		ct := "application/json"
		if t := strings.TrimLeft(rep.Raw, " \r\n"); strings.HasPrefix(t, "data:") || strings.HasPrefix(t, "event:") || strings.HasPrefix(t, ":") {
			ct = "text/event-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(orDefault(rep.Status, http.StatusOK))
		io.WriteString(w, rep.Raw)
	case rep.Status != 0 && rep.Status/100 != 2:
		msg := rep.Text
		if msg == "" {
			msg = http.StatusText(rep.Status)
		}
		api.writeError(w, rep.Status, msg)
	default:
		a := s.answer(rec, rep)
		if err := a.check(); err != nil {
			api.writeError(w, http.StatusInternalServerError, "llmtest: bad Reply: "+err.Error())
			return
		}
		if rec.Stream {
			events := api.events(rec, a)
			if rep.Truncate {
				events = half(events)
			}
			writeStream(w, r, rep, events)
		} else {
			b, _ := json.Marshal(api.body(rec, a))
			if rep.Truncate {
				b = b[:len(b)/2]
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(orDefault(rep.Status, http.StatusOK))
			w.Write(b)
		}
	}
}

// answer is a Reply made concrete: ids assigned, usage estimated.
type answer struct {
	id    int64
	text  string
	calls []llm.ToolCall
	usage llm.Usage
	stop  string // wire override, "" for the API's natural reason
}

func (a answer) check() error {
	for i, tc := range a.calls {
		if tc.Name == "" {
			return fmt.Errorf("tool call %d has no name", i)
		}
		if !isObjectJSON(json.RawMessage(tc.Arguments)) {
			return fmt.Errorf("tool call %d (%s): arguments %q are not a JSON object", i, tc.Name, tc.Arguments)
		}
	}
	return nil
}

func (s *Server) answer(rec Recorded, rep Reply) answer {
	a := answer{id: s.ids.Add(1), text: rep.Text, usage: rep.Usage, stop: rep.StopReason}
	prefix := "call_"
	if rec.API == llm.ProviderAnthropic {
		prefix = "toolu_"
	}
	out := len(rep.Text)
	for _, tc := range rep.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("%s%d", prefix, s.ids.Add(1))
		}
		if strings.TrimSpace(tc.Arguments) == "" {
			tc.Arguments = "{}"
		}
		out += len(tc.Name) + len(tc.Arguments)
		a.calls = append(a.calls, tc)
	}
	if a.usage == (llm.Usage{}) {
		a.usage = llm.Usage{InputTokens: (len(rec.Body) + 3) / 4, OutputTokens: (out+3)/4 + 1}
	}
	return a
}

// wireAPI is what differs between the two formats.
type wireAPI interface {
	// decode fills rec from the request, or returns the status and reason
	// to refuse it with.
	decode(h http.Header, body []byte, rec *Recorded) (int, string)
	writeError(w http.ResponseWriter, status int, msg string)
	body(rec Recorded, a answer) any
	// events is the stream, each element one SSE event already framed.
	events(rec Recorded, a answer) []string
}

// wait sleeps d unless the client goes away first.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

func writeStream(w http.ResponseWriter, r *http.Request, rep Reply, events []string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(orDefault(rep.Status, http.StatusOK))
	f, _ := w.(http.Flusher)
	for i, ev := range events {
		if i > 0 && !wait(r, rep.ChunkDelay) {
			return
		}
		if _, err := io.WriteString(w, ev); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
	}
}

// sse frames one event.
func sse(name string, v any) string {
	b, _ := json.Marshal(v)
	if name == "" {
		return "data: " + string(b) + "\n\n"
	}
	return "event: " + name + "\ndata: " + string(b) + "\n\n"
}

// pieces splits s on rune boundaries into pieces of at most max runes,
// and into at least two when it has two runes, so clients must reassemble.
func pieces(s string, limit int) []string {
	rs := []rune(s)
	size := min(max(1, (len(rs)+1)/2), max(limit, 1))
	var out []string
	for len(rs) > 0 {
		n := min(size, len(rs))
		out = append(out, string(rs[:n]))
		rs = rs[n:]
	}
	return out
}

// orDefault is v, or def when v is zero.
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// half keeps the first half of a stream's events (at least one), cutting
// it before its end.
func half(events []string) []string {
	return events[:max(1, len(events)/2)]
}
