#!/usr/bin/env bash
# Runs Parapet's benchmark suite on this machine and prints every figure:
# the gRPC Evaluate-vs-health comparison at concurrency 16 and 64, the
# uncached server path, a 100 000-verdict cache fill with shieldd's RSS
# read from /metrics, the in-process cache memory probe and the Go
# benchmarks. All traffic stays on 127.0.0.1; every step is bounded, and
# the whole run takes about five minutes.
#
# Environment: DURATION (per mode, default 5s), WARMUP (default 1s),
# BENCHTIME (go test -benchtime, default 1s).
set -euo pipefail

cd "$(dirname "$0")/.."
. benchmarks/lib.sh
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
BENCHTIME=${BENCHTIME:-1s}

work=$(mktemp -d)
mkdir -p benchmarks/results
raw="benchmarks/results/$(date -u +%Y%m%dT%H%M%SZ).raw"
shieldd_pid=""
failures=0

cleanup() {
	stop_shieldd
	rm -rf "$work"
}
trap cleanup EXIT
exec > >(tee "$raw") 2>&1

section() { printf '\n=== %s\n' "$*"; }

# run_step runs a bounded command, echoing it; a failure is reported and
# counted, and the suite goes on.
run_step() {
	local limit=$1
	shift
	local status=0
	echo "\$ $*"
	timeout --kill-after=5s "$limit" "$@" || status=$?
	if [ "$status" -ne 0 ]; then
		echo "!!! failed (exit $status): $*"
		failures=$((failures + 1))
	fi
}

# start_shieldd starts a fresh daemon on free loopback ports and sets
# GRPC and HTTP to the addresses it bound.
# Each daemon logs to its own file, so a previous daemon's start-up line
# can never be mistaken for this one's.
start_shieldd() {
	log=$(mktemp "$work/shieldd.XXXXXX.log")
	"$work/shieldd" serve --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 \
		--log-level info --log-format text >"$log" 2>&1 &
	shieldd_pid=$!
	await_serving "$log" "$shieldd_pid"
	GRPC=$(served_addr "$log" grpc)
	HTTP=$(served_addr "$log" http)
	echo "shieldd (pid $shieldd_pid) serving gRPC on $GRPC, HTTP on $HTTP"
}

stop_shieldd() {
	if [ -n "$shieldd_pid" ]; then
		kill -TERM "$shieldd_pid" 2>/dev/null || true
		wait "$shieldd_pid" 2>/dev/null || true
		shieldd_pid=""
	fi
}

section "environment"
date -u '+%Y-%m-%d %H:%M:%S UTC'
go version
echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (working tree has changes)')"
echo "cores: $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load average: $(cut -d" " -f1-3 /proc/loadavg) (other work on the machine skews timings, not memory)"

section "build"
go build -o "$work/shieldd" ./shieldd
go build -o "$work/loadgen" ./benchmarks/loadgen
go build -o "$work/cachemem" ./benchmarks/cachemem
echo "built shieldd, loadgen and cachemem in $work"

start_shieldd
for c in 16 64; do
	section "gRPC Evaluate vs health, concurrency $c"
	run_step 60s "$work/loadgen" --addr "$GRPC" --mode both --concurrency "$c" \
		--duration "$DURATION" --warmup "$WARMUP"
done
section "gRPC Evaluate, every request unique (uncached server path), concurrency 16"
run_step 60s "$work/loadgen" --addr "$GRPC" --mode evaluate --unique --concurrency 16 \
	--duration "$DURATION" --warmup "$WARMUP"
stop_shieldd

section "shieldd RSS: idle, then with 100 000 distinct cached verdicts (fresh daemon)"
start_shieldd
run_step 30s "$work/loadgen" --addr "$GRPC" --mode health --concurrency 1 --warmup 0 \
	--duration 1s --max-requests 10 --metrics-url "http://$HTTP/metrics"
run_step 150s "$work/loadgen" --addr "$GRPC" --mode evaluate --concurrency 16 --warmup 0 \
	--duration 120s --distinct 100000 --max-requests 200000 --metrics-url "http://$HTTP/metrics"
stop_shieldd

section "in-process pipeline memory with 100 000 cached verdicts"
run_step 120s "$work/cachemem" --n 100000

section "Go benchmarks"
run_step 240s go test -run '^$' -bench . -skip 'PerActionP50|PipelineTracing' -benchmem -benchtime "$BENCHTIME" \
	-timeout 4m ./benchmarks/
# The per-action medians need samples spread over several seconds to see
# past the VM's slow spells (see peraction_bench_test.go).
section "Go benchmarks: per-action p50, samples spread over the run"
run_step 300s go test -run '^$' -bench 'PerActionP50|PipelineTracing' -benchtime 400000x -timeout 5m ./benchmarks/

section "done"
echo "load average: $(cut -d" " -f1-3 /proc/loadavg)"
echo "raw output: $raw"
if [ "$failures" -gt 0 ]; then
	echo "$failures step(s) failed"
	exit 1
fi
