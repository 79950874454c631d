package benchmarks

import (
	"testing"

	"github.com/parapet-dev/parapet/rules/action"
)

// BenchmarkCanonicalize is the first stage of every uncached decision:
// validation, JSON decoding, shell parsing, path and URL extraction and
// the action hash, over the corpus round-robin.
func BenchmarkCanonicalize(b *testing.B) {
	wl := loadWorkload(b)
	b.ReportAllocs()
	cpu := processCPU(b)
	for i := 0; b.Loop(); i++ {
		it := wl.Items[i%len(wl.Items)]
		if _, err := action.Canonicalize(it.Request, action.Limits{}); err != nil {
			b.Fatalf("%s: %v", it.Name, err)
		}
	}
	reportCPU(b, cpu)
}
