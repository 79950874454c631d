package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// scrapedPrefixes are the exposition names kept from /metrics: resident
// memory and Go heap figures, the garbage collector's CPU estimates and
// cycle count, and the decision cache counters (whatever the
// OpenTelemetry exporter's suffixes are).
var scrapedPrefixes = []string{
	"process_resident_memory_bytes",
	"go_memstats_heap_alloc_bytes",
	"go_memstats_heap_inuse_bytes",
	"go_memstats_sys_bytes",
	"parapet_shield_cache_",
	"go_cpu_classes_",
	"go_gc_duration_seconds_count",
}

// scrape reads Prometheus text exposition from url and returns the kept
// series, summed over their labels.
func scrape(ctx context.Context, url string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// Plain text: the parser below does not read protobuf or OpenMetrics.
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return parseExposition(io.LimitReader(resp.Body, 16<<20))
}

func parseExposition(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest := line, ""
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			name, rest = line[:i], line[i:]
		}
		if !kept(name) {
			continue
		}
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			rest = rest[end+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("metric %s: bad value %q", name, fields[0])
		}
		out[name] += v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no memory or cache series in the exposition")
	}
	return out, nil
}

func kept(name string) bool {
	for _, p := range scrapedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
