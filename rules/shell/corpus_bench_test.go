package shell_test

import (
	"encoding/json"
	"testing"

	"github.com/parapet-dev/parapet/rules/corpus"
	"github.com/parapet-dev/parapet/rules/policytest"
	"github.com/parapet-dev/parapet/rules/shell"
)

// BenchmarkParseCorpusLines parses the command line of every corpus case
// that has one, split by whether the fast path takes it: lines/op is how
// many lines each side holds, ns/line what one costs. The full parse
// costs several times the fast path, so its few lines can hold a large
// share of the parsing time; the two figures together say what
// widening the fast path would save.
func BenchmarkParseCorpusLines(b *testing.B) {
	cases, err := policytest.LoadFS(corpus.FS, ".")
	if err != nil {
		b.Fatal(err)
	}
	var fast, full []string
	for i := range cases {
		var args struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(cases[i].Request.Payload, &args) != nil || args.Command == "" {
			continue
		}
		if shell.TakesFastPath(args.Command) {
			fast = append(fast, args.Command)
		} else {
			full = append(full, args.Command)
		}
	}
	if len(fast) == 0 || len(full) == 0 {
		b.Fatalf("the corpus gave %d fast-path and %d full-parse lines; both kinds are needed", len(fast), len(full))
	}
	for _, side := range []struct {
		name  string
		lines []string
	}{{"fast-path", fast}, {"full-parse", full}} {
		b.Run(side.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, src := range side.lines {
					shell.Parse(src).Release()
				}
			}
			b.ReportMetric(float64(len(side.lines)), "lines/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(side.lines)), "ns/line")
		})
	}
}
