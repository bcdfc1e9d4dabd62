# shellcheck shell=bash
# lib/fluss-health.sh: a running cluster's health: `diagnose` (what state the
# processes and their logs are in, for a failed run's output) and `supervise`
# (restart a tablet server that exited or that the coordinator counts as dead,
# and a coordinator that has wedged).
# Sourced by scripts/fluss-cluster.sh (the only entry point), which defines
# log/die, the process helpers (lib/fluss-proc.sh) and cmd_start_tablet.

# Lines of a server log that tell a server's life: sessions, membership,
# shutdowns and fatal errors.
readonly LIFE_EVENTS='expired|re-initialized|failure callback|New tablet server callback|[Ss]hutting down|[Ss]hutdown|[Ff]atal|OutOfMemory|No space left'

# diagnose_log FILE: the first errors as written, the lifecycle lines, and the
# warnings and errors by message (digits folded, so a flood is one line).
diagnose_log() {
	local f=$1
	printf -- '--- %s: %s warnings and errors\n' "$(basename "$f")" "$(log_count "$f" ' (WARN|ERROR) ')"
	echo '  first errors:'
	grep -E ' ERROR ' "$f" | head -n 10 | cut -c1-400 | sed 's/^/    /' || true
	echo '  lifecycle:'
	grep -E -- "$LIFE_EVENTS" "$f" | tail -n 20 | cut -c1-300 | sed 's/^/    /' || true
	echo '  by message (count, first 15):'
	grep -E ' (WARN|ERROR) ' "$f" | sed -E 's/^[0-9-]+ [0-9:.]+ +//; s/[0-9]+/N/g' | cut -c1-240 |
		sort | uniq -c | sort -rn | head -n 15 | sed 's/^/    /' || true
}

# cmd_diagnose --dir DIR: every process's state, every log's summary, the
# JVMs' own output (a JVM writes OutOfMemoryError and crashes there), disk and memory.
cmd_diagnose() {
	parse_dir_args "$@"
	((${#REST[@]} == 0)) || die "diagnose: unknown argument '${REST[0]}'"
	load_dir "$DIR_ARG"
	local name pid f
	echo "--- processes of $CLUSTER_DIR"
	while read -r name; do
		[[ -n "$name" ]] || continue
		pid="$(pid_of "$name")"
		if ours "$pid"; then echo "  $name pid $pid running"; else echo "  $name pid ${pid:--} EXITED"; fi
	done < <(process_names)
	[[ -s "$CLUSTER_DIR/supervise.log" ]] && { echo "--- supervise.log"; cat "$CLUSTER_DIR/supervise.log"; }
	for f in "$CLUSTER_DIR"/logs/*.log; do
		[[ -f "$f" ]] && diagnose_log "$f"
	done
	for f in "$CLUSTER_DIR"/logs/*.out; do
		[[ -s "$f" ]] || continue
		echo "--- $(basename "$f") (last 15 lines)"
		tail -n 15 "$f" | cut -c1-300
	done
	echo "--- disk and memory"
	df -h "$CLUSTER_DIR" /tmp 2>/dev/null || true
	free -m 2>/dev/null || true
}

# tablet_counted_dead ID: the coordinator's last word on tablet server ID is
# its failure callback (the server's ZooKeeper node went away and did not come back).
tablet_counted_dead() {
	local last
	last="$(grep -E "Tablet server failure callback for $1\.|New tablet server callback for tablet server $1\$" \
		"$CLUSTER_DIR/logs/coordinator.log" 2>/dev/null | tail -n 1)" || true
	[[ "$last" == *"failure callback"* ]]
}

# supervise_note MESSAGE: to stderr and to DIR/supervise.log (which diagnose prints).
supervise_note() {
	log "supervise: $*"
	printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >>"$CLUSTER_DIR/supervise.log"
}

# restart_tablet ID REASON: SIGKILL what is left of tablet server ID and start it again.
restart_tablet() {
	local id=$1 reason=$2 pid
	supervise_note "tablet server $id: $reason; restarting it"
	print_logs 30 "tablet-$id" >&2
	pid="$(pid_of "tablet-$id")"
	ours "$pid" && signal_and_wait KILL 30 "$pid" >/dev/null
	if (cmd_start_tablet "$id" --dir "$CLUSTER_DIR"); then
		supervise_note "tablet server $id is back"
	else
		supervise_note "tablet server $id could not be restarted"
	fi
}

# A Fluss coordinator that throws while it builds a request batch for the
# tablet servers (seen once: a NullPointerException for a table whose creation
# event it had missed) leaves the batch filled, and from then on fails every
# change (leader elections of new tables and partitions) with this message.
readonly COORDINATOR_WEDGED='is not empty while creating a new one'

# restart_coordinator REASON: restart the coordinator (cmd_restart_coordinator).
restart_coordinator() {
	supervise_note "coordinator: $1; restarting it"
	print_logs 30 coordinator >&2
	if (cmd_restart_coordinator --dir "$CLUSTER_DIR"); then
		supervise_note "coordinator is back"
	else
		supervise_note "coordinator could not be restarted"
	fi
}

# cmd_supervise --dir DIR [--interval S] [--grace S]: until the cluster is gone,
# restart a tablet server whose process exited, or that the coordinator has
# counted as dead for GRACE seconds (default 60) while its process runs, and a
# coordinator whose log says it has wedged (COORDINATOR_WEDGED). An exited
# coordinator or ZooKeeper is only reported: without them there is nothing to rejoin.
cmd_supervise() {
	parse_dir_args "$@"
	local interval=5 grace=60
	set -- "${REST[@]+"${REST[@]}"}"
	while (($# > 0)); do
		case "$1" in
		--interval) interval="${2:?--interval needs seconds}"; shift 2 ;;
		--grace) grace="${2:?--grace needs seconds}"; shift 2 ;;
		*) die "supervise: unknown argument '$1'" ;;
		esac
	done
	load_dir "$DIR_ARG"
	read_env
	printf '%s\n' "$$" >"$CLUSTER_DIR/pids/supervise.pid"
	local -A dead_since=() reported=()
	local name pid id wedged seen_wedged=0 cs_restarts=0
	while [[ -f "$CLUSTER_DIR/$MARKER" ]]; do
		wedged="$(log_count "$CLUSTER_DIR/logs/coordinator.log" "$COORDINATOR_WEDGED")"
		if ((wedged > seen_wedged)) && ours "$(pid_of coordinator)"; then
			seen_wedged=$wedged
			if ((cs_restarts++ < 3)); then
				restart_coordinator "it logged a request batch left over from a failed change ('$COORDINATOR_WEDGED')"
			elif ((cs_restarts == 4)); then
				supervise_note "coordinator: wedged again after 3 restarts; not restarted any more"
			fi
		fi
		while read -r name; do
			[[ -n "$name" && "$name" != watchdog && "$name" != supervise ]] || continue
			pid="$(pid_of "$name")"
			[[ -f "$CLUSTER_DIR/$MARKER" ]] || return 0
			if ! ours "$pid"; then
				case "$name" in
				tablet-*) restart_tablet "${name#tablet-}" "its process (pid ${pid:-?}) has exited" ;;
				*)
					[[ -n "${reported[$name]:-}" ]] && continue
					reported[$name]=1
					supervise_note "$name (pid ${pid:-?}) has exited; not restarted"
					print_logs 40 "$name" >&2
					;;
				esac
				continue
			fi
			[[ "$name" == tablet-* ]] || continue
			id="${name#tablet-}"
			if ! tablet_counted_dead "$id"; then
				unset "dead_since[$id]"
			elif [[ -z "${dead_since[$id]:-}" ]]; then
				dead_since[$id]=$SECONDS
			elif ((SECONDS - dead_since[$id] >= grace)); then
				unset "dead_since[$id]"
				restart_tablet "$id" "counted as dead by the coordinator for ${grace}s while it runs"
			fi
		done < <(process_names)
		sleep "$interval"
	done
}
