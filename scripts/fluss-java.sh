#!/usr/bin/env bash
# fluss-java.sh COMMAND [ARGS]: run scripts/FlussTool.java, the project's
# reference Fluss reader/writer built on the official Java client. Its sources
# are scripts/FlussTool.java (the entry point) and scripts/flusstool/*.java.
#
# The classpath comes from `scripts/fluss-cluster.sh classpath` (the
# fluss-client jars of $FLUSS_VERSION, downloaded once), or from
# $FLUSS_TOOL_CLASSPATH when set. The compiled classes are cached under
# $FLUSS_IGGY_CACHE/fluss-tool/<hash of every source file, this script, the
# classpath, the Fluss version and java> so that only the first call pays for
# javac, and an edit to any source file recompiles.
#
# The sources import org.apache.fluss. For a release before 0.8, whose classes
# are com.alibaba.fluss (e.g. 0.7.0), javac gets a copy with that prefix
# rewritten; what such a client lacks is reached through reflection and fails
# with a message naming it.
#
# `fluss-java.sh help` prints the commands; docs/json-mapping.md defines the
# JSON the tool reads and writes.
#
# Environment:
#   FLUSS_BOOTSTRAP       default for --bootstrap
#   FLUSS_SASL_USERNAME, FLUSS_SASL_PASSWORD, FLUSS_SASL_MECHANISM
#                         defaults for --sasl-user/--sasl-password/--sasl-mechanism
#   FLUSS_VERSION         Fluss client release (default: fluss-cluster.sh's); it
#                         also picks the class prefix, also with FLUSS_TOOL_CLASSPATH
#   FLUSS_TOOL_CLASSPATH  use this classpath instead of asking fluss-cluster.sh
#   FLUSS_TOOL_HEAP       -Xmx of the JVM (default 1g)
#   FLUSS_TOOL_JAVA_OPTS  extra JVM options
#   FLUSS_TOOL_DEBUG      set to print stack traces on errors and client warnings
#   FLUSS_TOOL_LOG_LEVEL  log4j level of the client's own logging (default OFF)

set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# Every source file of the tool, in a stable order (the cache key hashes them).
srcs=("$here/FlussTool.java" "$here"/flusstool/*.java)

die() { printf 'fluss-java: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=lib/fluss-version.sh
source "$here/lib/fluss-version.sh"
version="${FLUSS_VERSION:-$FLUSS_DEFAULT_VERSION}"
pkg="$(fluss_package "$version")" || die "FLUSS_VERSION must start with MAJOR.MINOR (e.g. 0.7.0), got '$version'"

# javac_sources DIR: prints the source files to compile: the originals, or for
# a client whose classes are not org.apache.fluss a rewritten copy under DIR.
javac_sources() {
	local dir=$1 f rel
	if [[ "$pkg" == org.apache.fluss ]]; then
		printf '%s\n' "${srcs[@]}"
		return 0
	fi
	for f in "${srcs[@]}"; do
		rel="${f#"$here"/}"
		mkdir -p "$dir/$(dirname "$rel")"
		sed "s/org\.apache\.fluss\b/$pkg/g" "$f" >"$dir/$rel"
		printf '%s\n' "$dir/$rel"
	done
}

command -v java >/dev/null 2>&1 || die "java not found on PATH; install a JDK 17 (Debian: apt-get install -y openjdk-17-jdk-headless)"
command -v javac >/dev/null 2>&1 || die "javac not found on PATH; install a JDK 17 (Debian: apt-get install -y openjdk-17-jdk-headless)"

if [[ -n "${FLUSS_TOOL_CLASSPATH:-}" ]]; then
	cp="$FLUSS_TOOL_CLASSPATH"
else
	[[ -x "$here/fluss-cluster.sh" ]] || die "$here/fluss-cluster.sh is missing; set FLUSS_TOOL_CLASSPATH"
	cp="$("$here/fluss-cluster.sh" classpath | tail -n 1)" || die "could not get the fluss-client classpath from fluss-cluster.sh"
	[[ -n "$cp" ]] || die "fluss-cluster.sh classpath printed nothing"
fi

cache_root="${FLUSS_IGGY_CACHE:-${HOME:-/root}/.cache/fluss-iggy}/fluss-tool"
java_bin="$(readlink -f "$(command -v java)")"
key="$({
	for f in "${srcs[@]}"; do
		printf '%s\n' "${f#"$here"/}"
		cat "$f"
	done
	cat "${BASH_SOURCE[0]}"
	printf '%s\n%s\n%s\n%s\n' "$cp" "$java_bin" "$version" "$pkg"
} | sha256sum | cut -c1-16)"
build="$cache_root/$key"

if [[ ! -f "$build/.ok" ]]; then
	mkdir -p "$cache_root"
	# One javac at a time; whoever waited finds the build done.
	exec {lock_fd}>"$cache_root/.lock"
	command -v flock >/dev/null 2>&1 && flock "$lock_fd"
fi
if [[ ! -f "$build/.ok" ]]; then
	tmp="$(mktemp -d "$cache_root/.build.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	mapfile -t javac_srcs < <(javac_sources "$tmp/src")
	((${#javac_srcs[@]} == ${#srcs[@]})) || die "could not write the $pkg sources to $tmp/src"
	if ! javac -nowarn -encoding UTF-8 -d "$tmp/classes" -cp "$cp" "${javac_srcs[@]}" >"$tmp/javac.log" 2>&1; then
		cat "$tmp/javac.log" >&2
		die "javac failed on $here/FlussTool.java and $here/flusstool/*.java (Fluss $version, classes $pkg)"
	fi
	cat >"$tmp/log4j2.properties" <<'EOF'
status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %d{HH:mm:ss.SSS} %-5p %c{1} - %m%n
rootLogger.level = ${sys:fluss.tool.log.level:-OFF}
rootLogger.appenderRef.err.ref = err
EOF
	touch "$tmp/.ok"
	# Another call may have finished the same build meanwhile; keep theirs.
	if ! mv -T "$tmp" "$build" 2>/dev/null; then
		rm -rf "$tmp"
	fi
	trap - EXIT
	# Drop builds of older sources (keep the newest few).
	# shellcheck disable=SC2012
	ls -1dt "$cache_root"/*/ 2>/dev/null | tail -n +6 | xargs -r rm -rf --
fi
# Release the lock before exec, or the tool would hold it while it runs.
if [[ -n "${lock_fd:-}" ]]; then
	exec {lock_fd}>&-
fi

# C1 only keeps short commands cheap on a busy machine; `scan --count-only`
# is the speed reference, so it gets the full JIT.
jit=(-XX:TieredStopAtLevel=1)
if [[ "${1:-}" == scan && " $* " == *" --count-only "* ]]; then
	jit=()
fi
# shellcheck disable=SC2206
extra=(${FLUSS_TOOL_JAVA_OPTS:-})
exec java \
	-XX:+IgnoreUnrecognizedVMOptions \
	"-Xmx${FLUSS_TOOL_HEAP:-1g}" \
	-XX:+UseSerialGC \
	"${jit[@]}" \
	--add-opens=java.base/java.nio=ALL-UNNAMED \
	--add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
	--add-opens=java.base/java.lang=ALL-UNNAMED \
	--add-opens=java.base/java.util=ALL-UNNAMED \
	-Dio.netty.tryReflectionSetAccessible=true \
	"-Dlog4j.configurationFile=$build/log4j2.properties" \
	"-Dfluss.tool.log.level=${FLUSS_TOOL_LOG_LEVEL:-$([[ -n "${FLUSS_TOOL_DEBUG:-}" ]] && echo WARN || echo OFF)}" \
	-Dlog4j2.shutdownHookEnabled=false \
	"${extra[@]}" \
	-cp "$build/classes:$cp" FlussTool "$@"
