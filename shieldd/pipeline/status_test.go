package pipeline

import (
	"testing"
	"time"
)

// Today's counts start over at UTC midnight.
func TestDailyCountsRollOver(t *testing.T) {
	now := time.Date(2026, 11, 21, 23, 59, 0, 0, time.UTC)
	p := newTestPipeline(t, Config{Now: func() time.Time { return now }, CacheSize: -1})
	eval(t, p, input("read_file", `{"path":"src/a.go"}`))
	eval(t, p, input("write_file", `{"path":"/etc/passwd"}`))   // deny-etc-write
	eval(t, p, input("send_email", `{"to":["a@example.com"]}`)) // verify-email
	st := p.Status()
	if st.EvaluationsToday != 3 || st.BlocksToday != 1 || st.EscalationsToday != 1 {
		t.Fatalf("before midnight: %d evaluations, %d blocks, %d escalations; want 3, 1, 1", st.EvaluationsToday, st.BlocksToday, st.EscalationsToday)
	}
	now = now.Add(2 * time.Minute)
	if st := p.Status(); st.EvaluationsToday != 0 || st.BlocksToday != 0 {
		t.Fatalf("after midnight, before any verdict: %+v", st)
	}
	eval(t, p, input("write_file", `{"path":"/etc/hosts"}`))
	st = p.Status()
	if st.EvaluationsToday != 1 || st.BlocksToday != 1 || st.EscalationsToday != 0 {
		t.Fatalf("after midnight: %d evaluations, %d blocks, %d escalations; want 1, 1, 0", st.EvaluationsToday, st.BlocksToday, st.EscalationsToday)
	}
}
