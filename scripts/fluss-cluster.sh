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
#   fluss-cluster.sh up [--tablets N] [--sasl] [--remote-storage s3] [--dir DIR] [--conf KEY=VALUE]... [--owner-pid PID]
#   fluss-cluster.sh down [--dir DIR]
#   fluss-cluster.sh status [--dir DIR]
#   fluss-cluster.sh kill-tablet ID [--signal KILL|TERM] [--dir DIR]
#   fluss-cluster.sh start-tablet ID [--dir DIR]
#   fluss-cluster.sh restart-coordinator [--dir DIR]
#   fluss-cluster.sh logs [--dir DIR] [--lines N]
#   fluss-cluster.sh fetch
#   fluss-cluster.sh fetch-s3
#   fluss-cluster.sh classpath
#   fluss-cluster.sh diagnose|supervise [--dir DIR]
#   fluss-cluster.sh help
#
# Run `fluss-cluster.sh help` for the details.
#
# This file is the only entry point: settings, argument parsing and the
# commands. The pieces with a job of their own are sourced from scripts/lib/:
#   fluss-version.sh  the default release, a release's Maven group and class prefix
#   fluss-fetch.sh  downloading the jars with Maven, class paths
#   fluss-conf.sh   writing zoo.cfg / log4j2.properties / server.yaml, reading cluster.env
#   fluss-proc.sh   pid files, signalling and stopping processes, starting the JVMs
#   fluss-ready.sh  free ports, log-based readiness checks, waiting, log tails
#   fluss-health.sh diagnose (a failed run's report) and supervise (tablet and
#                   wedged-coordinator restarts)
#   fluss-s3.sh     --remote-storage s3: a SeaweedFS S3 server, bucket, fluss-fs-s3 plugin

set -euo pipefail

SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
readonly SELF

# shellcheck source=lib/fluss-version.sh
source "$(dirname "$SELF")/lib/fluss-version.sh"
FLUSS_VERSION="${FLUSS_VERSION:-$FLUSS_DEFAULT_VERSION}"
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
      --remote-storage s3  remote.data.dir on a SeaweedFS S3 server started in DIR
                        (bucket, fluss-fs-s3 plugin, 1kb segments, 1s tiering
                        unless --conf sets them); FLUSS_S3_* in the env file
      --owner-pid PID   stop the cluster (SIGKILL) once process PID is gone, and
                        give up the start-up if PID exits meanwhile
  down          stop the processes \`up\` started (pid files) and delete DIR
      --kill            SIGKILL at once instead of SIGTERM (tablets, then the
                        coordinator, then ZooKeeper) with a grace period
  status        show the processes and the bootstrap address; exit 0 when all run
  kill-tablet ID [--signal KILL|TERM]   stop one TabletServer (default SIGKILL)
  start-tablet ID                       (re)start TabletServer ID and wait for it
  restart-coordinator   stop the CoordinatorServer (SIGTERM, SIGKILL after 30s), start
                it on the same listeners and wait until it has loaded the cluster
  logs [--lines N]                      print the last N lines (default 50) of every log
  diagnose      the processes' states, each log's first errors, lifecycle lines and
                warnings by message, the JVMs' output, disk and memory
  supervise [--interval S] [--grace S]  until \`down\`, restart a tablet server whose
                process exited or that the coordinator counts as dead for S
                seconds (default 60), and a coordinator that logs a wedged request
                batch (it fails every later change); an exited coordinator or
                ZooKeeper is reported only
  fetch         download the jars into the cache and exit
  fetch-s3      build SeaweedFS (weed, minutes) and fetch fluss-fs-s3 into the cache
  classpath     print the fluss-client classpath (downloads the jars if needed)

Output of \`up\`: progress goes to stderr; stdout gets KEY=VALUE lines, the last
one FLUSS_BOOTSTRAP=127.0.0.1:PORT. The same lines are in DIR/cluster.env, logs
are in DIR/logs.

Environment:
  FLUSS_VERSION                     Fluss release (default 0.9.1-incubating); before 0.8
                                    the jars and classes are com.alibaba.fluss (e.g. 0.7.0)
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
# the pieces with a job of their own (scripts/lib/)

LIB_DIR="$(dirname "$SELF")/lib"
readonly LIB_DIR
# shellcheck source=lib/fluss-fetch.sh
source "$LIB_DIR/fluss-fetch.sh"
# shellcheck source=lib/fluss-conf.sh
source "$LIB_DIR/fluss-conf.sh"
# shellcheck source=lib/fluss-proc.sh
source "$LIB_DIR/fluss-proc.sh"
# shellcheck source=lib/fluss-health.sh
source "$LIB_DIR/fluss-health.sh"
# shellcheck source=lib/fluss-ready.sh
source "$LIB_DIR/fluss-ready.sh"
# shellcheck source=lib/fluss-s3.sh
source "$LIB_DIR/fluss-s3.sh"

# release_names: from FLUSS_VERSION, the release's Maven group and class
# prefix (com.alibaba.fluss before 0.8, org.apache.fluss from 0.8 on) and the
# names made of it: the jars to fetch, the main classes, the logger names and
# the SASL login module. Called at start and after read_env (a cluster runs the
# version its cluster.env names).
release_names() {
	FLUSS_PKG="$(fluss_package "$FLUSS_VERSION")" ||
		die "FLUSS_VERSION must start with MAJOR.MINOR (e.g. 0.9.1-incubating or 0.7.0), got '$FLUSS_VERSION'"
	FLUSS_GROUP="$FLUSS_PKG"
	ZK_MAIN="$FLUSS_PKG.shaded.zookeeper3.org.apache.zookeeper.server.quorum.QuorumPeerMain"
	CS_MAIN="$FLUSS_PKG.server.coordinator.CoordinatorServer"
	TS_MAIN="$FLUSS_PKG.server.tablet.TabletServer"
}
release_names

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
		--remote-storage) REMOTE_STORAGE="${2:?--remote-storage needs s3}"; shift 2 ;;
		--remote-storage=*) REMOTE_STORAGE="${1#*=}"; shift ;;
		*) die "up: unknown argument '$1' (see: $(basename "$SELF") help)" ;;
		esac
	done
	[[ "$tablets" =~ ^[1-9][0-9]*$ ]] || die "--tablets must be a positive number, got '$tablets'"
	[[ -z "$REMOTE_STORAGE" || "$REMOTE_STORAGE" == s3 ]] || die "--remote-storage must be s3, got '$REMOTE_STORAGE'"
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
	if [[ "$REMOTE_STORAGE" == s3 ]]; then s3_up; fi
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
		printf 'CLUSTER_CS_LISTENERS=%s\n' "$cs_listeners"
		if ((sasl)); then
			printf 'FLUSS_PLAINTEXT_BOOTSTRAP=%s\n' "$plain_bootstrap"
			printf 'FLUSS_SASL_MECHANISM=PLAIN\n'
			printf 'FLUSS_SASL_USERNAME=%s\n' "$SASL_USER"
			printf 'FLUSS_SASL_PASSWORD=%s\n' "$SASL_PASSWORD"
		fi
		s3_env
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
		(s3_stop) || true
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
	s3_stop
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

# open_started_cluster COMMAND [--dir DIR]: for a command that starts a server
# of a running cluster: the cluster's directory and cluster.env, its release's
# names and the server class path.
open_started_cluster() {
	local cmd=$1
	shift
	parse_dir_args "$@"
	((${#REST[@]} == 0)) || die "$cmd: unknown argument '${REST[0]}'"
	load_dir "$DIR_ARG"
	[[ -f "$CLUSTER_DIR/cluster.env" ]] || die "cluster in $CLUSTER_DIR is not fully started"
	read_env
	release_names
	need java "install a JDK 17"
	fetch_jars
	SERVER_CP="$(classpath_of server)"
}

cmd_start_tablet() {
	local id="${1:-}"
	[[ "$id" =~ ^[0-9]+$ ]] || die "start-tablet needs a tablet server id"
	shift
	open_started_cluster start-tablet "$@"
	if ours "$(pid_of "tablet-$id")"; then
		die "tablet server $id is already running"
	fi
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

# cmd_restart_coordinator [--dir DIR]: stop the CoordinatorServer and start a
# new one on the same listeners. The new one reads every tablet server, table,
# partition and bucket assignment from ZooKeeper and elects the missing leaders.
cmd_restart_coordinator() {
	open_started_cluster restart-coordinator "$@"
	[[ -n "${CLUSTER_CS_LISTENERS:-}" ]] ||
		die "$CLUSTER_DIR/cluster.env does not name the coordinator's listeners (CLUSTER_CS_LISTENERS); the cluster was started by an older $(basename "$SELF")"
	local pid left start=$SECONDS port="${FLUSS_BOOTSTRAP##*:}"
	pid="$(pid_of coordinator)"
	if ours "$pid"; then
		# SIGTERM lets it close its ZooKeeper session, so the new one need not
		# wait for the old registration to expire.
		left="$(signal_and_wait TERM 30 "$pid")"
		[[ -z "$left" ]] || left="$(signal_and_wait KILL 30 "$pid")"
		[[ -z "$left" ]] || die "coordinator (pid $pid) did not exit after SIGKILL"
	fi
	local loaded='End initializing coordinator context' before
	before="$(log_count "$CLUSTER_DIR/logs/coordinator.log" "$loaded")"
	start_java coordinator "$CS_HEAP" "$CS_MAIN" --configDir "$CLUSTER_DIR/conf" \
		"-Dbind.listeners=$CLUSTER_CS_LISTENERS"
	WAIT_DEADLINE=$((SECONDS + START_TIMEOUT))
	wait_for "the new CoordinatorServer to load the cluster" \
		"(( \$(log_count '$CLUSTER_DIR/logs/coordinator.log' '$loaded') > $before ))" coordinator
	wait_for "the CoordinatorServer on port $port" "port_open $port" coordinator
	log "coordinator (pid $(pid_of coordinator)) started in $((SECONDS - start))s"
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
	restart-coordinator) cmd_restart_coordinator "$@" ;;
	logs) cmd_logs "$@" ;;
	diagnose) cmd_diagnose "$@" ;;
	supervise) cmd_supervise "$@" ;;
	fetch)
		fetch_jars
		log "jars for Fluss $FLUSS_VERSION are in $(version_dir)"
		;;
	fetch-s3) log "S3 pieces: $(s3_weed_bin) $(s3_plugin_jar)" ;;
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
