package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Server usage over the measured turns of a mode: the server process's
// CPU time from /proc/PID/stat (--server-pid; same machine, Linux), and
// from /metrics (--metrics-url) the garbage collector's cycles per second
// (go_gc_duration_seconds_count) and its share of the CPU
// (go_cpu_classes_gc_total_cpu_seconds_total over
// go_cpu_classes_total_cpu_seconds_total, runtime/metrics estimates that
// count idle time too, so the share is of GOMAXPROCS × wall time). The
// runtime updates those estimates only when a cycle ends, so the share
// is coarse when a turn sees few cycles; the cycle count is exact. With
// both flags the collector's CPU is also given over the server's own
// (/proc), the share that says what collecting costs a busy server: one
// using one of its two processors shows half of it as its share of
// GOMAXPROCS × wall time. The runtime's figure is an estimate, so this
// one is too.

type usageSum struct {
	cpu       time.Duration
	gc, total float64
	cycles    float64
	wall      time.Duration
	cpuOK     bool
	gcOK      bool
	cyclesOK  bool
}

const (
	gcSeconds    = "go_cpu_classes_gc_total_cpu_seconds_total"
	totalSeconds = "go_cpu_classes_total_cpu_seconds_total"
	gcCycles     = "go_gc_duration_seconds_count"
)

// metered wraps drive so that its timed turns add to the mode's usage.
func (r *runner) metered(ctx context.Context, mode string, drive driveFunc) driveFunc {
	if r.cfg.ServerPID == 0 && r.cfg.MetricsURL == "" {
		return drive
	}
	return func(d time.Duration, max int64, timed bool) ([]*tally, time.Duration) {
		if !timed {
			return drive(d, max, timed)
		}
		u := r.usage[mode]
		if u == nil {
			u = &usageSum{cpuOK: true, gcOK: true, cyclesOK: true}
			r.usage[mode] = u
		}
		var m0 map[string]float64
		if r.cfg.MetricsURL != "" {
			m0, _ = scrape(ctx, r.cfg.MetricsURL)
		}
		c0, cerr0 := processCPU(r.cfg.ServerPID)
		ts, el := drive(d, max, timed)
		c1, cerr1 := processCPU(r.cfg.ServerPID)
		if r.cfg.ServerPID != 0 {
			if cerr0 != nil || cerr1 != nil {
				u.cpuOK = false
			}
			u.cpu += c1 - c0
		}
		if r.cfg.MetricsURL != "" {
			m1, _ := scrape(ctx, r.cfg.MetricsURL)
			// inBoth reports whether both scrapes have the series.
			inBoth := func(name string) bool {
				_, a := m0[name]
				_, b := m1[name]
				return a && b
			}
			u.gcOK = u.gcOK && inBoth(totalSeconds)
			u.gc += m1[gcSeconds] - m0[gcSeconds]
			u.total += m1[totalSeconds] - m0[totalSeconds]
			u.cyclesOK = u.cyclesOK && inBoth(gcCycles)
			u.cycles += m1[gcCycles] - m0[gcCycles]
			u.wall += el
		}
		return ts, el
	}
}

// addUsage puts the mode's server usage on its phase.
func (r *runner) addUsage(p *Phase) {
	if p == nil || r.usage[p.Mode] == nil {
		return
	}
	u := r.usage[p.Mode]
	if r.cfg.ServerPID != 0 && u.cpuOK && p.Requests > 0 {
		p.ServerCPUPerRequestUs = float64(u.cpu.Microseconds()) / float64(p.Requests)
	}
	if r.cfg.MetricsURL != "" && u.gcOK && u.total > 0 {
		share := u.gc / u.total
		p.GCCPUShare = &share
	}
	if r.cfg.ServerPID != 0 && u.cpuOK && r.cfg.MetricsURL != "" && u.gcOK && u.cpu > 0 {
		share := u.gc / u.cpu.Seconds()
		p.GCServerCPUShare = &share
	}
	if r.cfg.MetricsURL != "" && u.cyclesOK && u.wall > 0 {
		perSecond := u.cycles / u.wall.Seconds()
		p.GCCyclesPerSecond = &perSecond
	}
}

// processCPU is pid's user + system CPU time (0 pid: none).
func processCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(b))
}

// parseStatCPU reads utime and stime (fields 14 and 15, in USER_HZ ticks
// of 10 ms) from a /proc/PID/stat line; the command name, field 2, may
// hold spaces and parentheses, so fields are counted after its last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc stat")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("malformed /proc stat")
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14, 15 overall
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed /proc stat: %v", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
