#!/usr/bin/env bash
# Two server-side figures of issue 15, each in alternating rounds (this
# machine's speed drifts; see README.md):
#
#  1. Scaling: shieldd at GOMAXPROCS 1, 2, … (up to half the cores, at
#     least 2), gRPC Evaluate over the corpus (cached) with 16 in flight.
#     Reports decisions/s, decisions/s per GOMAXPROCS, and decisions per
#     second of server CPU (from /proc/PID/stat), which a load tool
#     sharing the cores does not skew. With SHIELDD_CPUS and LOADGEN_CPUS
#     (taskset lists, e.g. 0-7 and 8-15) the server of GOMAXPROCS n is
#     pinned to the first n cores of SHIELDD_CPUS and the load generator
#     to LOADGEN_CPUS.
#  2. The full cache on the defaults: a fresh shieldd (--memory-limit
#     auto), its cache filled with 100 000 distinct verdicts, then cached
#     and uncached (--unique) load in turns: throughput, server CPU per
#     decision, the garbage collector's share of the server's CPU
#     (runtime/metrics over /proc) and RSS. A second shieldd with
#     --memory-limit off, filled the same way, takes the same uncached
#     load in the same turns: the two uncached
#     figures show what the memory limit costs, apart from what the
#     decision itself costs. Uncached ÷ cached is given twice: in
#     throughput (the target's figure, diluted by the load tool on
#     shared cores) and in server CPU per decision (what a server with
#     cores of its own would see).
#
# Environment: ROUNDS (4), DURATION per run (5s), CONCURRENCY (16),
# CORPUS (a case directory for the load tool instead of its embedded
# corpus: time two checkouts on the same workload),
# MAXPROCS (the GOMAXPROCS list, default "1 2 …"), PARTS (which of the
# two to run, default "1 2"), VARY (how part 2's requests are made
# distinct, loadgen --vary: workspace, the default, replays the corpus's
# verdicts, whose shapes the cache shares; content makes each action's
# text distinct, as distinct actions are in production), CONNS (part 1's
# gRPC connections, loadgen --conns, default 1: one client; several
# engines sharing a shieldd each bring their own, and gRPC reads each
# connection on one goroutine).
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/lib.sh

ROUNDS=${ROUNDS:-4}
DURATION=${DURATION:-5s}
CONCURRENCY=${CONCURRENCY:-16}
PARTS=${PARTS:-1 2}
VARY=${VARY:-workspace}
CONNS=${CONNS:-1}
cores=$(nproc)
if [ -z "${MAXPROCS:-}" ]; then
	MAXPROCS="1 2"
	for n in 4 8 16; do [ $((n * 2)) -le "$cores" ] && MAXPROCS="$MAXPROCS $n"; done
fi

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/shieldd" ./shieldd
go build -o "$work/loadgen" ./benchmarks/loadgen

# first_cpus LIST N: the first N cores of a taskset list such as 0-7,12.
first_cpus() {
	local out=() part a b i
	IFS=, read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		a=${part%-*} b=${part#*-}
		for ((i = a; i <= b; i++)); do out+=("$i"); done
	done
	local IFS=,
	echo "${out[*]:0:$2}"
}

# start NAME GOMAXPROCS [args…]: a fresh shieldd; sets pid_NAME, grpc_NAME, http_NAME.
start() {
	local name=$1 procs=$2
	shift 2
	local log="$work/$name.log" pin=()
	if [ -n "${SHIELDD_CPUS:-}" ]; then pin=(taskset -c "$(first_cpus "$SHIELDD_CPUS" "$procs")"); fi
	GOMAXPROCS=$procs "${pin[@]}" "$work/shieldd" serve --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 \
		--log-level info --log-format text "$@" >"$log" 2>&1 &
	local pid=$!
	pids+=("$pid")
	await_serving "$log" "$pid"
	printf -v "pid_$name" %s "$pid"
	printf -v "grpc_$name" %s "$(served_addr "$log" grpc)"
	printf -v "http_$name" %s "$(served_addr "$log" http)"
}

loadgen() {
	# CORPUS: the case directory every run replays (default: the one the
	# load tool embeds), so two checkouts can be timed on one workload.
	local corpus=()
	[ -n "${CORPUS:-}" ] && corpus=(--corpus "$CORPUS")
	if [ -n "${LOADGEN_CPUS:-}" ]; then taskset -c "$LOADGEN_CPUS" "$work/loadgen" "${corpus[@]}" "$@"; else "$work/loadgen" "${corpus[@]}" "$@"; fi
}

echo "cores: $cores; load average $(cut -d' ' -f1-3 /proc/loadavg); GOMAXPROCS $MAXPROCS; $ROUNDS rounds of $DURATION"
echo
if [[ " $PARTS " == *" 1 "* ]]; then
	echo "=== 1. scaling: gRPC Evaluate, corpus (cached), $CONCURRENCY in flight over $CONNS connection(s)"
	for n in $MAXPROCS; do start "p$n" "$n"; done
	: >"$work/scale"
	for r in $(seq "$ROUNDS"); do
		list=($MAXPROCS)
		if [ $((r % 2)) -eq 0 ]; then list=($(printf '%s\n' "${list[@]}" | tac)); fi
		for n in "${list[@]}"; do
			g="grpc_p$n" p="pid_p$n"
			out=$(loadgen --addr "${!g}" --mode evaluate --conns "$CONNS" --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup 1s --server-pid "${!p}")
			rps=$(field "$out" "per second")
			cpu=$(field "$out" "server CPU/req")
			printf 'round %d GOMAXPROCS %-2d %8s decisions/s  %6s µs server CPU each\n' "$r" "$n" "$rps" "$cpu"
			echo "$n $rps $cpu" >>"$work/scale"
		done
	done
	awk '{n[$1]++; rps[$1] += $2; cpu[$1] += $3}
		END {
			for (k in n) { r = rps[k] / n[k]; c = cpu[k] / n[k]; per[k] = r / k; eff[k] = 1e6 / c }
			for (k in n) printf "GOMAXPROCS %-2d %8.0f decisions/s  %8.0f per GOMAXPROCS  %8.0f per server CPU-second\n", k, rps[k] / n[k], per[k], eff[k] | "sort -n -k2"
			close("sort -n -k2")
			lo = 1e18; hi = 0
			for (k in n) { if (eff[k] < lo) lo = eff[k]; if (eff[k] > hi) hi = eff[k] }
			printf "decisions per server CPU-second: lowest %.2f of highest (target: within 20 %%)\n", lo / hi
		}' "$work/scale"
	for n in $MAXPROCS; do p="pid_p$n"; kill "${!p}"; done
	echo
fi

[[ " $PARTS " == *" 2 "* ]] || exit 0
echo "=== 2. full cache on the defaults: 100 000 distinct verdicts, then cached vs uncached, $CONCURRENCY in flight, varied by $VARY"
start full "$cores"
start nolimit "$cores" --memory-limit off
for s in full nolimit; do
	g="grpc_$s"
	loadgen --addr "${!g}" --mode evaluate --concurrency 16 --warmup 0 --duration 120s \
		--distinct 100000 --max-requests 200000 --vary "$VARY" >/dev/null
done
: >"$work/full"
for r in $(seq "$ROUNDS"); do
	order=(cached uncached uncached-nolimit)
	if [ $((r % 2)) -eq 0 ]; then order=(uncached-nolimit uncached cached); fi
	for kind in "${order[@]}"; do
		extra=() s=full
		case $kind in
		uncached) extra=(--unique --vary "$VARY") ;;
		uncached-nolimit) extra=(--unique --vary "$VARY") s=nolimit ;;
		esac
		g="grpc_$s" h="http_$s" p="pid_$s"
		out=$(loadgen --addr "${!g}" --mode evaluate "${extra[@]}" --concurrency "$CONCURRENCY" --duration "$DURATION" \
			--warmup 0 --server-pid "${!p}" --metrics-url "http://${!h}/metrics")
		rps=$(field "$out" "per second")
		cpu=$(field "$out" "server CPU/req")
		gc=$(field "$out" "GC ÷ server CPU")
		cycles=$(field "$out" "GC cycles/s")
		rss=$(awk '$1 == "process_resident_memory_bytes" {print $2}' <<<"$out")
		entries=$(awk '$1 == "parapet_shield_cache_entries" {print $2}' <<<"$out")
		printf 'round %d %-16s %8s decisions/s  %6s µs server CPU each  GC %5s %% of its CPU, %5s cycles/s  RSS %s MiB  cache %s\n' \
			"$r" "$kind" "$rps" "$cpu" "$gc" "$cycles" "$rss" "$entries"
		echo "$kind $rps $cpu $gc $rss $cycles" >>"$work/full"
	done
done
# Besides the ratio of the means, each round's own ratio and their
# median (rounds.awk): on a shared VM single rounds spread by ±0.05.
awk -f benchmarks/rounds.awk -f /dev/stdin "$work/full" <<'AWK'
{n[$1]++; rps[$1] += $2; cpu[$1] += $3; gc[$1] += $4; cyc[$1] += $6; if ($1 != "uncached-nolimit" && $5 > rss) rss = $5
	round[$1, n[$1]] = $2}
	END {
		for (k in n) printf "%-16s %8.0f decisions/s  %6.1f µs server CPU each  GC %.1f %% of its CPU, %.1f cycles/s\n", k, rps[k] / n[k], cpu[k] / n[k], gc[k] / n[k], cyc[k] / n[k]
		printf "uncached ÷ cached: %.2f (target ≥ 0.8); highest RSS on the defaults %.1f MiB (target ≤ 64)\n", rps["uncached"] / rps["cached"], rss
		printf "uncached ÷ cached by round:%s\n", by_round(round, "uncached", "cached", n["cached"], "%.2f")
		printf "uncached, memory limit auto ÷ off: %.2f (what the limit costs)\n", rps["uncached"] / rps["uncached-nolimit"]
		# The throughput ratio above is diluted by the load tool sharing
		# the cores; a server on cores of its own would see this one.
		printf "server CPU per decision, cached ÷ uncached: %.2f (the ratio for a server with cores of its own)\n", cpu["cached"] / cpu["uncached"]
	}
AWK
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
