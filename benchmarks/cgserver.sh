#!/usr/bin/env bash
# Instructions per request on the server, counted rather than timed: a
# shieldd runs under valgrind's cachegrind while loadgen sends it a fixed
# number of requests, once with FEW and once with MANY; the difference of
# the two counts, divided by MANY - FEW, is what one request costs the
# server (start-up and shutdown cancel out). Instruction counts do not
# drift with the machine's load the way times do on a shared VM, so two
# builds or two request kinds can be compared in one run each.
#
#   benchmarks/cgserver.sh                      # cached Evaluate (the corpus, replayed)
#   benchmarks/cgserver.sh --unique             # uncached Evaluate
#   MODE=health benchmarks/cgserver.sh          # the gRPC health check
#   VS=cached benchmarks/cgserver.sh --unique   # what a miss adds to a hit
#
# Prints instructions (Ir), first-level instruction- and data-cache misses
# (I1mr, D1mr; cachegrind's simulated caches) per request, then the
# functions with the most of them (SORT) per request. Extra arguments go to
# loadgen. Environment: MODE (evaluate), FEW (5000), MANY (25000), TOP (25),
# SORT (Ir; I1mr ranks by instruction-cache misses), KEEP (set: keep
# cachegrind's files, for cg_annotate).
#
# VS=cached compares instead: one shieldd serves MANY cached Evaluates (the
# corpus replayed), another MANY of MODE with the given arguments, and the
# difference is what those requests cost beyond a cache hit, by function:
# for --unique, the decision and whatever else a miss does.
# Needs valgrind (apt-get install valgrind); a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/lib.sh

MODE=${MODE:-evaluate}
FEW=${FEW:-5000}
MANY=${MANY:-25000}
TOP=${TOP:-25}
SORT=${SORT:-Ir}
VS=${VS:-}
case "$VS" in '' | cached) ;; *) echo "cgserver.sh: VS must be cached or unset, not \"$VS\"" >&2; exit 2 ;; esac
case "$SORT" in Ir | I1mr | D1mr) ;; *) echo "cgserver.sh: SORT must be Ir, I1mr or D1mr, not \"$SORT\"" >&2; exit 2 ;; esac
command -v valgrind >/dev/null || { echo "cgserver.sh needs valgrind (apt-get install valgrind)" >&2; exit 1; }

work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
go build -o "$work/shieldd" ./shieldd
go build -o "$work/loadgen" ./benchmarks/loadgen

# count N OUT [loadgen args…]: cachegrind's counts for a fresh shieldd that served N requests.
count() {
	local n=$1 out=$2 log="$work/shieldd.log"
	shift 2
	# GOGC=off: no collections, whose timing would differ between runs;
	# GOMAXPROCS=1: no idle processor spinning for work, which under
	# valgrind's one-thread-at-a-time scheduling can burn millions of
	# instructions in one run and none in the next.
	GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file="$out" \
		"$work/shieldd" serve --grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0 --memory-limit off >"$log" 2>&1 &
	pid=$!
	await_serving "$log" "$pid" 60 # valgrind starts it slowly
	local addr
	addr=$(served_addr "$log" grpc)
	# One pass over the corpus first, so that replayed requests are cache hits.
	"$work/loadgen" --addr "$addr" --mode evaluate --concurrency 4 --warmup 0 --duration 10m --max-requests 1302 >/dev/null
	"$work/loadgen" --addr "$addr" --mode "$MODE" --concurrency 4 --warmup 0 --duration 10m --max-requests "$n" "$@" |
		awk '$1 == "errors" && $2 != 0 {print "loadgen: " $2 " errors" > "/dev/stderr"; bad = 1} END {exit bad}'
	kill -TERM "$pid"
	wait "$pid" || true
	pid=
}

[ -z "${KEEP:-}" ] || echo "cachegrind files kept in $work"
if [ -n "$VS" ]; then
	echo "cachegrind: $MANY cached evaluate requests, then $MANY $MODE requests ($*): the difference"
	MODE=evaluate count "$MANY" "$work/few" # the corpus replayed: cache hits
	count "$MANY" "$work/many" "$@"
	per=$MANY
	what="beyond a cache hit, per request"
else
	echo "cachegrind: shieldd serving $FEW, then $MANY $MODE requests ($*)"
	count "$FEW" "$work/few" "$@"
	count "$MANY" "$work/many" "$@"
	per=$((MANY - FEW))
	what="per request"
fi
cg_diff "$work/few" "$work/many" >"$work/diff" 2>/dev/null
cg_annotate --auto=no --show=Ir,I1mr,D1mr --sort="$SORT" --show-percs=no "$work/diff" 2>/dev/null | awk -v per="$per" -v top="$TOP" -v what="$what" '
	function num(s) { gsub(",", "", s); return s + 0 }
	/PROGRAM TOTALS/ { printf "%s: %.0f Ir, %.0f I1mr, %.0f D1mr\n\n", what, num($1) / per, num($2) / per, num($3) / per; next }
	/file:function/ { rows = 1; if (top > 0) printf "     Ir   I1mr   D1mr  function (%s)\n", what; next }
	rows && NF >= 4 && shown < top {
		name = $4; sub(/^.*:/, "", name)
		printf "%7.0f %6.1f %6.1f  %s\n", num($1) / per, num($2) / per, num($3) / per, name
		shown++
	}'
