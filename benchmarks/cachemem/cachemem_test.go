package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/benchmarks/internal/workload"
)

// TestMeasureFillsCache checks the bookkeeping on a small fill; the
// memory figures themselves are not asserted.
func TestMeasureFillsCache(t *testing.T) {
	wl, err := workload.Load("")
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for _, vary := range []workload.Vary{workload.VaryWorkspace, workload.VaryContent} {
		res, err := measure(t.Context(), fill{n: n, vary: vary}, wl, "")
		if err != nil {
			t.Fatal(err)
		}
		if want := n + len(wl.Items); res.CacheEntries > want || res.CacheEntries < n {
			t.Errorf("%s: cache entries %d, want %d distinct plus at most %d corpus actions", vary, res.CacheEntries, n, len(wl.Items))
		}
		var total int64
		for _, c := range res.Decisions {
			total += c
		}
		if total != n {
			t.Errorf("%s: decisions %v sum to %d, want %d", vary, res.Decisions, total, n)
		}
		if res.AfterGC.RSS == 0 || res.Baseline.HeapAlloc == 0 || res.Vary != vary {
			t.Errorf("%s: memory not read: %+v", vary, res)
		}
		// VmRSS is RssAnon + RssFile + RssShmem, read together.
		if m := res.AfterGC; m.RSSAnon == 0 || m.RSSFile == 0 || m.RSSAnon+m.RSSFile > m.RSS {
			t.Errorf("%s: RSS split not read: %+v", vary, m)
		}
		var out bytes.Buffer
		printText(&out, res)
		if !strings.Contains(out.String(), "VmRSS") || !strings.Contains(out.String(), "varied by "+string(vary)) {
			t.Errorf("report:\n%s", out.String())
		}
	}
}

// One-off verdicts are decided before the measured fill and counted
// apart from it.
func TestMeasureAfterOneOffs(t *testing.T) {
	wl, err := workload.Load("")
	if err != nil {
		t.Fatal(err)
	}
	const n, once = 2000, 500
	res, err := measure(t.Context(), fill{n: n, vary: workload.VaryWorkspace, oneOffs: once}, wl, "")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, c := range res.Decisions {
		total += c
	}
	if total != n || res.OneOffs != once {
		t.Errorf("decisions %v sum to %d, one-offs %d; want %d and %d", res.Decisions, total, res.OneOffs, n, once)
	}
	if most := n + once + len(wl.Items); res.CacheEntries < n+once || res.CacheEntries > most {
		t.Errorf("cache entries %d, want %d to %d", res.CacheEntries, n+once, most)
	}
	var out bytes.Buffer
	printText(&out, res)
	if !strings.Contains(out.String(), "500 one-off verdicts") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestKB(t *testing.T) {
	if n, err := kB("   2048 kB"); err != nil || n != 2<<20 {
		t.Errorf("kB = %d, %v", n, err)
	}
	if _, err := kB("12 MB"); err == nil {
		t.Error("accepted a unit other than kB")
	}
}

// A quoting fill holds to the cache's byte budget: with verdicts that
// quote their actions at length, fewer entries than verdicts decided.
func TestMeasureQuotingFill(t *testing.T) {
	wl, err := workload.Load("")
	if err != nil {
		t.Fatal(err)
	}
	const n = 150_000 // the cache's size is 100 000 at least: a fill past it
	res, err := measure(t.Context(), fill{n: n, quoting: 400}, wl, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Decisions["VERDICT_DECISION_BLOCK"] != n {
		t.Errorf("decisions %v; want %d blocks", res.Decisions, n)
	}
	budget := res.CacheOwnBudget
	if budget == 0 || res.CacheOwnBytes > budget || res.CacheEntries >= cacheSizeFor(n) || res.CacheEntries == 0 {
		t.Errorf("%d entries holding %d bytes of their own; want fewer than %d within %d", res.CacheEntries, res.CacheOwnBytes, cacheSizeFor(n), budget)
	}
	var out bytes.Buffer
	printText(&out, res)
	if !strings.Contains(out.String(), "400 bytes of padding") || strings.Contains(out.String(), "target:") {
		t.Errorf("report:\n%s", out.String())
	}
}
