package store

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkRecordToolCall records what one tool call leaves in the
// database: the proposal, the verdict, the start and the result, four
// writes as the engine makes them.
func BenchmarkRecordToolCall(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "sessions.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.CreateSession(ctx, Session{ID: "s"}, Message{Role: RoleUser, Content: "go", MessageID: "m"}); err != nil {
		b.Fatal(err)
	}
	v := Verdict{Decision: "ALLOW", Tier: 0, Confidence: 1, RuleIDs: []string{"file-reads"}, Reasoning: "reads inside the workspace",
		ActionType: "read_file", ActionHash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", PolicyVersion: "p"}
	records := func(i int) []func(*Tx) error {
		k := CallKey{"s", "m", "c" + strconv.Itoa(i)}
		now := time.Now()
		return []func(*Tx) error{
			func(t *Tx) error {
				return t.RecordToolCall(ToolCall{CallKey: k, Tool: "read_file", Arguments: `{"path":"small.txt"}`, Proposed: now})
			},
			func(t *Tx) error { return t.RecordVerdict(k, v) },
			func(t *Tx) error { return t.RecordToolStarted(k, now) },
			func(t *Tx) error { return t.RecordToolCompleted(k, true, "line one\nline two\n", now) },
		}
	}
	n := 0
	// Each record its own transaction, as a synchronous recorder would write.
	b.Run("transaction-per-record", func(b *testing.B) {
		for range b.N {
			n++
			for _, rec := range records(n) {
				if err := s.Batch(ctx, rec)[0]; err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	// The four records in one transaction, as the engine's batching writer
	// commits them when they queue up together.
	b.Run("one-transaction", func(b *testing.B) {
		for range b.N {
			n++
			for _, err := range s.Batch(ctx, records(n)...) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
