# shellcheck shell=bash
# lib/fluss-fetch.sh: downloading the Fluss jars with Maven into the cache and
# building class paths from them.
# Sourced by scripts/fluss-cluster.sh (the only entry point), which defines the
# settings (FLUSS_VERSION, CACHE_ROOT, heaps, timeouts, ...) and log/die/need.

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
      <groupId>${FLUSS_GROUP}</groupId>
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
			die "mvn could not fetch $FLUSS_GROUP:fluss-$role:$FLUSS_VERSION (output above; is FLUSS_VERSION=$FLUSS_VERSION published on Maven Central?)"
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
