//go:build linux

package benchmarks

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkSyscall is the cost of the cheapest system call on this host.
// Where the kernel isolates page tables without PCID, each call also
// flushes the process's TLB, which the code that runs next pays for.
func BenchmarkSyscall(b *testing.B) {
	for b.Loop() {
		syscall.Getppid()
	}
}

// BenchmarkPipelineMissAfterSyscall decides the uncached stream of
// BenchmarkPipelineMiss with system calls made between decisions, as a
// server makes them between requests: decision-ns/op above the calls=0
// case is what a call's side effects (a flushed TLB, evicted caches)
// cost the decision after it.
func BenchmarkPipelineMissAfterSyscall(b *testing.B) {
	m := newMissStream(b, "syscall", false)
	for _, calls := range []int{0, 1, 4} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) {
			m.refill(b)
			var spent time.Duration
			for i := 0; b.Loop(); i++ {
				in := m.input(b, i)
				for range calls {
					syscall.Getppid()
				}
				start := time.Now()
				m.evaluate(b, in)
				spent += time.Since(start)
			}
			b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "decision-ns/op")
		})
	}
}
