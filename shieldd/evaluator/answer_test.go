package evaluator

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
)

const testCanary = "K3Z7QW2MDJ5XHNB4RTY6PLVC2A"

func TestParseAnswer(t *testing.T) {
	ok := []struct {
		text       string
		decision   pb.VerdictDecision
		confidence float64
		reason     string
	}{
		{`{"decision":"ALLOW","confidence":0.9,"reason":"reads a project file","canary":"` + testCanary + `"}`, allow, 0.9, "reads a project file"},
		{` {"canary":"` + testCanary + `","reason":"x","confidence":1,"decision":"block"} `, block, 1, "x"},
		{"```json\n{\"decision\":\"Escalate\",\"confidence\":0,\"reason\":\"\",\"canary\":\"" + testCanary + "\"}\n```", escalate, 0, ""},
		{"```\n{\"decision\":\"ALLOW\",\"confidence\":0.5,\"reason\":\"a\\nb\\u202e c\",\"canary\":\"" + testCanary + "\",\"extra\":[1]}\n```", allow, 0.5, "a b c"},
	}
	for _, c := range ok {
		a, err := parseAnswer(c.text, testCanary)
		if err != nil || a.decision != c.decision || a.confidence != c.confidence || a.reason != c.reason {
			t.Errorf("%s: got %+v, %v", c.text, a, err)
		}
	}
	bad := []string{
		``, `null`, `[]`, `"ALLOW"`, `ALLOW`,
		`{"decision":"ALLOW","confidence":0.9,"reason":"x"`,
		`{"decision":"ALLOW","confidence":0.9,"reason":"x","canary":"` + testCanary + `"} trailing`,
		`{"decision":"ALLOW","confidence":0.9,"reason":"x","canary":"` + testCanary + `","decision":"BLOCK"}`,
		`{"Decision":"ALLOW","confidence":0.9,"reason":"x","canary":"` + testCanary + `"}`,
		`{"decision":"YES","confidence":0.9,"reason":"x","canary":"` + testCanary + `"}`,
		`{"decision":"ALLOW","confidence":-0.1,"reason":"x","canary":"` + testCanary + `"}`,
		`{"decision":"ALLOW","confidence":"high","reason":"x","canary":"` + testCanary + `"}`,
		`{"decision":"ALLOW","reason":"x","canary":"` + testCanary + `"}`,
		`{"decision":"ALLOW","confidence":1,"canary":"` + testCanary + `"}`,
		"{\"decision\":\"ALLOW\",\"confidence\":1,\"reason\":\"\xff\",\"canary\":\"" + testCanary + "\"}",
		"```python\n{\"decision\":\"ALLOW\",\"confidence\":1,\"reason\":\"x\",\"canary\":\"" + testCanary + "\"}\n```",
		`{"decision":"ALLOW","confidence":1,"reason":"` + strings.Repeat("x", maxAnswerBytes) + `","canary":"` + testCanary + `"}`,
	}
	for _, text := range bad {
		if a, err := parseAnswer(text, testCanary); err == nil || errors.Is(err, errNoCanary) {
			t.Errorf("%.80q: got %+v, %v; want an unreadable-answer error", text, a, err)
		}
	}
	for _, text := range []string{
		`{"decision":"ALLOW","confidence":0.9,"reason":"x"}`,
		`{"decision":"ALLOW","confidence":0.9,"reason":"x","canary":""}`,
		`{"decision":"ALLOW","confidence":0.9,"reason":"x","canary":"` + strings.ToLower(testCanary) + `"}`,
		`{"decision":"ALLOW","confidence":0.9,"reason":"x","canary":" ` + testCanary + `"}`,
		`{"decision":"ALLOW","confidence":0.9,"reason":"x","canary":null}`,
	} {
		if _, err := parseAnswer(text, testCanary); !errors.Is(err, errNoCanary) {
			t.Errorf("%s: got %v, want errNoCanary", text, err)
		}
	}
}

// FuzzParseAnswer: the model's answer is untrusted. Whatever it is,
// parsing never panics, and an accepted answer is a valid decision with a
// confidence in [0, 1], carries the canary, and has a one-line, bounded,
// valid UTF-8 reason.
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		`{"decision":"ALLOW","confidence":0.9,"reason":"ok","canary":"` + testCanary + `"}`,
		"```json\n{\"decision\":\"block\",\"confidence\":1,\"reason\":\"r\\u0000\",\"canary\":\"" + testCanary + "\"}\n```",
		`{"decision":"ESCALATE","confidence":1e-9,"reason":"` + strings.Repeat("é", 300) + `","canary":"` + testCanary + `"}`,
		`{"decision":"ALLOW","decision":"BLOCK"}`, "```", "``````", "```json\n```", `{"confidence":NaN}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a, err := parseAnswer(text, testCanary)
		if err != nil {
			return
		}
		if a.decision != allow && a.decision != block && a.decision != escalate {
			t.Fatalf("decision %v", a.decision)
		}
		if !(a.confidence >= 0 && a.confidence <= 1) {
			t.Fatalf("confidence %v", a.confidence)
		}
		if !strings.Contains(text, testCanary) {
			t.Fatal("accepted without the canary")
		}
		if !utf8.ValidString(a.reason) || len(a.reason) > maxReasonBytes+len("…") {
			t.Fatalf("reason %q", a.reason)
		}
		for _, r := range a.reason {
			if r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Fatalf("reason %q holds %U", a.reason, r)
			}
		}
	})
}

func TestTruncationKeepsUTF8(t *testing.T) {
	s := strings.Repeat("é", 10) // 2 bytes each
	if got := cut(s, 5); !utf8.ValidString(got) || !strings.HasPrefix(got, "éé …[truncated by Parapet: 4 of 20 bytes shown]") {
		t.Fatalf("cut: %q", got)
	}
	if got := quote("a\nb\"c\xff<>", 100); got != `"a\nb\"c`+"\uFFFD"+`<>"` {
		t.Fatalf("quote: %s", got)
	}
	if got := quote(strings.Repeat("x", 20), 8); got != `"xxxxxxxx" …[truncated by Parapet: 8 of 20 bytes shown]` {
		t.Fatalf("quote cut: %s", got)
	}
}
