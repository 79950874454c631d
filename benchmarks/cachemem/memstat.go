package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Memory is one snapshot of the process's memory, in bytes.
type Memory struct {
	// RSS and HWM are VmRSS and VmHWM from /proc/self/status: what the
	// kernel charges the process now, and its peak.
	RSS uint64 `json:"rss"`
	HWM uint64 `json:"rss_peak"`
	// RSSAnon and RSSFile split RSS (RssAnon and RssFile): the anonymous
	// memory, which holds the heap, and the pages of files mapped in,
	// nearly all of them the program's own code and read-only data. The
	// kernel can drop file pages under pressure and read them back, so
	// they say how much of RSS the cache could ever be blamed for.
	RSSAnon uint64 `json:"rss_anon"`
	RSSFile uint64 `json:"rss_file"`
	// HeapAlloc is live heap objects; HeapInuse the spans holding them;
	// Sys everything the Go runtime has mapped.
	HeapAlloc uint64 `json:"heap_alloc"`
	HeapInuse uint64 `json:"heap_inuse"`
	Sys       uint64 `json:"sys"`
}

func snapshot() (Memory, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := Memory{HeapAlloc: ms.HeapAlloc, HeapInuse: ms.HeapInuse, Sys: ms.Sys}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return m, fmt.Errorf("resident memory needs Linux /proc: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch key {
		case "VmRSS":
			m.RSS, err = kB(val)
		case "VmHWM":
			m.HWM, err = kB(val)
		case "RssAnon":
			m.RSSAnon, err = kB(val)
		case "RssFile":
			m.RSSFile, err = kB(val)
		}
		if err != nil {
			return m, fmt.Errorf("/proc/self/status %s: %w", key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("/proc/self/status has no VmRSS")
	}
	return m, nil
}

// kB parses a /proc value such as "  12345 kB".
func kB(s string) (uint64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), " ")
	if unit != "kB" {
		return 0, fmt.Errorf("unexpected unit in %q", s)
	}
	n, err := strconv.ParseUint(num, 10, 64)
	return n << 10, err
}
