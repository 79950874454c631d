package benchmarks

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/llm/llmtest"
)

var (
	agentctlOnce sync.Once
	agentctlBin  string
	agentctlErr  error
)

// buildAgentctl builds the real binary once, without the race detector,
// as a user would run it.
func buildAgentctl(b *testing.B) string {
	agentctlOnce.Do(func() {
		dir, err := os.MkdirTemp("", "parapet-bench-")
		if err != nil {
			agentctlErr = err
			return
		}
		agentctlBin = filepath.Join(dir, "agentctl")
		out, err := exec.Command("go", "build", "-o", agentctlBin, "github.com/parapet-dev/parapet/agentctl").CombinedOutput()
		if err != nil {
			agentctlErr = err
			b.Logf("%s", out)
		}
	})
	if agentctlErr != nil {
		b.Fatalf("build agentctl: %v", agentctlErr)
	}
	return agentctlBin
}

// BenchmarkRunStartToFirstLLMRequest measures `agentctl run` from exec to
// the first request reaching the LLM: the engine with its in-process
// shield, the agent process spawned, sandboxed and canary-probed, the
// token handshake and InitialToolDefs. Target: p50 ≤ 300 ms.
func BenchmarkRunStartToFirstLLMRequest(b *testing.B) {
	bin := buildAgentctl(b)
	srv := llmtest.Start(b)
	srv.Handle(func(llmtest.Recorded) llmtest.Reply { return llmtest.Reply{Text: "ok"} })
	ws := b.TempDir()
	lat := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		arrived := srv.Arrived(srv.Count() + 1)
		cmd := exec.Command(bin, "run", "--workspace", ws, "--base-url", srv.OpenAIBaseURL(), "--model", "bench", "--on-escalate", "deny", "hello")
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		select {
		case rec := <-arrived:
			lat = append(lat, float64(rec.At.Sub(start).Nanoseconds()))
		case <-time.After(30 * time.Second):
			b.Fatal("no LLM request within 30 s")
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("agentctl run: %v", err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(rank(lat, 0.50)/1e6, "p50-ms")
	b.ReportMetric(rank(lat, 0.90)/1e6, "p90-ms")
}
