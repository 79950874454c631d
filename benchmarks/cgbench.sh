#!/usr/bin/env bash
# Instructions per iteration of one Go benchmark, counted by valgrind's
# cachegrind: repeatable for a given binary and input whatever else the
# machine is doing, so two builds compare on a noisy host.
#
#   benchmarks/cgbench.sh PACKAGE BENCHMARK [test flags…]
#   benchmarks/cgbench.sh ./rules/heuristics '^BenchmarkAnalyze$/^benign$'
#   benchmarks/cgbench.sh ./benchmarks '^BenchmarkPipelineMiss$/^one-off$' -corpus /tmp/old-corpus
#
# The benchmark runs twice under cachegrind (GOGC=off, GOMAXPROCS=1, no
# asynchronous preemption: valgrind cannot follow Go's preemption
# signals; no RDTSCP: valgrind 3.19 stops at it on some AMD hosts, where
# the runtime's cputicks uses it), for N1 and N2 iterations (-benchtime Nx); the difference of
# the two counts divided by N2 − N1 is one iteration, set-up cancelled.
# Environment: N1 (1000), N2 (6000), BIN (a test binary to use instead of
# building PACKAGE). Needs valgrind (apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."

[ $# -ge 2 ] || { echo "usage: $0 PACKAGE BENCHMARK [test flags…]" >&2; exit 2; }
pkg=$1 bench=$2
shift 2
N1=${N1:-1000}
N2=${N2:-6000}
command -v valgrind >/dev/null || { echo "cgbench.sh needs valgrind (apt-get install valgrind)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${BIN:-}
if [ -z "$bin" ]; then
	bin=$work/bench.test
	go test -c -o "$bin" "$pkg"
fi

count() {
	local n=$1
	shift
	GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOGC=off GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=no \
		--cachegrind-out-file=/dev/null "$bin" -test.run '^$' -test.bench "$bench" -test.benchtime "${n}x" "$@" \
		>"$work/out" 2>"$work/err" || { cat "$work/err" >&2; exit 1; }
	awk '/I *refs/ {gsub(",", "", $NF); print $NF}' "$work/err"
}
a=$(count "$N1" "$@")
b=$(count "$N2" "$@")
echo "$bench: $(((b - a) / (N2 - N1))) instructions per iteration ($N1 and $N2 iterations under cachegrind)"
