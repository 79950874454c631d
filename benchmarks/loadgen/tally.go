package main

import (
	"maps"
	"math"
	"slices"
	"sort"
)

// tally is one worker's record of a phase. Each worker owns its tally, so
// the hot loop takes no locks; tallies are merged when the phase ends.
type tally struct {
	requests int64
	// lat holds the latency in nanoseconds of each successful request; nil
	// during warm-up, when latencies are not kept.
	lat []int64
	// failures counts failed requests by gRPC code or response problem.
	failures  map[string]int64
	decisions [4]int64 // by pb.VerdictDecision
	distinct  int64
}

func (t *tally) fail(kind string) {
	if t.failures == nil {
		t.failures = make(map[string]int64)
	}
	t.failures[kind]++
}

// Latency percentiles in nanoseconds (nearest rank).
type Latency struct {
	P50  int64 `json:"p50"`
	P90  int64 `json:"p90"`
	P99  int64 `json:"p99"`
	P999 int64 `json:"p99_9"`
	Max  int64 `json:"max"`
	Mean int64 `json:"mean"`
}

// Warmup summarises the warm-up requests, which are not timed but whose
// errors are still reported.
type Warmup struct {
	Requests     int64            `json:"requests"`
	Errors       int64            `json:"errors"`
	ErrorsByCode map[string]int64 `json:"errors_by_code,omitempty"`
}

// Phase is the measured result of one mode.
type Phase struct {
	Mode     string `json:"mode"`
	Requests int64  `json:"requests"`
	Errors   int64  `json:"errors"`
	// ErrorsByCode keys are gRPC code names, or no_verdict,
	// unspecified_decision and NOT_SERVING for bad successful responses.
	ErrorsByCode   map[string]int64 `json:"errors_by_code,omitempty"`
	ElapsedSeconds float64          `json:"elapsed_seconds"`
	// PerSecond is successful responses (decisions, or health checks) per second.
	PerSecond float64 `json:"per_second"`
	// LatencyNs covers successful requests only.
	LatencyNs Latency `json:"latency_ns"`
	// Decisions by verdict (evaluate only); they sum to Requests - Errors.
	Decisions map[string]int64 `json:"decisions,omitempty"`
	// Distinct is how many requests of this phase were made distinct
	// from the corpus's (a --distinct fill sends each of them twice).
	Distinct int64  `json:"distinct,omitempty"`
	Warmup   Warmup `json:"warmup"`
	// ServerCPUPerRequestUs is the server's CPU time (user + system) over
	// the measured turns per request (--server-pid).
	ServerCPUPerRequestUs float64 `json:"server_cpu_us_per_request,omitempty"`
	// GCCPUShare is the garbage collector's share of the server's
	// GOMAXPROCS × wall time over the measured turns, idle processors
	// included (--metrics-url; runtime/metrics). It is absent when no
	// collection ended during the turns: runtime/metrics moves its CPU
	// classes only at the end of a cycle, so there is nothing to divide.
	GCCPUShare *float64 `json:"gc_cpu_share,omitempty"`
	// GCServerCPUShare is the collector's CPU time (runtime/metrics) over
	// the server process's (/proc; --server-pid and --metrics-url): its
	// share of what the server spent, which GCCPUShare dilutes with the
	// time the server's processors sat idle.
	GCServerCPUShare *float64 `json:"gc_server_cpu_share,omitempty"`
	// GCCyclesPerSecond is how many garbage collections the server
	// completed per second of the measured turns (--metrics-url).
	GCCyclesPerSecond *float64 `json:"gc_cycles_per_second,omitempty"`
}

var decisionNames = [4]string{"unspecified", "allow", "block", "escalate"}

// merge combines the workers' tallies.
func merge(ts []*tally) (requests int64, lat []int64, failures map[string]int64, decisions [4]int64, distinct int64) {
	n := 0
	for _, t := range ts {
		n += len(t.lat)
	}
	lat = make([]int64, 0, n)
	failures = map[string]int64{}
	for _, t := range ts {
		requests += t.requests
		lat = append(lat, t.lat...)
		for k, v := range t.failures {
			failures[k] += v
		}
		for i, d := range t.decisions {
			decisions[i] += d
		}
		distinct += t.distinct
	}
	return requests, lat, failures, decisions, distinct
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// percentiles sorts lat in place.
func percentiles(lat []int64) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	slices.Sort(lat)
	rank := func(q float64) int64 {
		i := int(math.Ceil(q*float64(len(lat)))) - 1 // nearest rank
		return lat[min(max(i, 0), len(lat)-1)]
	}
	var total float64
	for _, v := range lat {
		total += float64(v)
	}
	return Latency{
		P50: rank(0.50), P90: rank(0.90), P99: rank(0.99), P999: rank(0.999),
		Max: lat[len(lat)-1], Mean: int64(total / float64(len(lat))),
	}
}

func sortedKeys(m map[string]int64) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	return keys
}
