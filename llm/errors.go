package llm

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kinds of failure. Test with errors.Is; every error Complete returns for a
// provider problem is an *Error matching exactly one of these (ErrTimeout
// also matches ErrUnavailable).
var (
	// ErrRateLimited: HTTP 429 or a rate-limit error event, still failing
	// after the retries.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnavailable: 5xx, a network failure, a timeout, or an overloaded
	// provider, still failing after the retries.
	ErrUnavailable = errors.New("unavailable")
	// ErrTimeout: the call ran out of time (Config.Timeout or the caller's
	// deadline). It is a kind of ErrUnavailable.
	ErrTimeout = errors.New("timed out")
	// ErrAuth: HTTP 401 or 403. Never retried.
	ErrAuth = errors.New("authentication failed")
	// ErrBadRequest: the request was refused as invalid (other 4xx), or was
	// malformed before it was sent. Never retried.
	ErrBadRequest = errors.New("bad request")
	// ErrBadResponse: the answer could not be read: unparseable JSON, a
	// stream cut off before its end, a body over the size cap.
	ErrBadResponse = errors.New("bad response")
	// ErrScriptExhausted: the scripted provider has no replies left.
	ErrScriptExhausted = errors.New("script exhausted")
)

// Error is a failed call.
type Error struct {
	Kind     error  // one of the Err* kinds above
	Provider string // "openai", "anthropic", "scripted"
	Status   int    // HTTP status, 0 when there was none
	// Message is the provider's own explanation, truncated, or ours.
	Message string
	// RequestID is the provider's id for the failed request, for support.
	RequestID string
	// RetryAfter is what the provider asked us to wait, when it said.
	RetryAfter time.Duration
	// Attempts is how many HTTP requests were made.
	Attempts int
	Err      error // underlying cause, if any

	noRetry bool // a kind that is usually retried, but not this time
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm %s: %v", e.Provider, e.Kind)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil && (e.Message == "" || !strings.Contains(e.Message, e.Err.Error())) {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request id %s]", e.RequestID)
	}
	return b.String()
}

// Is reports whether target is this error's kind; a timeout is also a kind
// of unavailability.
func (e *Error) Is(target error) bool {
	return target == e.Kind || (e.Kind == ErrTimeout && target == ErrUnavailable)
}

func (e *Error) Unwrap() error { return e.Err }

// retryable says whether another attempt might succeed.
func (e *Error) retryable() bool {
	return !e.noRetry && (e.Kind == ErrRateLimited || e.Kind == ErrUnavailable || e.Kind == ErrTimeout)
}

// maxMessage bounds the provider text quoted in an error: enough to act on,
// not enough to flood a log with an HTML error page.
const maxMessage = 512

func truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary so the message stays valid UTF-8.
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}

// kindForStatus maps an HTTP status to a kind.
func kindForStatus(status int) error {
	switch {
	case status == 401 || status == 403:
		return ErrAuth
	case status == 429:
		return ErrRateLimited
	case status == 408 || status >= 500:
		return ErrUnavailable
	case status >= 400:
		return ErrBadRequest
	default:
		// A 1xx or 3xx that reached us is not an answer we can read.
		return ErrBadResponse
	}
}

// kindForErrorType maps the error "type" both providers put in error bodies
// and stream error events (Anthropic's names, OpenAI's where they differ).
func kindForErrorType(t string) error {
	switch t {
	case "rate_limit_error", "rate_limit_exceeded", "insufficient_quota":
		return ErrRateLimited
	case "authentication_error", "permission_error", "invalid_api_key":
		return ErrAuth
	case "invalid_request_error", "not_found_error", "request_too_large":
		return ErrBadRequest
	default:
		// overloaded_error, api_error, server_error and anything unknown: the
		// provider failed, not our request.
		return ErrUnavailable
	}
}
