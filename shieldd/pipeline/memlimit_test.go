package pipeline

import (
	"strconv"
	"strings"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		setting string
		cache   int
		env     bool
		want    int64
	}{
		{"auto", 100_000, false, 24<<20 + 100_000*160},
		{"", 0, false, 24 << 20},
		{"auto", -1, false, 24 << 20},
		{"auto", 100_000, true, 0}, // GOMEMLIMIT decides
		{"off", 100_000, false, 0},
		{"64MiB", 100_000, true, 64 << 20},
		{"1GiB", 0, false, 1 << 30},
		{"50000000", 0, false, 50_000_000},
		{"9000KiB", 0, false, 9000 << 10},
		{"16777216B", 0, false, 16 << 20},
	} {
		got, err := MemoryLimit(c.setting, c.cache, c.env)
		if err != nil || got != c.want {
			t.Errorf("MemoryLimit(%q, %d, %v) = %d, %v; want %d", c.setting, c.cache, c.env, got, err, c.want)
		}
	}
	for _, bad := range []string{"lots", "-5MiB", "64mb", "1MiB", "MiB", "99999999TiB", "1.5GiB", " 12 MiB"} {
		if _, err := MemoryLimit(bad, 0, false); err == nil || !strings.Contains(err.Error(), "memory limit") {
			t.Errorf("MemoryLimit(%q) = %v; want an error naming the setting", bad, err)
		}
	}
}

// FuzzMemoryLimit: any setting either fails with an error or gives a
// limit of at least 8 MiB (or 0 for off/auto with GOMEMLIMIT set); sizes
// read back as written.
func FuzzMemoryLimit(f *testing.F) {
	for _, s := range []string{"auto", "off", "64MiB", "1GiB", "123", "9223372036854775807", "8TiB", "0B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := MemoryLimit(s, 1000, true)
		if err != nil {
			return
		}
		if n != 0 && n < 8<<20 {
			t.Fatalf("%q: limit %d below 8 MiB", s, n)
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && n != v {
			t.Fatalf("%q: read %d", s, n)
		}
	})
}
