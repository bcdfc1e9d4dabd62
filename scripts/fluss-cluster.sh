#!/usr/bin/env bash
# fluss-cluster.sh: run a throwaway Apache Fluss cluster on 127.0.0.1 for tests.
#
# The cluster is ZooKeeper (the copy shaded into fluss-server), one
# CoordinatorServer and N TabletServers, each a separate JVM started from the
# jars Maven Central publishes. Everything a cluster writes (configuration,
# data, the local remote.data.dir, logs, pid files) lives in one directory,
# which `down` deletes, so several clusters can run side by side.
#
# Usage:
#   fluss-cluster.sh up [--tablets N] [--sasl] [--dir DIR] [--conf KEY=VALUE]... [--owner-pid PID]
#   fluss-cluster.sh down [--dir DIR]
#   fluss-cluster.sh status [--dir DIR]
#   fluss-cluster.sh kill-tablet ID [--signal KILL|TERM] [--dir DIR]
#   fluss-cluster.sh start-tablet ID [--dir DIR]
#   fluss-cluster.sh logs [--dir DIR] [--lines N]
#   fluss-cluster.sh fetch
#   fluss-cluster.sh classpath
#   fluss-cluster.sh help
#
# Run `fluss-cluster.sh help` for the details.

set -euo pipefail

SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
readonly SELF

FLUSS_VERSION="${FLUSS_VERSION:-0.9.1-incubating}"
CACHE_ROOT="${FLUSS_IGGY_CACHE:-${HOME:-/root}/.cache/fluss-iggy}"
LOG4J_VERSION="${FLUSS_LOG4J_VERSION:-2.25.4}"
DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
DEFAULT_DIR="${TMPDIR:-/tmp}/fluss-iggy-cluster"

# Heaps (JVM -Xmx syntax) and timeouts, overridable from the environment.
ZK_HEAP="${FLUSS_CLUSTER_ZK_HEAP:-256m}"
CS_HEAP="${FLUSS_CLUSTER_COORDINATOR_HEAP:-512m}"
TS_HEAP="${FLUSS_CLUSTER_TABLET_HEAP:-1g}"
# Seconds `up` / `start-tablet` wait for readiness: FLUSS_CLUSTER_READY_TIMEOUT,
# else the older name FLUSS_CLUSTER_TIMEOUT, else 300 (a loaded machine can
# take minutes to start the JVMs).
START_TIMEOUT="${FLUSS_CLUSTER_READY_TIMEOUT:-${FLUSS_CLUSTER_TIMEOUT:-300}}"
STOP_GRACE="${FLUSS_CLUSTER_STOP_GRACE:-5}"      # seconds `down` waits before SIGKILL
ZK_SESSION_TIMEOUT="${FLUSS_CLUSTER_ZK_SESSION_TIMEOUT:-15s}"

# Users known to a --sasl cluster (SASL/PLAIN).
readonly SASL_USER="admin" SASL_PASSWORD="admin-secret"
readonly SASL_USER2="alice" SASL_PASSWORD2="alice-secret"

readonly ZK_MAIN="org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.server.quorum.QuorumPeerMain"
readonly CS_MAIN="org.apache.fluss.server.coordinator.CoordinatorServer"
readonly TS_MAIN="org.apache.fluss.server.tablet.TabletServer"
readonly MARKER=".fluss-iggy-cluster"

# ---------------------------------------------------------------------------
# small helpers

# Neither may fail: stderr can be a pipe whose reader is gone.
log() { printf 'fluss-cluster: %s\n' "$*" >&2 || true; }
die() {
	printf 'fluss-cluster: error: %s\n' "$*" >&2 || true
	exit 1
}

usage() {
	cat <<EOF
Usage: $(basename "$SELF") COMMAND [OPTIONS]

Commands:
  up            start a cluster and wait until it serves clients
      --tablets N       number of TabletServers (default 1), ids 0..N-1
      --sasl            client listener uses SASL/PLAIN; users:
                          $SASL_USER / $SASL_PASSWORD  and  $SASL_USER2 / $SASL_PASSWORD2
                        FLUSS_BOOTSTRAP is the SASL listener; a plaintext one is
                        written as FLUSS_PLAINTEXT_BOOTSTRAP to the env file
      --dir DIR         cluster directory (default $DEFAULT_DIR); must not
                        exist or be empty; \`down\` deletes it
      --conf KEY=VALUE  extra server.yaml entry for every server (repeatable)
      --owner-pid PID   stop the cluster (SIGKILL) once process PID is gone, and
                        give up the start-up if PID exits meanwhile
  down          stop the processes \`up\` started (pid files) and delete DIR
      --kill            SIGKILL at once instead of SIGTERM (tablets, then the
                        coordinator, then ZooKeeper) with a grace period
  status        show the processes and the bootstrap address; exit 0 when all run
  kill-tablet ID [--signal KILL|TERM]   stop one TabletServer (default SIGKILL)
  start-tablet ID                       (re)start TabletServer ID and wait for it
  logs [--lines N]                      print the last N lines (default 50) of every log
  fetch         download the jars into the cache and exit
  classpath     print the fluss-client classpath (downloads the jars if needed)

Output of \`up\`: progress goes to stderr; stdout gets KEY=VALUE lines, the last
one FLUSS_BOOTSTRAP=127.0.0.1:PORT. The same lines are in DIR/cluster.env, logs
are in DIR/logs.

Environment:
  FLUSS_VERSION                     Fluss release (default 0.9.1-incubating)
  FLUSS_IGGY_CACHE                  jar cache (default ~/.cache/fluss-iggy); jars go to
                                    \$FLUSS_IGGY_CACHE/\$FLUSS_VERSION/{server,client}/
  FLUSS_CLUSTER_READY_TIMEOUT       seconds to wait for readiness (default 300;
                                    FLUSS_CLUSTER_TIMEOUT is an older name for it)
  FLUSS_CLUSTER_STOP_GRACE          seconds between SIGTERM and SIGKILL (default 5)
  FLUSS_CLUSTER_ZK_SESSION_TIMEOUT  ZooKeeper session timeout of the servers (default 15s)
  FLUSS_CLUSTER_ZK_HEAP / _COORDINATOR_HEAP / _TABLET_HEAP   -Xmx values (256m / 512m / 1g)
EOF
}

need() {
	command -v "$1" >/dev/null 2>&1 || die "'$1' not found on PATH; $2"
}

# abs_path PATH: absolute, normalised path (need not exist).
abs_path() {
	realpath -m -- "$1"
}

version_dir() { printf '%s/%s' "$CACHE_ROOT" "$FLUSS_VERSION"; }

# ---------------------------------------------------------------------------
# jars

# write_fetch_pom FILE ARTIFACT: a throwaway POM whose dependencies are the
# Fluss artifact plus log4j 2 with its SLF4J 1.7 binding (the Fluss fat jars
# carry slf4j-api 1.7.36 and no logging backend).
write_fetch_pom() {
	local file=$1 artifact=$2
	cat >"$file" <<EOF
<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.fluss-iggy</groupId>
  <artifactId>fetch-${artifact}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.fluss</groupId>
      <artifactId>${artifact}</artifactId>
      <version>${FLUSS_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>${LOG4J_VERSION}</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>${LOG4J_VERSION}</version>
    </dependency>
  </dependencies>
</project>
EOF
}

# jars_complete VDIR: a finished download of both jar sets is in VDIR.
jars_complete() {
	[[ -f "$1/.complete" ]] &&
		compgen -G "$1/server/fluss-server-*.jar" >/dev/null &&
		compgen -G "$1/client/fluss-client-*.jar" >/dev/null
}

# fetch_jars: make sure $CACHE_ROOT/$FLUSS_VERSION/{server,client} hold the
# jars. A finished download is marked by .complete; nothing is fetched again.
fetch_jars() {
	local vdir
	vdir="$(version_dir)"
	jars_complete "$vdir" && return 0
	rm -f "$vdir/.complete"
	need mvn "install Maven (Debian: apt-get install -y maven) to download the Fluss jars"
	mkdir -p "$vdir"
	# Serialise concurrent fetches of the same version.
	exec {lock_fd}>"$vdir/.lock"
	if command -v flock >/dev/null 2>&1; then
		flock "$lock_fd"
	fi
	if jars_complete "$vdir"; then
		exec {lock_fd}>&-
		return 0
	fi
	local role work
	for role in server client; do
		work="$(mktemp -d "$vdir/.fetch-$role.XXXXXX")"
		write_fetch_pom "$work/pom.xml" "fluss-$role"
		log "downloading fluss-$role $FLUSS_VERSION and its dependencies with mvn"
		if ! mvn -B -q -U -f "$work/pom.xml" \
			"$DEPENDENCY_PLUGIN:copy-dependencies" \
			-DincludeScope=runtime -DoutputDirectory="$work/jars" >"$work/mvn.log" 2>&1; then
			cat "$work/mvn.log" >&2
			rm -rf "$work"
			die "mvn could not fetch org.apache.fluss:fluss-$role:$FLUSS_VERSION (output above; is FLUSS_VERSION=$FLUSS_VERSION published on Maven Central?)"
		fi
		compgen -G "$work/jars/fluss-$role-*.jar" >/dev/null ||
			die "mvn finished but no fluss-$role jar is in $work/jars"
		rm -rf "${vdir:?}/$role"
		mv "$work/jars" "$vdir/$role"
		rm -rf "$work"
	done
	write_client_log4j "$vdir/log4j2-client.properties"
	touch "$vdir/.complete"
	exec {lock_fd}>&-
	log "jars cached in $vdir"
}

# write_client_log4j FILE: a log4j2 configuration for client programs that
# prints warnings and errors to stderr only.
write_client_log4j() {
	cat >"$1" <<'EOF'
status = warn
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %d{HH:mm:ss.SSS} %-5p %c{1} - %m%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = err
EOF
}

classpath_of() { # classpath_of ROLE: colon-separated jar list
	local vdir jars=() jar
	vdir="$(version_dir)"
	for jar in "$vdir/$1"/*.jar; do
		jars+=("$jar")
	done
	local IFS=:
	printf '%s' "${jars[*]}"
}

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

# process names in stop order: watchdog, tablets, coordinator, zookeeper.
process_names() {
	local names=() f n
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

# pick_port: a free TCP port below the ephemeral range (32768+), so it cannot
# be taken by an outgoing connection in the meantime.
PICKED_PORTS=" "
pick_port() {
	local i p
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 12000))
		[[ "$PICKED_PORTS" == *" $p "* ]] && continue
		port_taken "$p" && continue
		PICKED_PORTS+="$p "
		printf '%s' "$p"
		return 0
	done
	die "no free TCP port found in 20000-31999"
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
# context: it logged the new-server callback for ID, or it loaded the servers
# from ZooKeeper after ID had registered. Both need the context initialised.
coordinator_knows_tablet() {
	local id=$1 cs="$CLUSTER_DIR/logs/coordinator.log" ts="$CLUSTER_DIR/logs/tablet-$1.log"
	local registered init
	grep -qF 'End initializing coordinator context' "$cs" 2>/dev/null || return 1
	grep -qE "New tablet server callback for tablet server $id\$" "$cs" && return 0
	registered="$(log_time "$ts" "Registered tablet server $id " last)"
	init="$(log_time "$cs" 'Initializing coordinator context')"
	[[ -n "$registered" && -n "$init" && "$registered" < "$init" ]]
}

# log_count FILE PATTERN: how many lines of FILE match the extended regex PATTERN.
log_count() {
	local n
	n="$(grep -cE -- "$2" "$1" 2>/dev/null)" || true
	printf '%s' "${n:-0}"
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
read_env() {
	local key value
	while IFS='=' read -r key value; do
		case "$key" in
		FLUSS_* | CLUSTER_*) printf -v "$key" '%s' "$value" ;;
		esac
	done <"$CLUSTER_DIR/cluster.env"
}

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

write_configs() {
	local conf="$CLUSTER_DIR/conf"
	cat >"$conf/zoo.cfg" <<EOF
tickTime=1000
initLimit=10
syncLimit=5
dataDir=$CLUSTER_DIR/data/zookeeper
clientPort=$ZK_PORT
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
EOF
	cat >"$conf/log4j2.properties" <<'EOF'
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:log.file}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{yyyy-MM-dd HH:mm:ss.SSS} %-5p [%t] %c{1} - %m%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.zk.name = org.apache.fluss.shaded.zookeeper3
logger.zk.level = WARN
logger.curator.name = org.apache.fluss.shaded.curator5
logger.curator.level = WARN
EOF
	# server.yaml is Fluss's flat `key: value` format (a '#' starts a comment
	# anywhere, so no value may contain one).
	{
		printf 'zookeeper.address: 127.0.0.1:%s\n' "$ZK_PORT"
		printf 'zookeeper.path.root: /fluss\n'
		printf 'zookeeper.client.session-timeout: %s\n' "$ZK_SESSION_TIMEOUT"
		printf 'remote.data.dir: %s\n' "$CLUSTER_DIR/remote"
		printf 'default.bucket.number: 1\n'
		printf 'default.replication.factor: 1\n'
		printf 'netty.server.num-network-threads: 1\n'
		printf 'netty.server.num-worker-threads: 3\n'
		if [[ "$CLUSTER_SASL" == 1 ]]; then
			printf 'internal.listener.name: INTERNAL\n'
			printf 'security.protocol.map: CLIENT:SASL\n'
			printf 'security.sasl.enabled.mechanisms: PLAIN\n'
			printf 'security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_%s="%s" user_%s="%s";\n' \
				"$SASL_USER" "$SASL_PASSWORD" "$SASL_USER2" "$SASL_PASSWORD2"
		fi
		local kv
		for kv in "${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"}"; do
			printf '%s: %s\n' "${kv%%=*}" "${kv#*=}"
		done
	} >"$conf/server.yaml"
}

# ---------------------------------------------------------------------------
# commands

cmd_up() {
	local dir="$DEFAULT_DIR" tablets=1 sasl=0 owner=""
	EXTRA_CONF=()
	while (($# > 0)); do
		case "$1" in
		--tablets) tablets="${2:?--tablets needs a number}"; shift 2 ;;
		--tablets=*) tablets="${1#*=}"; shift ;;
		--sasl) sasl=1; shift ;;
		--dir) dir="${2:?--dir needs a path}"; shift 2 ;;
		--dir=*) dir="${1#*=}"; shift ;;
		--conf) EXTRA_CONF+=("${2:?--conf needs KEY=VALUE}"); shift 2 ;;
		--conf=*) EXTRA_CONF+=("${1#*=}"); shift ;;
		--owner-pid) owner="${2:?--owner-pid needs a pid}"; shift 2 ;;
		--owner-pid=*) owner="${1#*=}"; shift ;;
		*) die "up: unknown argument '$1' (see: $(basename "$SELF") help)" ;;
		esac
	done
	[[ "$tablets" =~ ^[1-9][0-9]*$ ]] || die "--tablets must be a positive number, got '$tablets'"
	[[ -z "$owner" || "$owner" =~ ^[0-9]+$ ]] || die "--owner-pid must be a pid, got '$owner'"
	local kv
	for kv in "${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"}"; do
		[[ "$kv" == ?*=* ]] || die "--conf expects KEY=VALUE, got '$kv'"
		[[ "$kv" != *'#'* ]] || die "--conf value may not contain '#' (server.yaml treats it as a comment): '$kv'"
	done

	OWNER_PID="$owner"
	need java "install a JDK 17 (Debian: apt-get install -y openjdk-17-jdk-headless)"
	local start=$SECONDS
	fetch_jars
	SERVER_CP="$(classpath_of server)"

	CLUSTER_DIR="$(abs_path "$dir")"
	if [[ -e "$CLUSTER_DIR/$MARKER" ]]; then
		die "$CLUSTER_DIR already holds a cluster; run '$(basename "$SELF") down --dir $CLUSTER_DIR' first"
	fi
	if [[ -e "$CLUSTER_DIR" ]]; then
		[[ -d "$CLUSTER_DIR" ]] || die "$CLUSTER_DIR exists and is not a directory"
		[[ -z "$(ls -A -- "$CLUSTER_DIR")" ]] || die "$CLUSTER_DIR is not empty; give an empty or new --dir"
	fi
	mkdir -p "$CLUSTER_DIR"/{conf,logs,pids,data,remote,tmp}
	printf 'fluss %s\n' "$FLUSS_VERSION" >"$CLUSTER_DIR/$MARKER"
	printf '%s\n' "$$" >"$CLUSTER_DIR/pids/up.pid"
	CLUSTER_SASL=$sasl

	# From here on a failure stops what was started and deletes the directory.
	# A vanished reader of our output must not kill this script half-way
	# (SIGPIPE would skip the clean-up): writes fail instead.
	UP_DONE=0
	trap 'up_failed' EXIT
	trap 'exit 130' INT TERM HUP
	trap '' PIPE

	# The watchdog starts first, so the cluster goes away with its owner
	# whatever happens to this script.
	if [[ -n "$owner" ]]; then
		setsid "$SELF" _watch "$owner" --dir "$CLUSTER_DIR/" \
			</dev/null >>"$CLUSTER_DIR/logs/watchdog.out" 2>&1 &
		printf '%s\n' "$!" >"$CLUSTER_DIR/pids/watchdog.pid"
	fi

	ZK_PORT="$(pick_port)"
	CS_PORT="$(pick_port)"
	local cs_listeners plain_bootstrap=""
	if ((sasl)); then
		CS_INTERNAL_PORT="$(pick_port)"
		cs_listeners="INTERNAL://127.0.0.1:$CS_INTERNAL_PORT,CLIENT://127.0.0.1:$CS_PORT"
		plain_bootstrap="127.0.0.1:$CS_INTERNAL_PORT"
	else
		cs_listeners="FLUSS://127.0.0.1:$CS_PORT"
	fi
	write_configs

	WAIT_DEADLINE=$((SECONDS + START_TIMEOUT))
	log "starting ZooKeeper on 127.0.0.1:$ZK_PORT (cluster dir $CLUSTER_DIR)"
	start_java zookeeper "$ZK_HEAP" "$ZK_MAIN" "$CLUSTER_DIR/conf/zoo.cfg"
	wait_for "ZooKeeper on port $ZK_PORT" "port_open $ZK_PORT" zookeeper

	log "starting CoordinatorServer on 127.0.0.1:$CS_PORT and $tablets TabletServer(s)"
	start_java coordinator "$CS_HEAP" "$CS_MAIN" --configDir "$CLUSTER_DIR/conf" \
		"-Dbind.listeners=$cs_listeners"
	local id names=(zookeeper coordinator)
	for ((id = 0; id < tablets; id++)); do
		start_tablet "$id"
		names+=("tablet-$id")
	done

	wait_for "CoordinatorServer on port $CS_PORT" "port_open $CS_PORT" "${names[@]}"
	for ((id = 0; id < tablets; id++)); do
		wait_for "TabletServer $id to register" \
			"(( \$(log_count '$CLUSTER_DIR/logs/tablet-$id.log' 'Registered tablet server') > 0 ))" "${names[@]}"
	done
	for ((id = 0; id < tablets; id++)); do
		wait_for "CoordinatorServer to see TabletServer $id" "coordinator_knows_tablet $id" "${names[@]}"
	done

	{
		printf 'FLUSS_CLUSTER_DIR=%s\n' "$CLUSTER_DIR"
		printf 'FLUSS_LOG_DIR=%s\n' "$CLUSTER_DIR/logs"
		printf 'FLUSS_VERSION=%s\n' "$FLUSS_VERSION"
		printf 'FLUSS_ZOOKEEPER=127.0.0.1:%s\n' "$ZK_PORT"
		printf 'CLUSTER_TABLETS=%s\n' "$tablets"
		printf 'CLUSTER_SASL=%s\n' "$sasl"
		if ((sasl)); then
			printf 'FLUSS_PLAINTEXT_BOOTSTRAP=%s\n' "$plain_bootstrap"
			printf 'FLUSS_SASL_MECHANISM=PLAIN\n'
			printf 'FLUSS_SASL_USERNAME=%s\n' "$SASL_USER"
			printf 'FLUSS_SASL_PASSWORD=%s\n' "$SASL_PASSWORD"
		fi
		printf 'FLUSS_BOOTSTRAP=127.0.0.1:%s\n' "$CS_PORT"
	} >"$CLUSTER_DIR/cluster.env"

	UP_DONE=1
	rm -f "$CLUSTER_DIR/pids/up.pid"
	trap - EXIT INT TERM HUP
	log "ready in $((SECONDS - start))s: Fluss $FLUSS_VERSION, $tablets tablet server(s)$( ((sasl)) && printf ', SASL/PLAIN') ; logs in $CLUSTER_DIR/logs"
	log "stop with: $(basename "$SELF") down --dir $CLUSTER_DIR"
	grep -v '^CLUSTER_' "$CLUSTER_DIR/cluster.env"
}

# up_failed: EXIT trap of `up`: stop whatever started and delete the directory.
up_failed() {
	local rc=$?
	((UP_DONE)) && return 0
	trap - EXIT INT TERM HUP
	if [[ -n "${CLUSTER_DIR:-}" && -f "$CLUSTER_DIR/$MARKER" ]]; then
		log "start-up failed; stopping what was started and deleting $CLUSTER_DIR"
		STOP_GRACE=1
		(stop_cluster) || true
	fi
	exit "$((rc == 0 ? 1 : rc))"
}

# parse_dir_args ARGS...: handles --dir (and returns the others in REST).
parse_dir_args() {
	local dir="$DEFAULT_DIR"
	REST=()
	while (($# > 0)); do
		case "$1" in
		--dir) dir="${2:?--dir needs a path}"; shift 2 ;;
		--dir=*) dir="${1#*=}"; shift ;;
		*) REST+=("$1"); shift ;;
		esac
	done
	DIR_ARG="$dir"
}

cmd_down() {
	parse_dir_args "$@"
	local arg
	for arg in "${REST[@]+"${REST[@]}"}"; do
		case "$arg" in
		--kill) STOP_GRACE=0 ;;
		*) die "down: unknown argument '$arg'" ;;
		esac
	done
	CLUSTER_DIR="$(abs_path "$DIR_ARG")"
	if [[ ! -f "$CLUSTER_DIR/$MARKER" ]]; then
		log "no cluster in $CLUSTER_DIR; nothing to stop"
		return 0
	fi
	stop_cluster
	log "stopped; deleted $CLUSTER_DIR"
}

cmd_status() {
	parse_dir_args "$@"
	((${#REST[@]} == 0)) || die "status: unknown argument '${REST[0]}'"
	CLUSTER_DIR="$(abs_path "$DIR_ARG")"
	if [[ ! -f "$CLUSTER_DIR/$MARKER" ]]; then
		echo "no cluster in $CLUSTER_DIR"
		return 3
	fi
	local name pid state down=0
	while read -r name; do
		[[ -n "$name" ]] || continue
		pid="$(pid_of "$name")"
		if ours "$pid"; then
			state=running
		else
			state=stopped
			down=1
		fi
		printf '%-12s pid %-8s %s\n' "$name" "${pid:--}" "$state"
	done < <(process_names)
	if [[ -f "$CLUSTER_DIR/cluster.env" ]]; then
		cat "$CLUSTER_DIR/cluster.env"
	else
		echo "(still starting: no cluster.env yet)"
		down=1
	fi
	return "$down"
}

cmd_kill_tablet() {
	local id="${1:-}" sig=KILL
	[[ "$id" =~ ^[0-9]+$ ]] || die "kill-tablet needs a tablet server id"
	shift
	parse_dir_args "$@"
	set -- "${REST[@]+"${REST[@]}"}"
	while (($# > 0)); do
		case "$1" in
		--signal) sig="${2:?--signal needs KILL or TERM}"; shift 2 ;;
		--signal=*) sig="${1#*=}"; shift ;;
		*) die "kill-tablet: unknown argument '$1'" ;;
		esac
	done
	[[ "$sig" == KILL || "$sig" == TERM ]] || die "--signal must be KILL or TERM"
	load_dir "$DIR_ARG"
	local pid
	pid="$(pid_of "tablet-$id")"
	ours "$pid" || die "tablet server $id is not running"
	local left
	left="$(signal_and_wait "$sig" 60 "$pid")"
	[[ -z "$left" ]] || die "tablet server $id (pid $pid) did not exit within 60s of SIG$sig"
	log "tablet server $id (pid $pid) stopped with SIG$sig"
}

cmd_start_tablet() {
	local id="${1:-}"
	[[ "$id" =~ ^[0-9]+$ ]] || die "start-tablet needs a tablet server id"
	shift
	parse_dir_args "$@"
	((${#REST[@]} == 0)) || die "start-tablet: unknown argument '${REST[0]}'"
	load_dir "$DIR_ARG"
	[[ -f "$CLUSTER_DIR/cluster.env" ]] || die "cluster in $CLUSTER_DIR is not fully started"
	read_env
	if ours "$(pid_of "tablet-$id")"; then
		die "tablet server $id is already running"
	fi
	need java "install a JDK 17"
	fetch_jars
	SERVER_CP="$(classpath_of server)"
	local callback="New tablet server callback for tablet server $id\$" before
	before="$(log_count "$CLUSTER_DIR/logs/coordinator.log" "$callback")"
	local start=$SECONDS
	start_tablet "$id"
	WAIT_DEADLINE=$((SECONDS + START_TIMEOUT))
	# A server killed with SIGKILL keeps its ZooKeeper node until its session
	# expires; the new one registers after that, and the coordinator logs it.
	wait_for "the CoordinatorServer to see TabletServer $id again" \
		"(( \$(log_count '$CLUSTER_DIR/logs/coordinator.log' '$callback') > $before ))" "tablet-$id"
	log "tablet server $id started in $((SECONDS - start))s"
}

cmd_logs() {
	local lines=50
	parse_dir_args "$@"
	set -- "${REST[@]+"${REST[@]}"}"
	while (($# > 0)); do
		case "$1" in
		--lines) lines="${2:?--lines needs a number}"; shift 2 ;;
		--lines=*) lines="${1#*=}"; shift ;;
		*) die "logs: unknown argument '$1'" ;;
		esac
	done
	load_dir "$DIR_ARG"
	print_logs "$lines"
}

# _watch OWNER --dir DIR: internal; stops the cluster once OWNER has exited.
cmd_watch() {
	local owner=$1
	shift
	parse_dir_args "$@"
	CLUSTER_DIR="$(abs_path "$DIR_ARG")"
	while kill -0 "$owner" 2>/dev/null; do
		[[ -f "$CLUSTER_DIR/$MARKER" ]] || exit 0
		sleep 2
	done
	# An `up` still running notices the owner's end and cleans up itself;
	# stopping the cluster under its feet could miss a JVM it is starting.
	local up_pid
	up_pid="$(pid_of up)"
	while [[ -n "$up_pid" ]] && alive "$up_pid"; do
		[[ -f "$CLUSTER_DIR/$MARKER" ]] || exit 0
		sleep 0.5
	done
	[[ -f "$CLUSTER_DIR/$MARKER" ]] || exit 0
	log "owner process $owner is gone; stopping the cluster in $CLUSTER_DIR"
	exec "$SELF" down --kill --dir "$CLUSTER_DIR"
}

main() {
	local cmd="${1:-help}"
	(($# > 0)) && shift
	case "$cmd" in
	up) cmd_up "$@" ;;
	down) cmd_down "$@" ;;
	status) cmd_status "$@" ;;
	kill-tablet) cmd_kill_tablet "$@" ;;
	start-tablet) cmd_start_tablet "$@" ;;
	logs) cmd_logs "$@" ;;
	fetch)
		fetch_jars
		log "jars for Fluss $FLUSS_VERSION are in $(version_dir)"
		;;
	classpath)
		fetch_jars
		classpath_of client
		echo
		;;
	_watch) cmd_watch "$@" ;;
	help | -h | --help) usage ;;
	*)
		usage >&2
		die "unknown command '$cmd'"
		;;
	esac
}

main "$@"
