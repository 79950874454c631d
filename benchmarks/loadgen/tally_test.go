package main

import (
	"strings"
	"testing"
)

func TestPercentilesNearestRank(t *testing.T) {
	lat := make([]int64, 1000)
	for i := range lat {
		lat[len(lat)-1-i] = int64(i + 1) // 1..1000, reversed
	}
	got := percentiles(lat)
	want := Latency{P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000, Mean: 500}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if (percentiles(nil) != Latency{}) {
		t.Error("empty input must give zero percentiles")
	}
	if got := percentiles([]int64{7}); got.P50 != 7 || got.P999 != 7 || got.Max != 7 {
		t.Errorf("single sample: %+v", got)
	}
}

func TestMergeKeepsEveryFailure(t *testing.T) {
	a := &tally{requests: 3, lat: []int64{1, 2}, decisions: [4]int64{0, 2, 0, 0}}
	a.fail("Unavailable")
	b := &tally{requests: 2, lat: []int64{3}, decisions: [4]int64{0, 0, 1, 0}, distinct: 2}
	b.fail("Unavailable")
	req, lat, fails, dec, distinct := merge([]*tally{a, b})
	if req != 5 || len(lat) != 3 || fails["Unavailable"] != 2 || dec != [4]int64{0, 2, 1, 0} || distinct != 2 {
		t.Errorf("merge = %d %v %v %v %d", req, lat, fails, dec, distinct)
	}
}

func TestParseExposition(t *testing.T) {
	in := `# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 2.5165824e+07
go_memstats_heap_inuse_bytes 1.048576e+06
go_goroutines 12
parapet_shield_cache_hits_total{otel_scope_name="parapet/shieldd"} 40
parapet_shield_cache_hits_total{otel_scope_name="other",x="a}b"} 2
parapet_shield_cache_misses_total 7 1700000000000
`
	got, err := parseExposition(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"process_resident_memory_bytes":     25165824,
		"go_memstats_heap_inuse_bytes":      1048576,
		"parapet_shield_cache_hits_total":   42,
		"parapet_shield_cache_misses_total": 7,
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if _, err := parseExposition(strings.NewReader("go_goroutines 3\n")); err == nil {
		t.Error("no error when nothing useful was exposed")
	}
}
