#!/usr/bin/env bash
# Where an uncached decision's extra server CPU goes: a fresh shieldd on
# the defaults, its cache filled with 100 000 distinct verdicts (as in
# scale.sh part 2), then cached and uncached (--unique) load in turns,
# each turn sampled by `perf record -g` on the server. For each of a
# fixed list of frames it prints the server CPU per request spent under
# that frame (perf's share of the samples, with children, times the
# server CPU per request loadgen reads from /proc) in both modes and the
# difference. The difference of the top row is what the target
# "uncached ÷ cached ≥ 0.8" is about.
#
# Rows overlap (a frame's children are counted in it) and the kernel's
# rows count time spent under any Go frame; read them as a breakdown of
# the difference, not as a sum. Frames such as runtime.sysmon and the
# timer interrupt cost the server a fixed time per second, so per
# request they grow as throughput falls. Sampling with call graphs costs
# the server CPU of its own, so the absolute figures run above what
# scale.sh reads without perf: read the differences, and take the ratio
# itself from scale.sh.
#
# Needs perf (Debian: apt-get install linux-perf) and the right to
# sample the server (root, or kernel.perf_event_paranoid ≤ 1).
#
# Environment: ROUNDS (2), DURATION per turn (10s), CONCURRENCY (16),
# VARY (workspace; see scale.sh), FREQ (perf's sampling rate, 2000).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/lib.sh

ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-10s}
CONCURRENCY=${CONCURRENCY:-16}
VARY=${VARY:-workspace}
FREQ=${FREQ:-2000}

command -v perf >/dev/null || { echo "perfsplit: perf is not installed (Debian: apt-get install linux-perf)" >&2; exit 1; }

work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/shieldd" ./shieldd
go build -o "$work/loadgen" ./benchmarks/loadgen

"$work/shieldd" serve --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 --log-level info --log-format text >"$work/log" 2>&1 &
pid=$!
await_serving "$work/log" "$pid"
addr=$(served_addr "$work/log" grpc)

echo "filling the cache with 100 000 distinct verdicts (varied by $VARY)"
"$work/loadgen" --addr "$addr" --concurrency 16 --warmup 0 --duration 120s \
	--distinct 100000 --max-requests 200000 --vary "$VARY" >/dev/null

# The frames reported, outermost first. perf prints Go symbols in full.
frames=(
	'google.golang.org/grpc.(*Server).handleStream'
	'github.com/parapet-dev/parapet/shieldd/pipeline.(*Pipeline).decide'
	'github.com/parapet-dev/parapet/rules/action.CanonicalizeChecked'
	'github.com/parapet-dev/parapet/rules/shell.parse'
	'github.com/parapet-dev/parapet/rules/heuristics.(*Analyzer).AnalyzeAppend'
	'github.com/parapet-dev/parapet/rules/policy.(*Policy).Decide'
	'github.com/parapet-dev/parapet/shieldd/server.(*requestCodec).Unmarshal'
	'github.com/parapet-dev/parapet/shieldd/server.(*requestCodec).Marshal'
	'google.golang.org/grpc/internal/transport.(*http2Server).HandleStreams'
	'google.golang.org/grpc/internal/transport.(*loopyWriter).run'
	'runtime.mallocgc'
	'runtime.gcBgMarkWorker'
	'runtime.sysmon'
	'runtime.findRunnable'
	'do_syscall_64'
	'finish_task_switch.isra.0'
	'asm_sysvec_apic_timer_interrupt'
)

: >"$work/rows"
for r in $(seq "$ROUNDS"); do
	order=(cached uncached)
	if [ $((r % 2)) -eq 0 ]; then order=(uncached cached); fi
	for mode in "${order[@]}"; do
		extra=()
		[ "$mode" = uncached ] && extra=(--unique --vary "$VARY")
		perf record -q -F "$FREQ" -g -p "$pid" -o "$work/perf.data" >/dev/null 2>&1 &
		rec=$!
		sleep 0.5 # perf attaches before the measured load starts
		out=$("$work/loadgen" --addr "$addr" "${extra[@]}" --concurrency "$CONCURRENCY" --duration "$DURATION" \
			--warmup 0 --server-pid "$pid")
		kill -INT "$rec"
		wait "$rec" || true
		cpu=$(field "$out" "server CPU/req")
		printf 'round %d %-8s %6s µs server CPU per request\n' "$r" "$mode" "$cpu"
		echo "$mode (all) $cpu" >>"$work/rows"
		perf report -i "$work/perf.data" --children --sort sym --stdio -g none 2>/dev/null |
			awk -v mode="$mode" -v cpu="$cpu" '/^ +[0-9.]+%/ {pct = $1; sub("%", "", pct); print mode, $NF, pct * cpu / 100}' >>"$work/rows"
	done
done

printf '\n%-76s %9s %9s %9s\n' "server CPU per request under the frame (µs, mean of $ROUNDS rounds)" cached uncached extra
for f in '(all)' "${frames[@]}"; do
	awk -v f="$f" -v n="$ROUNDS" '$2 == f {s[$1] += $3}
		END {printf "%-76s %9.1f %9.1f %+9.1f\n", substr(f, length(f) > 76 ? length(f) - 75 : 1), s["cached"] / n, s["uncached"] / n, (s["uncached"] - s["cached"]) / n}' "$work/rows"
done
