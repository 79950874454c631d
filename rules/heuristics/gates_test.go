package heuristics

import (
	"strings"
	"testing"
)

// The gated tables (passingChecks, looseningChecks) skip a check when
// its marks are missing. A gate may only skip a check that would have
// said nothing: these tests run every check ungated and fail when one
// finds something its gate would have skipped.

// gatePairs returns substitutions to judge: those sed would make from
// every string of the corpus, and, for breadth, each corpus string with
// the next one, both ways round.
func gatePairs(tb testing.TB) [][2]string {
	texts := corpusStrings(tb)
	var pairs [][2]string
	for i, s := range texts {
		pairs = append(pairs, sedSubstitutions(s)...)
		if i > 0 {
			pairs = append(pairs, [2]string{texts[i-1], s}, [2]string{s, texts[i-1]})
		}
	}
	for i := range pairs {
		pairs[i] = [2]string{strings.ToLower(pairs[i][0]), strings.ToLower(pairs[i][1])}
	}
	return pairs
}

// gateMisses returns what a gated-off check of passingEdit or
// looseningEdit finds in p → r, or "".
func gateMisses(p, r string) string {
	pm, rm := passingMarks(p, r)
	for i, c := range passingChecks {
		if pm&c.pattern == c.pattern && rm&c.replacement == c.replacement {
			continue
		}
		if what := c.judge(p, r); what != "" {
			return "passingChecks[" + itoa(i) + "]: " + what
		}
	}
	e := loosening{p: p, r: r, fp: flatSetting(p), fr: flatSetting(r)}
	lp, lr, lf := e.marks()
	for i, c := range looseningChecks {
		if lp&c.pattern == c.pattern && lr&c.replacement == c.replacement && lf&c.flat == c.flat {
			continue
		}
		if what := c.judge(&e); what != "" {
			return "looseningChecks[" + itoa(i) + "]: " + what
		}
	}
	return ""
}

func TestGatesSkipOnlySilentChecks(t *testing.T) {
	pairs := gatePairs(t)
	if len(pairs) < 1000 {
		t.Fatalf("only %d substitutions to judge", len(pairs))
	}
	for _, pr := range pairs {
		if miss := gateMisses(pr[0], pr[1]); miss != "" {
			t.Errorf("%q → %q: gated off, yet %s", pr[0], pr[1], miss)
		}
	}
}

func FuzzGates(f *testing.F) {
	f.Add("if user.is_staff:", "if true:")
	f.Add("bcrypt.hash(pw, 12)", "bcrypt.hash(pw, 4)")
	f.Add(`key = os.environ["secret_key"]`, `key = os.environ.get("secret_key", "dev-key-123")`)
	f.Add("'auth', 'signed'", "'web'")
	f.Fuzz(func(t *testing.T, p, r string) {
		p, r = strings.ToLower(p), strings.ToLower(r)
		if miss := gateMisses(p, r); miss != "" {
			t.Errorf("%q → %q: gated off, yet %s", p, r, miss)
		}
	})
}
