package evaluator

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

// maxAnswerBytes bounds the model's answer we read; a verdict is tiny.
const maxAnswerBytes = 16 << 10

// maxReasonBytes bounds the model's reason shown to users.
const maxReasonBytes = 400

// answer is the model's verdict, validated.
type answer struct {
	decision   pb.VerdictDecision
	confidence float64
	reason     string
}

// errNoCanary: the answer is well formed but does not carry this call's
// canary, so it was not written by a model following our instructions.
var errNoCanary = errors.New("the answer does not carry this call's canary")

// parseAnswer reads the model's answer: exactly one JSON object
// {"decision","confidence","reason","canary"}, optionally inside one
// Markdown code fence (models add them even when told not to). Duplicate
// names, trailing text, invalid UTF-8, unknown decisions and confidences
// outside [0, 1] are errors: an answer we cannot read exactly is not
// trusted. Unknown members are ignored. A readable answer whose canary is
// not exactly canary returns errNoCanary.
func parseAnswer(text, canary string) (answer, error) {
	if len(text) > maxAnswerBytes {
		return answer{}, fmt.Errorf("the answer is %d bytes, more than %d", len(text), maxAnswerBytes)
	}
	body := unfence(strings.TrimSpace(text))
	if body == "" {
		return answer{}, errors.New("the answer is empty")
	}
	var raw struct {
		Decision   *string  `json:"decision"`
		Confidence *float64 `json:"confidence"`
		Reason     *string  `json:"reason"`
		Canary     *string  `json:"canary"`
	}
	// go-json-experiment rejects duplicate names, invalid UTF-8 and
	// trailing data, and matches names case-sensitively: a second
	// "decision" can't override the first.
	if err := json.Unmarshal([]byte(body), &raw); err != nil {
		return answer{}, fmt.Errorf("the answer is not one JSON object of the required shape: %v", err)
	}
	var a answer
	switch {
	case raw.Decision == nil:
		return answer{}, errors.New(`the answer has no "decision"`)
	case raw.Confidence == nil:
		return answer{}, errors.New(`the answer has no "confidence"`)
	case raw.Reason == nil:
		return answer{}, errors.New(`the answer has no "reason"`)
	}
	d, ok := pb.ParseDecision(*raw.Decision)
	if !ok {
		return answer{}, fmt.Errorf("the answer's decision %q is not ALLOW, BLOCK or ESCALATE", clip(*raw.Decision, 32))
	}
	a.decision = d
	if c := *raw.Confidence; math.IsNaN(c) || c < 0 || c > 1 {
		return answer{}, fmt.Errorf("the answer's confidence %v is not between 0 and 1", c)
	}
	a.confidence = *raw.Confidence
	// The canary is checked last so that a malformed answer is reported
	// as malformed, and compared in constant time out of habit.
	if raw.Canary == nil || subtle.ConstantTimeCompare([]byte(*raw.Canary), []byte(canary)) != 1 {
		return answer{}, errNoCanary
	}
	a.reason = cleanReason(*raw.Reason)
	return a, nil
}

// unfence strips one surrounding Markdown code fence (``` or ```json).
func unfence(s string) string {
	if !strings.HasPrefix(s, "```") || !strings.HasSuffix(s, "```") || len(s) < 6 {
		return s
	}
	inner := s[3 : len(s)-3]
	nl := strings.IndexByte(inner, '\n')
	if nl < 0 {
		return s
	}
	if lang := strings.TrimSpace(inner[:nl]); lang != "" && !strings.EqualFold(lang, "json") {
		return s
	}
	return strings.TrimSpace(inner[nl+1:])
}

// cleanReason makes the model's reason safe to show on one line: control
// and format characters (newlines, bidi overrides, zero-width) become
// spaces, runs of spaces collapse, and it is cut to maxReasonBytes.
func cleanReason(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return clip(b.String(), maxReasonBytes)
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:cutPoint(s, n)] + "…"
}
