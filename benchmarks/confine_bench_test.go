package benchmarks

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/engine/tools"
	"github.com/parapet-dev/parapet/sandbox"
)

// BenchmarkExecuteCommandConfinement runs execute_command of `true`
// through the tools registry, confined (the agentctl binary as the
// executor's helper: new PID and mount namespaces, /proc, masks, Landlock,
// seccomp, then exec bash) and unconfined, alternating one call of each
// so both see the same machine state. Target: p50 difference ≤ 5 ms.
//
// pause-0 runs the calls back to back: the helper started ahead for the
// next call is still starting (a Go binary's start-up) while the next
// call wants it. pause-100ms leaves, untimed, the time a model takes to
// propose the next call, as in a run.
func BenchmarkExecuteCommandConfinement(b *testing.B) {
	for _, pause := range []time.Duration{0, 100 * time.Millisecond} {
		b.Run("pause-"+pause.String(), func(b *testing.B) { benchConfinement(b, pause) })
	}
}

func benchConfinement(b *testing.B, pause time.Duration) {
	if _, err := sandbox.Supported(); err != nil {
		b.Skipf("no sandbox: %v", err)
	}
	x, err := sandbox.NewExecutor(buildAgentctl(b))
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	ws := b.TempDir()
	confined, err := tools.New(tools.Options{Workspace: ws, Executor: x})
	if err != nil {
		b.Fatal(err)
	}
	defer confined.Close()
	unconfined, err := tools.New(tools.Options{Workspace: ws, AllowUnconfined: true})
	if err != nil {
		b.Fatal(err)
	}
	defer unconfined.Close()
	args := []byte(`{"command":"true"}`)
	ctx := context.Background()
	run := func(r *tools.Registry) float64 {
		start := time.Now()
		res := r.Execute(ctx, "execute_command", args)
		d := time.Since(start)
		if res.IsError {
			b.Fatalf("true failed: %s", res.Output)
		}
		return float64(d.Nanoseconds())
	}
	run(confined) // the helper binary into the page cache, and a helper started ahead
	var c, u []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if pause > 0 {
			b.StopTimer()
			time.Sleep(pause)
			b.StartTimer()
		}
		c = append(c, run(confined))
		u = append(u, run(unconfined))
	}
	b.StopTimer()
	slices.Sort(c)
	slices.Sort(u)
	b.ReportMetric(rank(c, 0.50)/1e6, "confined-p50-ms")
	b.ReportMetric(rank(u, 0.50)/1e6, "unconfined-p50-ms")
	b.ReportMetric((rank(c, 0.50)-rank(u, 0.50))/1e6, "diff-p50-ms")
	b.ReportMetric(rank(c, 0.90)/1e6, "confined-p90-ms")
}
