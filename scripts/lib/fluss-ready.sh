# shellcheck shell=bash
# lib/fluss-ready.sh: ports and readiness: free ports, what the server logs say,
# waiting for start-up and printing log tails.
# Sourced by scripts/fluss-cluster.sh (the only entry point), which defines the
# settings (FLUSS_VERSION, CACHE_ROOT, heaps, timeouts, ...) and log/die/need.

# ---------------------------------------------------------------------------
# ports and readiness

port_open() { # port_open PORT: something accepts TCP connections on 127.0.0.1:PORT
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

port_taken() {
	if command -v ss >/dev/null 2>&1; then
		[[ -n "$(ss -Htan "( sport = :$1 )" 2>/dev/null)" ]] && return 0
	fi
	port_open "$1"
}

# pick_port: a free TCP port outside the ephemeral range (so an outgoing
# connection cannot take it in the meantime), reserved for PORT_HOLD_MINUTES
# across every script on this machine: clusters started at the same moment
# (parallel test packages) would otherwise pick the same port between the
# check and the server's bind. A reservation is a directory made with mkdir
# (atomic); it survives the $(pick_port) subshell and expires on its own.
PORT_RESERVATIONS="${TMPDIR:-/tmp}/fluss-iggy-ports"
PORT_HOLD_MINUTES=10
pick_port() {
	local i p lo=20000 hi=32000 eph_lo eph_hi
	if read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null; then
		# Stay below the ephemeral range when it starts inside ours.
		((eph_lo > lo + 1000 && eph_lo < hi)) && hi=$eph_lo
	fi
	mkdir -p "$PORT_RESERVATIONS" 2>/dev/null || true
	for ((i = 0; i < 400; i++)); do
		p=$((lo + RANDOM % (hi - lo)))
		reserve_port "$p" || continue
		port_taken "$p" && continue
		printf '%s' "$p"
		return 0
	done
	die "no free TCP port found in $lo-$((hi - 1))"
}

# reserve_port PORT: claim PORT for this machine's scripts; fails if another
# claim younger than PORT_HOLD_MINUTES holds it.
reserve_port() {
	local d="$PORT_RESERVATIONS/$1"
	mkdir "$d" 2>/dev/null && return 0
	[[ -d "$PORT_RESERVATIONS" && -w "$PORT_RESERVATIONS" ]] || return 0 # no shared place: check only
	[[ -n "$(find "$d" -maxdepth 0 -mmin "+$PORT_HOLD_MINUTES" 2>/dev/null)" ]] || return 1
	rmdir "$d" 2>/dev/null
	mkdir "$d" 2>/dev/null
}

# log_time FILE PATTERN [last]: the timestamp ("yyyy-MM-dd HH:mm:ss.SSS") of
# the first (or last) line of FILE matching the extended regex PATTERN.
log_time() {
	local line
	if [[ "${3:-}" == last ]]; then
		line="$(grep -E -- "$2" "$1" 2>/dev/null | tail -n 1)" || true
	else
		line="$(grep -m 1 -E -- "$2" "$1" 2>/dev/null)" || true
	fi
	[[ -n "$line" ]] && printf '%s' "${line:0:23}"
	return 0
}

# coordinator_knows_tablet ID: the CoordinatorServer has TabletServer ID in its
# context: it logged the new-server callback for ID, or ID had registered
# before the coordinator finished initialising its context. A server that
# registers while the coordinator loads the servers is in the load or gets
# the callback, and logs neither "callback" nor a time before the start of
# the initialisation: comparing with its end (not its start) keeps such a
# server from being waited for until the timeout (seen once in CI, 300 s).
coordinator_knows_tablet() {
	local id=$1 cs="$CLUSTER_DIR/logs/coordinator.log" ts="$CLUSTER_DIR/logs/tablet-$1.log"
	local registered init
	grep -qF 'End initializing coordinator context' "$cs" 2>/dev/null || return 1
	grep -qE "New tablet server callback for tablet server $id\$" "$cs" && return 0
	registered="$(log_time "$ts" "Registered tablet server $id " last)"
	init="$(log_time "$cs" 'End initializing coordinator context' last)"
	[[ -n "$registered" && -n "$init" && "$registered" < "$init" ]]
}

# log_count FILE PATTERN: how many lines of FILE match the extended regex PATTERN.
log_count() {
	local n
	n="$(grep -cE -- "$2" "$1" 2>/dev/null)" || true
	printf '%s' "${n:-0}"
}

# ---------------------------------------------------------------------------
# waiting for start-up

check_alive() {
	local name pid
	for name in "$@"; do
		pid="$(pid_of "$name")"
		if ! alive "$pid"; then
			print_logs 40 "$name" >&2
			die "$name (pid ${pid:-?}) exited during start-up (its log tail is above)"
		fi
	done
}

# wait_for DESCRIPTION CHECK-COMMAND PROCESS...: poll CHECK-COMMAND until it
# succeeds, failing early when one of the processes dies or time runs out.
wait_for() {
	local what=$1 check=$2
	shift 2
	while ! eval "$check"; do
		check_alive "$@"
		if [[ -n "${OWNER_PID:-}" ]] && ! kill -0 "$OWNER_PID" 2>/dev/null; then
			die "owner process $OWNER_PID exited while waiting for $what"
		fi
		if ((SECONDS >= WAIT_DEADLINE)); then
			print_logs 40 "$@" >&2
			die "timed out after ${START_TIMEOUT}s waiting for $what (logs in $CLUSTER_DIR/logs)"
		fi
		sleep 0.25
	done
}

print_logs() { # print_logs LINES [NAME...]: tails of the given (or all) logs
	local lines=$1 f name
	shift
	local files=()
	if (($# == 0)); then
		for f in "$CLUSTER_DIR"/logs/*; do
			[[ -s "$f" ]] && files+=("$f")
		done
	else
		for name in "$@"; do
			for f in "$CLUSTER_DIR/logs/$name.log" "$CLUSTER_DIR/logs/$name.out"; do
				[[ -s "$f" ]] && files+=("$f")
			done
		done
	fi
	for f in "${files[@]+"${files[@]}"}"; do
		printf '===== %s (last %s lines) =====\n' "$f" "$lines"
		tail -n "$lines" -- "$f"
	done
}
