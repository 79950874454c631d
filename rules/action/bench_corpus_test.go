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
