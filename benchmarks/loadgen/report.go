package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Targets for a `both` run (issue 15's, which tightened issue 2's 1.5 and
// 0.7; see README.md).
const (
	targetP50Ratio        = 1.2
	targetThroughputRatio = 0.85
	// targetStreamThroughputRatio is for stream-vs-unary: EvaluateStream
	// per second ÷ unary Evaluate per second.
	targetStreamThroughputRatio = 1.5
)

func writeJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// writeText prints the phases side by side, with ratios for `both`.
func writeText(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "shieldd %s: mode %s, concurrency %d over %d connection(s), %s measured after %s warm-up",
		rep.Addr, rep.Mode, rep.Concurrency, rep.Conns, rep.Duration, rep.Warmup)
	if rep.MaxRequests > 0 {
		fmt.Fprintf(w, ", at most %d requests", rep.MaxRequests)
	}
	if rep.Rounds > 1 {
		fmt.Fprintf(w, ", in %d alternating rounds", rep.Rounds)
	}
	if rep.Stream != nil {
		fmt.Fprintf(w, "; stream: the same requests in flight over %d EvaluateStream stream(s)", rep.Streams)
	}
	fmt.Fprintln(w)
	if rep.Evaluate != nil || rep.Stream != nil {
		fmt.Fprintf(w, "workload: %d actions from %s (%d error-expecting cases skipped); distinct %d, unique %t",
			rep.Workload.Actions, rep.Workload.Source, rep.Workload.Skipped, rep.Distinct, rep.Unique)
		if rep.Vary != "" {
			fmt.Fprintf(w, ", varied by %s", rep.Vary)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)

	var cols []*Phase
	for _, p := range []*Phase{rep.Health, rep.Evaluate, rep.Stream} {
		if p != nil {
			cols = append(cols, p)
		}
	}
	row := func(label string, cell func(*Phase) string, ratio string) {
		fmt.Fprintf(w, "%-14s", label)
		for _, p := range cols {
			fmt.Fprintf(w, "%16s", cell(p))
		}
		if ratio != "" {
			fmt.Fprintf(w, "   %s", ratio)
		}
		fmt.Fprintln(w)
	}
	var p50Ratio, tputRatio string
	if r := rep.Ratios; r != nil {
		p50Ratio = fmt.Sprintf("%.2f (target ≤ %g: %s)", r.P50, targetP50Ratio, verdict(r.P50 <= targetP50Ratio))
		tputRatio = fmt.Sprintf("%.2f (target ≥ %g: %s)", r.Throughput, targetThroughputRatio, verdict(r.Throughput >= targetThroughputRatio))
	}
	header := ""
	if rep.Ratios != nil {
		header = "evaluate / health"
	}
	if r := rep.StreamRatios; r != nil {
		header = "stream / evaluate"
		p50Ratio = fmt.Sprintf("%.2f", r.P50)
		tputRatio = fmt.Sprintf("%.2f (target ≥ %g: %s)", r.Throughput, targetStreamThroughputRatio, verdict(r.Throughput >= targetStreamThroughputRatio))
	}
	row("", func(p *Phase) string { return p.Mode }, header)
	row("requests", func(p *Phase) string { return fmt.Sprint(p.Requests) }, "")
	row("errors", func(p *Phase) string { return fmt.Sprint(p.Errors) }, "")
	row("per second", func(p *Phase) string { return fmt.Sprintf("%.0f", p.PerSecond) }, tputRatio)
	row("p50", func(p *Phase) string { return dur(p.LatencyNs.P50) }, p50Ratio)
	row("p90", func(p *Phase) string { return dur(p.LatencyNs.P90) }, "")
	row("p99", func(p *Phase) string { return dur(p.LatencyNs.P99) }, "")
	row("p99.9", func(p *Phase) string { return dur(p.LatencyNs.P999) }, "")
	row("max", func(p *Phase) string { return dur(p.LatencyNs.Max) }, "")
	row("mean", func(p *Phase) string { return dur(p.LatencyNs.Mean) }, "")
	if slices.ContainsFunc(cols, func(p *Phase) bool { return p.ServerCPUPerRequestUs > 0 }) {
		row("server CPU/req", func(p *Phase) string { return fmt.Sprintf("%.1fµs", p.ServerCPUPerRequestUs) }, "")
	}
	// optional is a row of a figure some phases may lack ("-"), shown
	// only when one has it; scale turns it into the printed number.
	optional := func(label string, get func(*Phase) *float64, scale float64, format string) {
		if !slices.ContainsFunc(cols, func(p *Phase) bool { return get(p) != nil }) {
			return
		}
		row(label, func(p *Phase) string {
			if v := get(p); v != nil {
				return fmt.Sprintf(format, scale**v)
			}
			return "-"
		}, "")
	}
	optional("GC CPU share", func(p *Phase) *float64 { return p.GCCPUShare }, 100, "%.1f%%")
	optional("GC ÷ server CPU", func(p *Phase) *float64 { return p.GCServerCPUShare }, 100, "%.1f%%")
	optional("GC cycles/s", func(p *Phase) *float64 { return p.GCCyclesPerSecond }, 1, "%.1f")
	fmt.Fprintln(w)

	for _, e := range []*Phase{rep.Evaluate, rep.Stream} {
		if e == nil {
			continue
		}
		fmt.Fprintf(w, "%s decisions: allow %d, block %d, escalate %d", e.Mode, e.Decisions["allow"], e.Decisions["block"], e.Decisions["escalate"])
		if e.Distinct > 0 {
			fmt.Fprintf(w, " (%d requests made distinct)", e.Distinct)
		}
		fmt.Fprintln(w)
	}
	for _, p := range cols {
		if p.Errors > 0 {
			fmt.Fprintf(w, "%s errors: %s\n", p.Mode, codes(p.ErrorsByCode))
		}
		if p.Warmup.Requests > 0 || p.Warmup.Errors > 0 {
			fmt.Fprintf(w, "%s warm-up: %d requests, %d errors", p.Mode, p.Warmup.Requests, p.Warmup.Errors)
			if p.Warmup.Errors > 0 {
				fmt.Fprintf(w, " (%s)", codes(p.Warmup.ErrorsByCode))
			}
			fmt.Fprintln(w)
		}
	}
	if s := rep.Server; s != nil {
		fmt.Fprintf(w, "server: cache entries %d, hits %d, misses %d; policy %s %s; version %s\n",
			s.CacheEntries, s.CacheHits, s.CacheMisses, s.PolicyName, s.PolicyVersion, s.Version)
	}
	if rep.ServerError != "" {
		fmt.Fprintf(w, "server status unavailable: %s\n", rep.ServerError)
	}
	if len(rep.Metrics) > 0 {
		fmt.Fprintln(w, "metrics after the run:")
		for _, k := range slices.Sorted(maps.Keys(rep.Metrics)) {
			v := rep.Metrics[k]
			if strings.HasSuffix(k, "_bytes") {
				fmt.Fprintf(w, "  %-44s %.1f MiB\n", k, v/(1<<20))
			} else {
				fmt.Fprintf(w, "  %-44s %.0f\n", k, v)
			}
		}
	}
	if rep.MetricsError != "" {
		fmt.Fprintf(w, "metrics unavailable: %s\n", rep.MetricsError)
	}
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func codes(m map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// dur formats nanoseconds with a unit that keeps three significant digits.
func dur(ns int64) string {
	switch {
	case ns < 1_000:
		return fmt.Sprintf("%dns", ns)
	case ns < 1_000_000:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	case ns < 1_000_000_000:
		return fmt.Sprintf("%.2fms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.2fs", float64(ns)/1e9)
}
