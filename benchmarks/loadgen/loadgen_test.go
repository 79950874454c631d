package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parapet-dev/parapet/benchmarks/internal/testserver"
	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
	"github.com/parapet-dev/parapet/rules/action"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// These tests check that the load generator's books balance against a
// real shieldd; they never assert on timings.

func loadWorkload(t *testing.T) *workload.Workload {
	t.Helper()
	wl, err := workload.Load("")
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

func baseConfig(addr string) Config {
	return Config{Addr: addr, Concurrency: 4, Conns: 1, Duration: time.Second, Warmup: 100 * time.Millisecond}
}

// checkPhase asserts the invariants of a clean run.
func checkPhase(t *testing.T, p *Phase, mode string) {
	t.Helper()
	if p == nil {
		t.Fatalf("%s: no result", mode)
	}
	if p.Mode != mode {
		t.Errorf("phase mode %q, want %q", p.Mode, mode)
	}
	if p.Requests <= 0 {
		t.Errorf("%s: %d requests, want some", mode, p.Requests)
	}
	if p.Errors != 0 || p.Warmup.Errors != 0 {
		t.Errorf("%s: %d errors (%v), %d in warm-up (%v)", mode, p.Errors, p.ErrorsByCode, p.Warmup.Errors, p.Warmup.ErrorsByCode)
	}
	if p.Errors != sum(p.ErrorsByCode) {
		t.Errorf("%s: errors %d but by code %v", mode, p.Errors, p.ErrorsByCode)
	}
	if p.PerSecond <= 0 || p.LatencyNs.P50 <= 0 {
		t.Errorf("%s: no throughput or latency recorded: %+v", mode, p)
	}
	l := p.LatencyNs
	if !(l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Errorf("%s: percentiles out of order: %+v", mode, l)
	}
	if mode == ModeEvaluate || mode == ModeStream {
		if got := sum(p.Decisions); got != p.Requests-p.Errors {
			t.Errorf("decisions %v sum to %d, want %d (requests %d - errors %d)", p.Decisions, got, p.Requests-p.Errors, p.Requests, p.Errors)
		}
	} else if p.Decisions != nil {
		t.Errorf("%s: decisions %v", mode, p.Decisions)
	}
}

func TestRunEachMode(t *testing.T) {
	srv := testserver.Start(t, pipeline.Config{})
	wl := loadWorkload(t)
	for _, mode := range []string{ModeEvaluate, ModeHealth, ModeBoth, ModeStream, ModeStreamVsUnary} {
		t.Run(mode, func(t *testing.T) {
			cfg := baseConfig(srv.GRPCAddr)
			cfg.Mode = mode
			switch mode {
			case ModeBoth:
				cfg.Conns = 2 // workers spread over several connections
			case ModeStream:
				cfg.Conns, cfg.Streams = 2, 3 // three streams over two connections
			}
			rep, err := Run(t.Context(), cfg, wl)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Errors() != 0 {
				t.Errorf("%d errors", rep.Errors())
			}
			switch mode {
			case ModeEvaluate:
				checkPhase(t, rep.Evaluate, ModeEvaluate)
				if rep.Health != nil || rep.Ratios != nil {
					t.Errorf("evaluate run has health results")
				}
			case ModeHealth:
				checkPhase(t, rep.Health, ModeHealth)
				if rep.Evaluate != nil || rep.Server != nil {
					t.Errorf("health run has evaluate results")
				}
			case ModeBoth:
				checkPhase(t, rep.Health, ModeHealth)
				checkPhase(t, rep.Evaluate, ModeEvaluate)
				if rep.Ratios == nil || rep.Ratios.P50 <= 0 || rep.Ratios.Throughput <= 0 {
					t.Errorf("ratios %+v", rep.Ratios)
				}
			case ModeStream:
				checkPhase(t, rep.Stream, ModeStream)
				if rep.Evaluate != nil || rep.Health != nil || rep.StreamRatios != nil || rep.Streams != 3 || rep.Server == nil {
					t.Errorf("stream run: %+v", rep)
				}
			case ModeStreamVsUnary:
				checkPhase(t, rep.Evaluate, ModeEvaluate)
				checkPhase(t, rep.Stream, ModeStream)
				if r := rep.StreamRatios; r == nil || r.P50 <= 0 || r.Throughput <= 0 || rep.Ratios != nil {
					t.Errorf("stream ratios %+v, ratios %+v", r, rep.Ratios)
				}
			}
			var text, js bytes.Buffer
			writeText(&text, rep)
			if !strings.Contains(text.String(), "p99.9") {
				t.Errorf("text report lacks percentiles:\n%s", text.String())
			}
			if err := writeJSON(&js, rep); err != nil {
				t.Fatal(err)
			}
			var back Report
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatalf("JSON report does not read back: %v", err)
			}
		})
	}
}

func TestRunMaxRequestsIsExact(t *testing.T) {
	srv := testserver.Start(t, pipeline.Config{})
	for _, mode := range []string{ModeEvaluate, ModeStream} {
		cfg := baseConfig(srv.GRPCAddr)
		cfg.Mode, cfg.Warmup, cfg.Duration, cfg.MaxRequests = mode, 0, time.Minute, 137
		rep, err := Run(t.Context(), cfg, loadWorkload(t))
		if err != nil {
			t.Fatal(err)
		}
		p := map[string]*Phase{ModeEvaluate: rep.Evaluate, ModeStream: rep.Stream}[mode]
		checkPhase(t, p, mode)
		if p.Requests != 137 {
			t.Errorf("%s: %d requests, want exactly 137", mode, p.Requests)
		}
	}
}

// A comparison in rounds shares --max-requests out between the rounds
// exactly and reports how many rounds each side had.
func TestRunComparisonInRounds(t *testing.T) {
	srv := testserver.Start(t, pipeline.Config{})
	for _, mode := range []string{ModeBoth, ModeStreamVsUnary} {
		cfg := baseConfig(srv.GRPCAddr)
		cfg.Mode, cfg.Warmup, cfg.Duration, cfg.MaxRequests, cfg.Rounds = mode, 0, time.Minute, 10, 4
		rep, err := Run(t.Context(), cfg, loadWorkload(t))
		if err != nil {
			t.Fatal(err)
		}
		sides := map[string][2]*Phase{ModeBoth: {rep.Health, rep.Evaluate}, ModeStreamVsUnary: {rep.Evaluate, rep.Stream}}[mode]
		for _, p := range sides {
			if p == nil {
				t.Fatalf("%s: a side is missing: %+v", mode, rep)
			}
			checkPhase(t, p, p.Mode)
			if p.Requests != 10 {
				t.Errorf("%s/%s: %d requests, want exactly 10 over 4 rounds", mode, p.Mode, p.Requests)
			}
		}
		if rep.Rounds != 4 {
			t.Errorf("%s: rounds %d, want 4", mode, rep.Rounds)
		}
		var text bytes.Buffer
		writeText(&text, rep)
		if !strings.Contains(text.String(), "in 4 alternating rounds") {
			t.Errorf("%s: text report does not say it ran in rounds:\n%s", mode, text.String())
		}
	}
}

// Error answers on a stream are counted by gRPC code, and every request
// is either a decision or an error.
func TestRunStreamCountsErrorAnswers(t *testing.T) {
	// A payload limit some corpus actions exceed: those are answered
	// ResourceExhausted.
	srv := testserver.Start(t, pipeline.Config{Limits: action.Limits{MaxPayloadBytes: 64}})
	cfg := baseConfig(srv.GRPCAddr)
	cfg.Mode, cfg.Warmup, cfg.Duration, cfg.MaxRequests = ModeStream, 0, time.Minute, 500
	rep, err := Run(t.Context(), cfg, loadWorkload(t))
	if err != nil {
		t.Fatal(err)
	}
	p := rep.Stream
	if p.Requests != 500 || p.ErrorsByCode["ResourceExhausted"] == 0 || p.Errors != sum(p.ErrorsByCode) ||
		sum(p.Decisions) != p.Requests-p.Errors || p.Decisions["allow"] == 0 {
		t.Fatalf("stream phase %+v", p)
	}
}

// TestRunDistinctFillsCache checks that --distinct N leaves N verdicts in
// the server's cache besides the replayed corpus (shieldd caches a
// verdict on its request's second sighting, so the fill sends each of
// its N requests twice), and --unique misses on every request.
func TestRunDistinctFillsCache(t *testing.T) {
	srv := testserver.Start(t, pipeline.Config{})
	wl := loadWorkload(t)
	cfg := baseConfig(srv.GRPCAddr)
	cfg.Mode, cfg.Warmup, cfg.Duration = ModeEvaluate, 0, time.Minute
	cfg.Distinct, cfg.MaxRequests = 250, 600
	cfg.MetricsURL = "http://" + srv.HTTPAddr + "/metrics"
	rep, err := Run(t.Context(), cfg, wl)
	if err != nil {
		t.Fatal(err)
	}
	checkPhase(t, rep.Evaluate, ModeEvaluate)
	if rep.Evaluate.Distinct != 500 {
		t.Errorf("%d requests made distinct, want 500 (250, each twice)", rep.Evaluate.Distinct)
	}
	if rep.Server == nil {
		t.Fatalf("no server status: %s", rep.ServerError)
	}
	if e := rep.Server.CacheEntries; e < 250 || e > 250+int64(len(wl.Items)) {
		t.Errorf("cache entries %d, want 250 distinct + at most %d corpus actions", e, len(wl.Items))
	}
	if rep.MetricsError != "" || rep.Metrics["process_resident_memory_bytes"] <= 0 {
		t.Errorf("metrics %v, error %q", rep.Metrics, rep.MetricsError)
	}

	before := rep.Server.CacheMisses
	cfg.Distinct, cfg.Unique, cfg.MaxRequests, cfg.MetricsURL = 0, true, 200, ""
	rep, err = Run(t.Context(), cfg, wl)
	if err != nil {
		t.Fatal(err)
	}
	checkPhase(t, rep.Evaluate, ModeEvaluate)
	if got := rep.Server.CacheMisses - before; got != 200 {
		t.Errorf("--unique: %d cache misses for 200 requests", got)
	}

	// --vary content, through the lean client and the generated one.
	cfg.Vary = workload.VaryContent
	for _, full := range []bool{false, true} {
		before = rep.Server.CacheMisses
		cfg.FullClient = full
		rep, err = Run(t.Context(), cfg, wl)
		if err != nil {
			t.Fatal(err)
		}
		checkPhase(t, rep.Evaluate, ModeEvaluate)
		if got := rep.Server.CacheMisses - before; got != 200 || rep.Vary != workload.VaryContent {
			t.Errorf("--unique --vary content (full client %t): %d cache misses for 200 requests, vary %q", full, got, rep.Vary)
		}
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--mode", "sideways"}, &out, &errOut); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), "--mode") {
		t.Errorf("stderr %q does not name the flag", errOut.String())
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"--mode", "stream", "--concurrency", "2", "--streams", "3"}, &out, &errOut); code != 2 ||
		!strings.Contains(errOut.String(), "--streams") {
		t.Errorf("more streams than requests in flight: exit %d, %q", code, errOut.String())
	}
	for _, args := range [][]string{
		{"--vary", "sideways"},
		{"--unique", "--vary", "content", "--http", "http://127.0.0.1:1"},
		{"--unique", "--vary", "content", "--mode", "verify"},
	} {
		errOut.Reset()
		if code := run(context.Background(), args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "vary") {
			t.Errorf("%q: exit %d, %q", args, code, errOut.String())
		}
	}
	for _, args := range [][]string{
		{"--mode", "both", "--rounds", "-1"},
		{"--mode", "both", "--rounds", "10", "--max-requests", "3"},
	} {
		errOut.Reset()
		if code := run(context.Background(), args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--rounds") {
			t.Errorf("%q: exit %d, %q", args, code, errOut.String())
		}
	}
}

func TestRunUnreachableServer(t *testing.T) {
	// Bounds the preflight's wait for a connection; not a timing assertion.
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	cfg := baseConfig("127.0.0.1:1") // nothing listens on port 1
	cfg.Mode = ModeHealth
	if _, err := Run(ctx, cfg, loadWorkload(t)); err == nil {
		t.Fatal("no error for an unreachable server")
	}
}

// TestMeteredCountsGCCycles checks the GC cycles per second of a metered
// turn against collections the turn forces in the server (the test
// process serves /metrics).
func TestMeteredCountsGCCycles(t *testing.T) {
	srv := testserver.Start(t, pipeline.Config{})
	r := &runner{cfg: Config{MetricsURL: "http://" + srv.HTTPAddr + "/metrics"}, usage: map[string]*usageSum{}}
	const forced = 5
	var took time.Duration
	drive := r.metered(t.Context(), ModeEvaluate, func(time.Duration, int64, bool) ([]*tally, time.Duration) {
		start := time.Now()
		for range forced {
			runtime.GC()
		}
		time.Sleep(50 * time.Millisecond)
		took = time.Since(start)
		return nil, took
	})
	drive(0, 0, true)
	p := &Phase{Mode: ModeEvaluate, Requests: 1}
	r.addUsage(p)
	if p.GCCyclesPerSecond == nil {
		t.Fatal("no GC cycles per second with --metrics-url")
	}
	if low := forced / took.Seconds(); *p.GCCyclesPerSecond < low {
		t.Errorf("%.1f GC cycles per second, want at least %.1f (%d forced in %v)", *p.GCCyclesPerSecond, low, forced, took)
	}
}
