package benchmarks

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time (user + system) this process has used. On a
// shared machine wall-clock ns/op also counts time spent waiting for a
// core; CPU time per op does not, so the two together show how much of a
// figure is contention.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since start as "cpu-ns/op". It
// includes the garbage collector's work on other threads.
func reportCPU(b *testing.B, start time.Duration) {
	if b.N > 0 {
		b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
	}
}
