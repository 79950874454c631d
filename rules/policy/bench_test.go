package policy

import (
	"testing"

	"github.com/parapet-dev/parapet/rules/action"
)

// typicalActions is a mix of what coding agents propose all day.
var typicalActions = []struct{ typ, args string }{
	{"read_file", `{"path":"src/server/handler.go"}`},
	{"write_file", `{"path":"src/server/handler.go","content":"package server\n"}`},
	{"edit_file", `{"path":"README.md","old_str":"a","new_str":"b"}`},
	{"grep", `{"pattern":"TODO","path":"src"}`},
	{"bash", `{"command":"go test ./..."}`},
	{"bash", `{"command":"git status"}`},
	{"bash", `{"command":"git push origin feature/login"}`},
	{"bash", `{"command":"npm run build && npm test"}`},
	{"bash", `{"command":"rm -rf node_modules"}`},
	{"http_request", `{"method":"GET","url":"https://api.github.com/repos/x/y"}`},
	{"web_fetch", `{"url":"https://go.dev/doc/effective_go"}`},
	{"read_file", `{"path":"/etc/hosts"}`},
}

func benchActions(b *testing.B) []*action.Action {
	out := make([]*action.Action, len(typicalActions))
	for i, c := range typicalActions {
		out[i] = act(b, c.typ, c.args)
	}
	return out
}

// BenchmarkEvaluate is Tier 0 alone on pre-canonicalised actions.
func BenchmarkEvaluate(b *testing.B) {
	p, err := Embedded("default")
	if err != nil {
		b.Fatal(err)
	}
	actions := benchActions(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_ = p.Evaluate(actions[i%len(actions)])
	}
}

// BenchmarkEvaluateEach reports the cost per action type.
func BenchmarkEvaluateEach(b *testing.B) {
	p, _ := Embedded("default")
	for i, a := range benchActions(b) {
		b.Run(typicalActions[i].typ+"/"+typicalActions[i].args[:min(24, len(typicalActions[i].args))], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = p.Evaluate(a)
			}
		})
	}
}

// BenchmarkEvaluateCEL hits a `when:` rule (many-recipient check).
func BenchmarkEvaluateCEL(b *testing.B) {
	p, _ := Embedded("default")
	a := act(b, "send_email", `{"to":["a@x.io","b@x.io"],"cc":"c@x.io","subject":"s","body":"hello"}`)
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Evaluate(a)
	}
}

// BenchmarkCanonicalizeAndEvaluate is the uncached Tier 0 path.
func BenchmarkCanonicalizeAndEvaluate(b *testing.B) {
	p, _ := Embedded("default")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := typicalActions[i%len(typicalActions)]
		a, err := action.Canonicalize(action.Request{Type: c.typ, Payload: []byte(c.args), Caller: testCaller}, action.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		_ = p.Evaluate(a)
	}
}

func BenchmarkParseDefault(b *testing.B) {
	src, _ := EmbeddedSource("default")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("default.yaml", src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalizeOnly is the baseline for BenchmarkCanonicalizeAndEvaluate.
func BenchmarkCanonicalizeOnly(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := typicalActions[i%len(typicalActions)]
		if _, err := action.Canonicalize(action.Request{Type: c.typ, Payload: []byte(c.args), Caller: testCaller}, action.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
