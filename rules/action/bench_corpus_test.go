package action_test

import (
	"testing"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/corpus"
	"github.com/parapet-dev/parapet/rules/policytest"
)

// BenchmarkCanonicalizeCorpus canonicalises every labelled corpus request
// once per iteration; ns/op and allocs/op are per corpus pass divided by
// the number of cases (reported as ns/case).
func BenchmarkCanonicalizeCorpus(b *testing.B) {
	cases, err := policytest.LoadFS(corpus.FS, ".")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range cases {
			_, _ = action.Canonicalize(cases[i].Request, action.Limits{})
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cases)), "ns/case")
}

func BenchmarkCanonicalizeGitStatus(b *testing.B) {
	req := action.Request{Type: "execute_command", Payload: []byte(`{"command":"git status"}`),
		Caller: action.Caller{WorkspaceRoot: "/home/dev/project", Home: "/home/dev"}}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = action.Canonicalize(req, action.Limits{})
	}
}

// CommandPath must answer exactly as a fresh ResolvePath for every word
// of every corpus command, reused resolution or not.
func TestCommandPathMatchesResolvePath(t *testing.T) {
	cases, err := policytest.LoadFS(corpus.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, c := range cases {
		a, err := action.Canonicalize(c.Request, action.Limits{})
		if err != nil || a.Script == nil {
			continue
		}
		for _, cmd := range a.Script.Commands {
			words := append([]string{cmd.Name}, cmd.Args...)
			for _, r := range cmd.Redirects {
				words = append(words, r.Target)
			}
			for _, w := range words {
				want, _ := action.ResolvePath(w, a.Caller.WorkspaceRoot, a.Caller.Home)
				want.Raw = w
				if got := a.CommandPath(w); got != want {
					t.Errorf("%s: CommandPath(%q) = %+v, ResolvePath gives %+v", c.Name, w, got, want)
				}
				checked++
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d words checked", checked)
	}
}
