# Shell helpers the benchmark scripts share; source it from the repo root.

# await_serving LOG [PID [SECONDS]]: wait (up to SECONDS, 10 by default)
# for the shieldd writing LOG to log that it serves, giving up early if
# process PID has exited; if it does not serve, print LOG and exit 1.
await_serving() {
	local log=$1 pid=${2:-} tenths=$((${3:-10} * 10))
	for _ in $(seq "$tenths"); do
		grep -q 'msg="shieldd serving"' "$log" && return 0
		if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	grep -q 'msg="shieldd serving"' "$log" && return 0
	echo "shieldd did not start ($log):" >&2
	cat "$log" >&2
	exit 1
}

# served_addr LOG KIND: the address (KIND grpc or http) the shieldd
# writing LOG serves on, from its start-up line.
served_addr() {
	grep -o " $2=[^ ]*" "$1" | head -1 | cut -d= -f2
}

# field OUTPUT LABEL: the first value on loadgen's text row LABEL, its
# unit (µs, %) dropped.
field() {
	awk -v label="$2" 'index($0, label) == 1 {sub(label, ""); print $1; exit}' <<<"$1" | sed 's/µs//; s/%//'
}
