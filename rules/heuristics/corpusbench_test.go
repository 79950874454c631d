package heuristics

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/rules/corpus"
	"github.com/parapet-dev/parapet/rules/policytest"
)

// corpusAction is one labelled corpus case, canonicalised once.
type corpusAction struct {
	name   string
	expect string
	act    *action.Action
}

// corpusActions canonicalises every corpus case the way the Shield does,
// skipping the cases Canonicalize rejects (Tier 1 never sees them).
func corpusActions(tb testing.TB) []corpusAction {
	tb.Helper()
	cases, err := policytest.LoadFS(corpus.FS, ".")
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]corpusAction, 0, len(cases))
	for _, c := range cases {
		act, err := action.Canonicalize(c.Request, action.Limits{})
		if err != nil {
			continue
		}
		out = append(out, corpusAction{name: c.Pos() + " " + c.Name, expect: c.Expect, act: act})
	}
	return out
}

// corpusStrings is every string value of the corpus actions, the texts
// the string scans run over.
func corpusStrings(tb testing.TB) []string {
	var texts []string
	for _, c := range corpusActions(tb) {
		for _, s := range c.act.Strings {
			texts = append(texts, s.Value)
		}
	}
	return texts
}

func isBenignExpect(e string) bool { return e == policytest.ExpectAllow }

// BenchmarkAnalyzeCorpus times Analyze round-robin over the labelled
// corpus (every case canonicalised once, outside the timer).
func BenchmarkAnalyzeCorpus(b *testing.B) {
	all := corpusActions(b)
	var benign, malicious []*action.Action
	var acts []*action.Action
	for _, c := range all {
		acts = append(acts, c.act)
		if isBenignExpect(c.expect) {
			benign = append(benign, c.act)
		} else {
			malicious = append(malicious, c.act)
		}
	}
	b.Run("all", func(b *testing.B) { benchmarkSet(b, acts) })
	b.Run("benign", func(b *testing.B) { benchmarkSet(b, benign) })
	b.Run("malicious", func(b *testing.B) { benchmarkSet(b, malicious) })
}

// TestAnalyzeCorpusSlowest is a profiling aid, not a check: with -v it logs
// the mean, p50 and p90 of Analyze over the corpus actions (benign and
// malicious apart) and the 20 slowest actions. It asserts nothing about
// time; under -short it does not run.
func TestAnalyzeCorpusSlowest(t *testing.T) {
	if testing.Short() || !testing.Verbose() {
		t.Skip("profiling aid: run with -v")
	}
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	type timed struct {
		c  corpusAction
		ns float64
	}
	all := corpusActions(t)
	const reps = 200
	res := make([]timed, len(all))
	for i, c := range all {
		a.Analyze(c.act) // warm up
		// Best of 5 batches: the least disturbed by other load on the machine.
		best := time.Duration(1 << 62)
		for range 5 {
			start := time.Now()
			for range reps {
				a.Analyze(c.act)
			}
			best = min(best, time.Since(start))
		}
		res[i] = timed{c, float64(best.Nanoseconds()) / reps}
	}
	summary := func(label string, keep func(corpusAction) bool) {
		var ns []float64
		sum := 0.0
		for _, r := range res {
			if keep(r.c) {
				ns = append(ns, r.ns)
				sum += r.ns
			}
		}
		if len(ns) == 0 {
			return
		}
		slices.Sort(ns)
		t.Logf("%-9s n=%3d mean %7.0f ns  p50 %7.0f ns  p90 %7.0f ns  max %7.0f ns", label, len(ns),
			sum/float64(len(ns)), ns[len(ns)/2], ns[len(ns)*9/10], ns[len(ns)-1])
	}
	summary("all", func(corpusAction) bool { return true })
	summary("benign", func(c corpusAction) bool { return isBenignExpect(c.expect) })
	summary("malicious", func(c corpusAction) bool { return !isBenignExpect(c.expect) })
	slices.SortFunc(res, func(x, y timed) int { return cmp.Compare(y.ns, x.ns) })
	for _, r := range res[:min(20, len(res))] {
		t.Logf("%8.0f ns  %s (%s)", r.ns, r.c.name, r.c.expect)
	}
}
