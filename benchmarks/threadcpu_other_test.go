//go:build !linux

package benchmarks

// threadCPU is unavailable here; per-action CPU figures are left out.
func threadCPU() (int64, bool) { return 0, false }
