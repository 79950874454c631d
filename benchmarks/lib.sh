# Shell helpers the benchmark scripts share; source it from the repo root.

# await_serving LOG: wait (up to 10 s) for the shieldd writing LOG to log
# that it serves; if it does not, print LOG and exit 1.
await_serving() {
	for _ in $(seq 100); do
		grep -q 'msg="shieldd serving"' "$1" && return 0
		sleep 0.1
	done
	grep -q 'msg="shieldd serving"' "$1" && return 0
	cat "$1"
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
