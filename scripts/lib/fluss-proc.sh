# shellcheck shell=bash
# lib/fluss-proc.sh: process control: the cluster directory's pid files, which
# processes are ours, signalling and stopping them, and starting the JVMs.
# Sourced by scripts/fluss-cluster.sh (the only entry point), which defines the
# settings (FLUSS_VERSION, CACHE_ROOT, heaps, timeouts, ...) and log/die/need.

# ---------------------------------------------------------------------------
# cluster directory state

# load_dir DIR: sets CLUSTER_DIR after checking it holds a cluster.
load_dir() {
	CLUSTER_DIR="$(abs_path "$1")"
	[[ -f "$CLUSTER_DIR/$MARKER" ]] || die "no cluster in $CLUSTER_DIR (nothing started there by this script)"
}

# pid_of NAME: the pid recorded for NAME, or nothing.
pid_of() {
	local f="$CLUSTER_DIR/pids/$1.pid"
	[[ -s "$f" ]] && cat "$f"
	return 0
}

# alive PID: PID is a live process (not a zombie).
alive() {
	local pid=$1 stat
	[[ "$pid" =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 0
	stat="${stat##*) }"
	[[ "${stat:0:1}" != Z ]]
}

# ours PID: PID is alive and was started for this cluster directory: one of
# its arguments is the directory or a path inside it (the JVMs name their log
# file there; a just-forked child still shows this script's --dir argument).
# So a recycled pid is never signalled.
ours() {
	local pid=$1 arg
	alive "$pid" || return 1
	while IFS= read -r -d '' arg; do
		[[ "$arg" == "$CLUSTER_DIR" || "$arg" == *"$CLUSTER_DIR/"* ]] && return 0
	done 2>/dev/null <"/proc/$pid/cmdline"
	return 1
}

# process names in stop order: supervise, watchdog, tablets, coordinator, zookeeper.
process_names() {
	local names=() f n
	[[ -f "$CLUSTER_DIR/pids/supervise.pid" ]] && names+=(supervise)
	[[ -f "$CLUSTER_DIR/pids/watchdog.pid" ]] && names+=(watchdog)
	for f in "$CLUSTER_DIR"/pids/tablet-*.pid; do
		[[ -e "$f" ]] || continue
		n="$(basename "$f" .pid)"
		names+=("$n")
	done
	[[ -f "$CLUSTER_DIR/pids/coordinator.pid" ]] && names+=(coordinator)
	[[ -f "$CLUSTER_DIR/pids/zookeeper.pid" ]] && names+=(zookeeper)
	printf '%s\n' "${names[@]}"
}

# signal_and_wait SIGNAL GRACE PID...: send SIGNAL to each live pid of ours,
# then wait up to GRACE seconds for them to exit. Prints the survivors.
signal_and_wait() {
	local sig=$1 grace=$2 pid
	shift 2
	local live=()
	for pid in "$@"; do
		if ours "$pid"; then
			kill "-$sig" "$pid" 2>/dev/null || true
			live+=("$pid")
		fi
	done
	local deadline=$((SECONDS + grace)) still
	while ((${#live[@]} > 0)); do
		still=()
		for pid in "${live[@]}"; do
			ours "$pid" && still+=("$pid")
		done
		live=("${still[@]+"${still[@]}"}")
		((${#live[@]} == 0 || SECONDS >= deadline)) && break
		sleep 0.2
	done
	printf '%s\n' "${live[@]+"${live[@]}"}"
}

# stop_pids GRACE PID...: SIGTERM, wait GRACE s, then SIGKILL and wait again.
stop_pids() {
	local grace=$1
	shift
	local left=("$@")
	((grace > 0)) && mapfile -t left < <(signal_and_wait TERM "$grace" "$@")
	if ((${#left[@]} > 0)) && [[ -n "${left[0]}" ]]; then
		mapfile -t left < <(signal_and_wait KILL 10 "${left[@]}")
		if ((${#left[@]} > 0)) && [[ -n "${left[0]}" ]]; then
			log "warning: pids ${left[*]} survived SIGKILL"
			return 1
		fi
	fi
	return 0
}

# stop_cluster: stop every process of CLUSTER_DIR (tablets first, then the
# coordinator, then ZooKeeper) and delete the directory.
stop_cluster() {
	local name pid ok=0
	local tablet_pids=() rest=()
	while read -r name; do
		[[ -n "$name" ]] || continue
		pid="$(pid_of "$name")"
		[[ -n "$pid" ]] || continue
		# The watchdog runs `down` itself (exec, same pid): leave it be.
		[[ "$name" == watchdog && "$pid" == "$$" ]] && continue
		case "$name" in
		watchdog) signal_and_wait KILL 5 "$pid" >/dev/null ;;
		supervise)
			# Its process group too: a tablet server restart it may be waiting on.
			[[ "$pid" == "$$" ]] || { kill -KILL -- "-$pid" 2>/dev/null || true; }
			signal_and_wait KILL 5 "$pid" >/dev/null
			;;
		tablet-*) tablet_pids+=("$pid") ;;
		*) rest+=("$name:$pid") ;;
		esac
	done < <(process_names)
	if ((STOP_GRACE == 0)); then
		# Nothing of a throwaway cluster needs a clean shutdown: kill all at once.
		local all=("${tablet_pids[@]+"${tablet_pids[@]}"}") item
		for item in "${rest[@]+"${rest[@]}"}"; do
			all+=("${item#*:}")
		done
		((${#all[@]} > 0)) && { stop_pids 0 "${all[@]}" || ok=1; }
	else
		((${#tablet_pids[@]} > 0)) && { stop_pids "$STOP_GRACE" "${tablet_pids[@]}" || ok=1; }
		local item
		for item in "${rest[@]+"${rest[@]}"}"; do
			stop_pids "$STOP_GRACE" "${item#*:}" || ok=1
		done
	fi
	if ((ok != 0)); then
		die "some processes of $CLUSTER_DIR could not be stopped; directory kept"
	fi
	rm -rf -- "$CLUSTER_DIR"
}

# ---------------------------------------------------------------------------
# starting processes

# jvm_opts NAME HEAP: JVM flags for one server process (result in JVM_OPTS).
jvm_opts() {
	local name=$1 heap=$2
	JVM_OPTS=(
		-XX:+IgnoreUnrecognizedVMOptions
		"-Xmx$heap" -Xms64m
		-XX:+ExitOnOutOfMemoryError
		# Arrow (servers and clients) needs java.nio opened on Java 17+; the
		# rest are the opens Fluss's own test JVMs use.
		--add-opens=java.base/java.nio=ALL-UNNAMED
		--add-opens=java.base/sun.nio.ch=ALL-UNNAMED
		--add-opens=java.base/java.lang=ALL-UNNAMED
		--add-opens=java.base/java.lang.reflect=ALL-UNNAMED
		--add-opens=java.base/java.util=ALL-UNNAMED
		--add-opens=java.base/java.util.concurrent=ALL-UNNAMED
		--add-opens=java.base/java.io=ALL-UNNAMED
		--add-opens=java.base/java.net=ALL-UNNAMED
		--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED
		-Dio.netty.tryReflectionSetAccessible=true
		-Djava.security.manager=allow
		"-Djava.io.tmpdir=$CLUSTER_DIR/tmp"
		"-Dlog.file=$CLUSTER_DIR/logs/$name.log"
		"-Dlog4j.configurationFile=file:$CLUSTER_DIR/conf/log4j2.properties"
		-Dlog4j2.shutdownHookEnabled=false
		-Dzookeeper.admin.enableServer=false
		"-Dfluss.iggy.cluster=$CLUSTER_DIR"
	)
}

# start_java NAME HEAP MAIN ARGS...: start one JVM detached from this shell,
# output appended to logs/NAME.out, pid in pids/NAME.pid.
start_java() {
	local name=$1 heap=$2
	shift 2
	jvm_opts "$name" "$heap"
	# The subshell cds into the cluster directory (relative paths such as
	# Fluss's "plugins" directory resolve there) and execs, so $! is the JVM.
	(cd "$CLUSTER_DIR" && exec setsid java "${JVM_OPTS[@]}" -cp "$SERVER_CP" "$@") \
		</dev/null >>"$CLUSTER_DIR/logs/$name.out" 2>&1 &
	printf '%s\n' "$!" >"$CLUSTER_DIR/pids/$name.pid"
}

# read_env: load DIR/cluster.env into variables.
start_tablet() { # start_tablet ID
	local id=$1 listeners
	mkdir -p "$CLUSTER_DIR/data/tablet-$id"
	if [[ "$CLUSTER_SASL" == 1 ]]; then
		listeners="INTERNAL://127.0.0.1:0,CLIENT://127.0.0.1:0"
	else
		listeners="FLUSS://127.0.0.1:0"
	fi
	start_java "tablet-$id" "$TS_HEAP" "$TS_MAIN" --configDir "$CLUSTER_DIR/conf" \
		"-Dtablet-server.id=$id" \
		"-Ddata.dir=$CLUSTER_DIR/data/tablet-$id" \
		"-Dbind.listeners=$listeners"
}

# check_alive NAME...: fail with the log tail if a process has exited.
