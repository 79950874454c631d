package openparallaxv1

import "testing"

func TestDecisionVocabulary(t *testing.T) {
	allow, block, escalate := VerdictDecision_VERDICT_DECISION_ALLOW, VerdictDecision_VERDICT_DECISION_BLOCK, VerdictDecision_VERDICT_DECISION_ESCALATE
	unset, unknown := VerdictDecision_VERDICT_DECISION_UNSPECIFIED, VerdictDecision(42)
	cases := []struct {
		d           VerdictDecision
		effective   VerdictDecision
		decided     bool
		rank        int
		word, label string
		severity    Severity
	}{
		{allow, allow, true, 0, "allow", "ALLOW", Severity_SEVERITY_LOW},
		{escalate, escalate, true, 1, "escalate", "ESCALATE", Severity_SEVERITY_MEDIUM},
		{block, block, true, 2, "block", "BLOCK", Severity_SEVERITY_HIGH},
		// Never read an unset or unknown decision as anything but BLOCK,
		// yet show that it was unset.
		{unset, block, false, 2, "block", "UNSPECIFIED", Severity_SEVERITY_HIGH},
		{unknown, block, false, 2, "block", "UNSPECIFIED", Severity_SEVERITY_HIGH},
	}
	for _, c := range cases {
		if got := c.d.Effective(); got != c.effective {
			t.Errorf("%v.Effective() = %v, want %v", c.d, got, c.effective)
		}
		if got := c.d.Decided(); got != c.decided {
			t.Errorf("%v.Decided() = %v", c.d, got)
		}
		if got := c.d.Rank(); got != c.rank {
			t.Errorf("%v.Rank() = %d, want %d", c.d, got, c.rank)
		}
		if got := c.d.Word(); got != c.word {
			t.Errorf("%v.Word() = %q, want %q", c.d, got, c.word)
		}
		if got := c.d.Label(); got != c.label {
			t.Errorf("%v.Label() = %q, want %q", c.d, got, c.label)
		}
		if got := c.d.Severity(); got != c.severity {
			t.Errorf("%v.Severity() = %v, want %v", c.d, got, c.severity)
		}
		if c.decided {
			if got, ok := ParseDecision(" " + c.label + "\n"); !ok || got != c.d {
				t.Errorf("ParseDecision(%q) = %v, %v", c.label, got, ok)
			}
		}
	}
	for _, bad := range []string{"", "unspecified", "allowed", "ok", "yes"} {
		if d, ok := ParseDecision(bad); ok {
			t.Errorf("ParseDecision(%q) = %v, want no decision", bad, d)
		}
	}
	if got := allow.Stricter(escalate); got != escalate {
		t.Errorf("ALLOW.Stricter(ESCALATE) = %v", got)
	}
	if got := escalate.Stricter(unset); got != block {
		t.Errorf("ESCALATE.Stricter(UNSPECIFIED) = %v, want BLOCK", got)
	}
	if got := block.Stricter(allow); got != block {
		t.Errorf("BLOCK.Stricter(ALLOW) = %v", got)
	}
	if got := Severity_SEVERITY_CRITICAL.Label(); got != "CRITICAL" {
		t.Errorf("CRITICAL label = %q", got)
	}
}

func TestParseOutcome(t *testing.T) {
	for in, want := range map[string]string{
		"approved": OutcomeApproved, "Denied": OutcomeDenied, "timed_out": OutcomeTimeout, "TIMEOUT": OutcomeTimeout,
		"canceled": OutcomeCancelled, " cancelled ": OutcomeCancelled, "rate_limited": OutcomeRateLimited,
	} {
		if got, ok := ParseOutcome(in); !ok || got != want {
			t.Errorf("ParseOutcome(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "allow", "approve", "yes"} {
		if got, ok := ParseOutcome(bad); ok {
			t.Errorf("ParseOutcome(%q) = %q, want rejected", bad, got)
		}
	}
}
