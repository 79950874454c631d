package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// caller is the HTTP machinery both HTTP providers share: timeout,
// retries, size caps and the mapping of failures to error kinds.
type caller struct {
	name string
	cfg  Config // resolved
}

func newCaller(cfg Config) *caller { return &caller{name: cfg.Provider, cfg: cfg} }

// stream says whether this call streams (Config.Stream, else whether
// anyone is listening for text).
func (c *caller) stream(onText func(string)) bool {
	if c.cfg.Stream != nil {
		return *c.cfg.Stream
	}
	return onText != nil
}

// maxEvent caps one streamed event; a chunk is small, but a provider may
// send a whole tool call's arguments in one.
func (c *caller) maxEvent() int { return int(min(c.cfg.MaxResponseBytes, 4<<20)) }

// readFunc reads a 2xx answer from body (already size-capped). It calls
// emit with text as it arrives.
type readFunc func(resp *http.Response, body io.Reader, emit func(string)) (Response, error)

// errCallTimeout is the cause recorded when Config.Timeout expires.
var errCallTimeout = errors.New("call timeout")

// call POSTs body to url and reads the answer, retrying what may succeed
// on another attempt as long as no text has reached onText.
func (c *caller) call(ctx context.Context, url string, header http.Header, body []byte, read readFunc, onText func(string)) (Response, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.cfg.Timeout, errCallTimeout)
	defer cancel()
	delivered := false
	emit := func(s string) {
		if s == "" {
			return
		}
		delivered = true
		if onText != nil {
			onText(s)
		}
	}
	for attempt := 1; ; attempt++ {
		resp, reqID, err := c.attempt(ctx, url, header, body, read, emit)
		if err == nil {
			return resp, nil
		}
		e, ok := c.classify(ctx, err)
		if !ok {
			return Response{}, c.cancelled(ctx)
		}
		e.Attempts = attempt
		e.RequestID = truncate(reqID, 128)
		if !e.retryable() || delivered || attempt >= c.cfg.MaxAttempts || ctx.Err() != nil {
			return Response{}, e
		}
		wait, ok := c.backoff(attempt, e)
		if !ok {
			return Response{}, e
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return Response{}, e // waiting would only end in a timeout
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			if errors.Is(ctx.Err(), context.Canceled) {
				return Response{}, c.cancelled(ctx)
			}
			return Response{}, e
		}
	}
}

// cancelled is the error for a call the caller cancelled: not a provider
// failure, so not an *Error.
func (c *caller) cancelled(ctx context.Context) error {
	return fmt.Errorf("llm %s: call cancelled: %w", c.name, ctx.Err())
}

// attempt makes one request; reqID is the provider's id for it, if any.
func (c *caller) attempt(ctx context.Context, url string, header http.Header, body []byte, read readFunc, emit func(string)) (_ Response, reqID string, _ error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Response{}, "", &Error{Kind: ErrBadRequest, Message: "building the HTTP request", Err: err}
	}
	req.Header = header.Clone()
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return Response{}, "", err
	}
	defer resp.Body.Close()
	reqID = resp.Header.Get("request-id")
	if reqID == "" {
		reqID = resp.Header.Get("x-request-id")
	}
	if resp.StatusCode/100 != 2 {
		return Response{}, reqID, statusError(resp)
	}
	out, err := read(resp, &cappedReader{r: resp.Body, left: c.cfg.MaxResponseBytes, limit: c.cfg.MaxResponseBytes}, emit)
	return out, reqID, err
}

// classify turns any failure of an attempt into an *Error. ok is false
// when the caller cancelled: that is not a provider failure.
func (c *caller) classify(ctx context.Context, err error) (*Error, bool) {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, false
		}
		msg := "the caller's deadline passed"
		if context.Cause(ctx) == errCallTimeout {
			msg = fmt.Sprintf("no complete answer within %v", c.cfg.Timeout)
		}
		return &Error{Kind: ErrTimeout, Provider: c.name, Message: msg, Err: ctx.Err()}, true
	}
	var e *Error
	if errors.As(err, &e) {
		e.Provider = c.name
		return e, true
	}
	var tooLarge *tooLargeError
	var ne net.Error
	switch {
	case errors.As(err, &tooLarge), errors.Is(err, errEventTooLarge):
		return &Error{Kind: ErrBadResponse, Provider: c.name, Message: "response exceeds the size cap", Err: err}, true
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Kind: ErrBadResponse, Provider: c.name, Message: "response cut off", Err: err}, true
	case errors.As(err, &ne) && ne.Timeout():
		return &Error{Kind: ErrTimeout, Provider: c.name, Message: "network timeout", Err: err}, true
	default:
		// Refused or reset connections, DNS failures, TLS errors: the
		// provider can't be reached right now.
		return &Error{Kind: ErrUnavailable, Provider: c.name, Message: "request failed", Err: err}, true
	}
}

// backoff is how long to wait before attempt+1, and false when the
// provider asked for a wait longer than we are willing to honour.
func (c *caller) backoff(attempt int, e *Error) (time.Duration, bool) {
	if e.RetryAfter > 0 {
		return e.RetryAfter, e.RetryAfter <= c.cfg.MaxRetryWait
	}
	d := c.cfg.RetryBaseDelay << min(attempt-1, 3)
	// Jitter in [d/2, d) spreads the retries of many agents hit at once.
	return d/2 + rand.N(d/2+1), true
}

// header is what every request carries; providers add their auth.
func (c *caller) header(stream bool) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "parapet-llm/1")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	return h
}

// maxErrorBody bounds what is read of a non-2xx body.
const maxErrorBody = 64 << 10

// statusError builds the error for a non-2xx answer, quoting the
// provider's message.
func statusError(resp *http.Response) *Error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	msg, typ := errorBodyMessage(raw)
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	e := &Error{Kind: kindForStatus(resp.StatusCode), Status: resp.StatusCode, Message: msg}
	if e.Kind == ErrRateLimited && typ == "insufficient_quota" {
		e.noRetry = true // out of credit: waiting will not help
	}
	e.RetryAfter = retryAfter(resp.Header, time.Now())
	return e
}

// errorBodyMessage extracts the message and type from the error bodies
// providers send: {"error":{"message","type","code"}} (OpenAI, Anthropic
// under {"type":"error"}), {"error":"text"} (Ollama), {"message":"text"},
// or plain text.
func errorBodyMessage(raw []byte) (msg, typ string) {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) == nil {
		if e, ok := errorObject(body.Error); ok && e.Message != "" {
			return truncate(e.Message, maxMessage), e.kindName()
		}
		if body.Message != "" {
			return truncate(body.Message, maxMessage), ""
		}
	}
	if !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("?"))
	}
	return truncate(string(raw), maxMessage), ""
}

// apiError is the error object of both providers.
type apiError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // OpenAI: a string, some servers: a number
}

// kindName is the most specific name the error gives for its kind.
func (a apiError) kindName() string {
	var code string
	if json.Unmarshal(a.Code, &code) == nil && code != "" {
		switch code {
		case "insufficient_quota", "rate_limit_exceeded", "invalid_api_key":
			return code
		}
	}
	return a.Type
}

// asError turns an error object found in a stream or a 2xx body into an
// *Error.
func (a apiError) asError() *Error {
	msg := a.Message
	if msg == "" {
		msg = "error event without a message"
	}
	return &Error{Kind: kindForErrorType(a.kindName()), Message: "provider error: " + truncate(msg, maxMessage)}
}

// retryAfter reads how long the provider asked us to wait: OpenAI's
// retry-after-ms, else Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e6 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// tooLargeError is a body past MaxResponseBytes.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("response body larger than %d bytes", e.limit)
}

// cappedReader fails, rather than silently truncating like
// io.LimitReader, once a body goes past the cap: a cut answer must not
// be mistaken for a whole one.
type cappedReader struct {
	r     io.Reader
	left  int64
	limit int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// Only a byte beyond the cap proves the body too large.
		var probe [1]byte
		n, err := c.r.Read(probe[:])
		if n > 0 {
			return 0, &tooLargeError{c.limit}
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// badResponse is an ErrBadResponse with a message.
func badResponse(format string, args ...any) *Error {
	return &Error{Kind: ErrBadResponse, Message: fmt.Sprintf(format, args...)}
}

// badRequest is an ErrBadRequest for a request we refuse to send.
func badRequest(provider, format string, args ...any) *Error {
	return &Error{Kind: ErrBadRequest, Provider: provider, Message: fmt.Sprintf(format, args...)}
}

// isJSON reports whether a response is JSON rather than an event stream:
// some OpenAI-compatible servers ignore stream:true.
func isJSON(resp *http.Response) bool {
	return strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "application/json")
}
