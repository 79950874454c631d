#!/usr/bin/env bash
# Compares shieldd's HTTP mirror with Open Policy Agent's server holding an
# equivalent 20-rule tool-call policy (written below), one load tool
# (loadgen --http) for both, the same corpus mix, in alternating rounds:
# shieldd with its cache (the corpus replayed: hits after the first pass),
# shieldd uncached (every request unique), and OPA. Reports requests per
# second and the server's CPU time per request (from /proc/PID/stat), with
# each round's figures and the sums over all rounds.
#
# OPA is installed at a pinned version with `go install` (the Go module
# proxy) into a cache directory on first use; nothing of it is committed.
# All traffic is on 127.0.0.1.
#
# Environment: OPA_VERSION (default v1.22.3), ROUNDS (4), DURATION per
# server per round (5s), WARMUP (1s), CONCURRENCY (16 clients),
# BENCH_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/parapet-bench), CORPUS
# (a case directory for the load tool instead of its embedded corpus).
# Pinning: SHIELDD_CPUS / LOADGEN_CPUS (taskset lists, e.g. 0-7 and 8-15)
# put the servers and the load tool on separate cores where the machine
# has them.
set -euo pipefail
cd "$(dirname "$0")/.."

OPA_VERSION=${OPA_VERSION:-v1.22.3}
ROUNDS=${ROUNDS:-4}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
CONCURRENCY=${CONCURRENCY:-16}
BENCH_CACHE=${BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parapet-bench}

opa_dir="$BENCH_CACHE/opa-$OPA_VERSION"
opa="$opa_dir/opa"
if [ ! -x "$opa" ]; then
	echo "installing OPA $OPA_VERSION into $opa_dir (go install; a few minutes the first time)"
	mkdir -p "$opa_dir"
	GOBIN="$opa_dir" GOFLAGS=-mod=mod go install "github.com/open-policy-agent/opa@$OPA_VERSION"
fi

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

pin() { # pin CPUS command…: taskset when CPUS is set. Run in a subshell (& or $(…)): it execs, so $! is the server's own PID.
	local cpus=$1
	shift
	if [ -n "$cpus" ]; then exec taskset -c "$cpus" "$@"; else exec "$@"; fi
}

go build -o "$work/shieldd" ./shieldd
go build -o "$work/loadgen" ./benchmarks/loadgen

# The policy: the tool-call checks the corpus exercises, as Rego reads them
# from the request a client sends shieldd (protojson: actionType and the
# arguments as a JSON string in payloadJson). 20 rules: 12 block, 5
# escalate, 3 that allow what a block rule would otherwise catch.
cat >"$work/policy.rego" <<'REGO'
package parapet

args := json.unmarshal(input.payloadJson) if input.payloadJson
else := json.unmarshal(input.toolArgsJson) if input.toolArgsJson
else := {}

kind := input.actionType if input.actionType
else := input.toolName

cmd := object.get(args, "command", "")
path := object.get(args, "path", "")
url := object.get(args, "url", "")
content := object.get(args, "content", "")
shells := {"execute_command", "bash", "sh", "zsh", "shell"}
is_shell if shells[kind]

block contains "rce.download_pipe_shell" if { is_shell; regex.match(`(curl|wget)[^|;]*\|\s*(sudo\s+)?(ba|z|da)?sh`, cmd) }
block contains "rce.decode_execute" if { is_shell; regex.match(`base64\s+(-d|--decode)[^|]*\|\s*(ba|z)?sh`, cmd) }
block contains "destructive.rm_root" if { is_shell; regex.match(`rm\s+-[a-zA-Z]*r[a-zA-Z]*f?\s+(/|~|\$HOME)(\s|$)`, cmd) }
block contains "destructive.disk" if { is_shell; regex.match(`(mkfs|dd\s+if=.*of=/dev/)`, cmd) }
block contains "shell.reverse_shell" if { is_shell; regex.match(`(/dev/tcp/|nc\s+-e|ncat\s+.*-e|socat\s+.*exec)`, cmd) }
block contains "exfil.secret_upload" if { is_shell; regex.match(`curl\s.*(-d|--data|-F|-T)\s*@?.*(\.ssh|\.aws|\.env|id_rsa)`, cmd) }
block contains "creds.read_ssh_key" if { kind == "read_file"; regex.match(`(\.ssh/id_|\.aws/credentials|\.netrc|/etc/shadow)`, path) }
block contains "persist.shell_rc" if { kind in {"write_file", "edit_file"}; regex.match(`(\.bashrc|\.zshrc|\.profile|\.gitconfig|\.ssh/)`, path) }
block contains "privesc.system_files" if { kind in {"write_file", "edit_file"}; regex.match(`^/(etc|usr|bin|sbin|boot|dev)/`, path) }
block contains "secret.in_content" if { kind in {"write_file", "edit_file"}; regex.match(`(AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----)`, content) }
block contains "exfil.http_ip_literal" if { kind == "http_request"; regex.match(`^https?://[0-9]{1,3}(\.[0-9]{1,3}){3}`, url) }
block contains "injection.ignore_instructions" if { regex.match(`(?i)ignore (all )?(previous|prior) instructions`, input.payloadJson) }

escalate contains "git.force_push" if { is_shell; regex.match(`git\s+push\s+.*(--force|-f)(\s|$)`, cmd) }
escalate contains "shell.sudo" if { is_shell; regex.match(`(^|\s)sudo\s`, cmd) }
escalate contains "http.mutating" if { kind == "http_request"; upper(object.get(args, "method", "GET")) in {"POST", "PUT", "PATCH", "DELETE"} }
escalate contains "email.external" if { kind == "send_email"; not endswith(object.get(args, "to", ""), "@example.com") }
escalate contains "message.send" if { kind == "send_message" }

allowed_exception contains "fs.tmp_scratch" if { kind == "write_file"; startswith(path, "/tmp/") }
allowed_exception contains "shell.read_only_git" if { is_shell; regex.match(`^git\s+(status|log|diff|show)(\s|$)`, cmd) }
allowed_exception contains "http.docs_get" if { kind == "http_request"; regex.match(`^https://(docs\.|pkg\.go\.dev|developer\.mozilla\.org)`, url) }

blocking := block - allowed_exception

decision := "block" if count(blocking) > 0
else := "escalate" if count(escalate) > 0
else := "allow"

result := {"decision": decision, "rules": blocking | escalate}
REGO

free_port() {
	local p
	for p in $(seq 18181 18281); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo "no free port in 18181-18281" >&2
	exit 1
}

wait_port() { # wait_port PORT PID: until something listens (loadgen's preflight then checks health)
	for _ in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	echo "server pid $2 is not listening on 127.0.0.1:$1" >&2
	exit 1
}

shieldd_port=$(free_port)
pin "${SHIELDD_CPUS:-}" "$work/shieldd" serve --grpc-addr 127.0.0.1:0 --http-addr "127.0.0.1:$shieldd_port" \
	--log-level warn >"$work/shieldd.log" 2>&1 &
shieldd_pid=$!
pids+=("$shieldd_pid")
wait_port "$shieldd_port" "$shieldd_pid"

opa_port=$(free_port)
pin "${SHIELDD_CPUS:-}" "$opa" run --server --addr "127.0.0.1:$opa_port" --log-level error \
	--skip-version-check --disable-telemetry "$work/policy.rego" >"$work/opa.log" 2>&1 &
opa_pid=$!
pids+=("$opa_pid")
wait_port "$opa_port" "$opa_pid"

echo "shieldd pid $shieldd_pid on :$shieldd_port; OPA $OPA_VERSION pid $opa_pid on :$opa_port"
echo "cores: $(nproc); load average $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds of $DURATION per server, $CONCURRENCY clients"

run_one() { # run_one NAME → appends "NAME rps cpu_us" to $work/results
	local name=$1 out
	local args=(--concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" --mode evaluate)
	[ -n "${CORPUS:-}" ] && args+=(--corpus "$CORPUS")
	case $name in
	shieldd-cached) args+=(--http "http://127.0.0.1:$shieldd_port" --server-pid "$shieldd_pid") ;;
	shieldd-uncached) args+=(--http "http://127.0.0.1:$shieldd_port" --server-pid "$shieldd_pid" --unique) ;;
	opa) args+=(--http "http://127.0.0.1:$opa_port" --server-pid "$opa_pid" --http-input \
		--http-eval-path /v1/data/parapet/result --http-health-path /health) ;;
	esac
	out=$(pin "${LOADGEN_CPUS:-}" "$work/loadgen" "${args[@]}") || {
		echo "$out"
		echo "!!! $name: loadgen failed" >&2
		exit 1
	}
	local rps cpu
	rps=$(awk '$1 == "per" && $2 == "second" {print $3}' <<<"$out")
	cpu=$(awk '$1 == "server" && $2 == "CPU/req" {sub("µs", "", $3); print $3}' <<<"$out")
	printf '%-18s %8s req/s  %7s µs CPU/request  (%s)\n' "$name" "$rps" "$cpu" "$(grep -o 'allow [0-9]*, block [0-9]*, escalate [0-9]*' <<<"$out")"
	echo "$name $rps $cpu" >>"$work/results"
}

order=(shieldd-cached shieldd-uncached opa)
for r in $(seq "$ROUNDS"); do
	echo "--- round $r"
	if [ $((r % 2)) -eq 0 ]; then
		for ((i = ${#order[@]} - 1; i >= 0; i--)); do run_one "${order[i]}"; done
	else
		for name in "${order[@]}"; do run_one "$name"; done
	fi
done

echo
echo "=== over $ROUNDS rounds (mean of the rounds; loadgen's decisions and errors are checked per run)"
# Each round's own ratio too (its turns are next to each other) and
# their median, and the ratio of server CPU per request, which the load
# tool sharing the cores does not enter.
awk -f benchmarks/rounds.awk -f /dev/stdin "$work/results" <<'AWK'
{n[$1]++; rps[$1] += $2; cpu[$1] += $3; round[$1, n[$1]] = $2}
	END {
		for (k in n) { mr[k] = rps[k] / n[k]; mc[k] = cpu[k] / n[k] }
		split("shieldd-cached shieldd-uncached opa", ks, " ")
		for (i = 1; i <= 3; i++) { k = ks[i]; printf "%-18s %8.0f req/s  %7.1f µs CPU/request\n", k, mr[k], mc[k] }
		printf "shieldd cached ÷ OPA: %.1f× throughput; uncached ÷ cached: %.2f\n", mr["shieldd-cached"] / mr["opa"], mr["shieldd-uncached"] / mr["shieldd-cached"]
		printf "shieldd cached ÷ OPA by round:%s\n", by_round(round, "shieldd-cached", "opa", n["opa"], "%.1f×")
		printf "server CPU per request, OPA ÷ shieldd cached: %.1f×\n", mc["opa"] / mc["shieldd-cached"]
	}
AWK
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
