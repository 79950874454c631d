package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/engine"
)

// BenchmarkToolCallRecorded is one tool call's round trip as the agent
// sees it (read_file over real gRPC, shield cache hit), in a session kept
// in memory and in one kept in the store, where the call's four events
// (planned, verdict, started, completed) are written before fan-out. The
// difference between the two p50s is what recording costs a tool call.
func BenchmarkToolCallRecorded(b *testing.B) {
	for _, stored := range []bool{false, true} {
		name := "memory"
		if stored {
			name = "stored"
		}
		b.Run(name, func(b *testing.B) {
			var h *harness
			if stored {
				h = storedHarness(b, openStore(b, filepath.Join(b.TempDir(), "sessions.db")), nil)
			} else {
				h = newHarness(b, nil)
			}
			if err := os.WriteFile(filepath.Join(h.ws, "small.txt"), []byte("line one\nline two\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			stream, _ := h.open(b, ready("atlas:"+h.eng.NewAgentToken(), sandboxedJSON))
			if d, err := stream.Recv(); err != nil || d.GetInitialToolDefs() == nil {
				b.Fatalf("no InitialToolDefs: %v %v", d, err)
			}
			if _, err := h.eng.WaitAgent(context.Background()); err != nil {
				b.Fatal(err)
			}
			tr, err := h.eng.Submit(context.Background(), engine.Message{Content: "read it, many times"})
			if err != nil {
				b.Fatal(err)
			}
			go func() {
				for range tr.Events {
				}
			}()
			if d, err := stream.Recv(); err != nil || d.GetProcess() == nil {
				b.Fatalf("no ProcessRequest: %v %v", d, err)
			}
			call := func(id string) {
				if err := stream.Send(proposal(tr.SessionID, tr.MessageID, id, "read_file", `{"path":"small.txt"}`)); err != nil {
					b.Fatal(err)
				}
				d, err := stream.Recv()
				if err != nil || d.GetToolResult().GetIsError() {
					b.Fatalf("tool call: %v %v", d, err)
				}
			}
			call("warmup")
			rt := make([]time.Duration, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				call("c" + strconv.Itoa(i))
				rt[i] = time.Since(start)
			}
			b.StopTimer()
			slices.Sort(rt)
			b.ReportMetric(float64(percentile(rt, 50).Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(percentile(rt, 90).Nanoseconds()), "p90-ns")
			if stored && h.eng.StoreErrors() != 0 {
				b.Fatalf("%d store errors", h.eng.StoreErrors())
			}
		})
	}
}
