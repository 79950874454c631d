package pipeline

import (
	"fmt"
	"strconv"
	"strings"
)

// Memory budget of a pipeline, for the Go runtime's soft memory limit
// (runtime/debug.SetMemoryLimit). The limit counts the Go heap, stacks and
// runtime structures, not the binary's own pages (about 20 MiB of a
// shieldd's resident memory).
const (
	// memoryBase covers the pipeline, policies, servers and requests in
	// flight.
	memoryBase = 24 << 20
	// memoryPerVerdict covers one cached verdict: about 117 live bytes
	// (its LRU slot and index cell; verdict shapes are shared), with room
	// for the garbage a busy cache makes between collections.
	memoryPerVerdict = 160
)

// MemoryLimit returns the soft memory limit in bytes for a shieldd whose
// cache holds up to cacheSize verdicts (0 or less: no cache), given the
// --memory-limit setting: "auto", "off", or a size as GOMEMLIMIT writes
// it ("48MiB", "1GiB", "50000000"). 0 means leave the runtime as it is:
// "off", or "auto" when GOMEMLIMIT is set (envSet), which then decides.
//
// The limit is soft: the garbage collector works harder as the heap
// nears it (at most half the CPU), and nothing fails if the heap needs
// more. "auto" keeps a shieldd with 100 000 cached verdicts under 64 MiB
// resident instead of letting the heap double between collections. That
// the collector then runs often is cheap because the full cache is
// nearly free to mark (verdictLRU: one array, few pointers); with a
// cache of one heap node per entry the same limit had the collector
// take over a quarter of the CPU (benchmarks/README.md).
func MemoryLimit(setting string, cacheSize int, envSet bool) (int64, error) {
	switch s := strings.TrimSpace(setting); s {
	case "off":
		return 0, nil
	case "", "auto":
		if envSet {
			return 0, nil
		}
		return memoryBase + int64(max(cacheSize, 0))*memoryPerVerdict, nil
	default:
		n, err := parseByteSize(s)
		if err != nil {
			return 0, fmt.Errorf("memory limit %q: %w (want auto, off, or a size such as 64MiB)", setting, err)
		}
		if n < 8<<20 {
			return 0, fmt.Errorf("memory limit %q: below 8MiB, the collector would run without pause", setting)
		}
		return n, nil
	}
}

// parseByteSize reads a byte count with an optional B, KiB, MiB, GiB or
// TiB suffix, as GOMEMLIMIT does.
func parseByteSize(s string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = rest, u.shift
			break
		}
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("not a number of bytes")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number of bytes")
	}
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("too large")
	}
	return n << shift, nil
}
