# shellcheck shell=bash
# lib/fluss-conf.sh: the files a cluster is configured by: zoo.cfg,
# log4j2.properties and server.yaml (write_configs), and cluster.env (read_env).
# Sourced by scripts/fluss-cluster.sh (the only entry point), which defines the
# settings (FLUSS_VERSION, CACHE_ROOT, heaps, timeouts, ...) and log/die/need.

# ---------------------------------------------------------------------------
# configuration

read_env() {
	local key value
	while IFS='=' read -r key value; do
		case "$key" in
		FLUSS_* | CLUSTER_*) printf -v "$key" '%s' "$value" ;;
		esac
	done <"$CLUSTER_DIR/cluster.env"
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
	cat >"$conf/log4j2.properties" <<EOF
status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = \${sys:log.file}
appender.file.append = true
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{yyyy-MM-dd HH:mm:ss.SSS} %-5p [%t] %c{1} - %m%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.zk.name = $FLUSS_PKG.shaded.zookeeper3
logger.zk.level = WARN
logger.curator.name = $FLUSS_PKG.shaded.curator5
logger.curator.level = WARN
EOF
	# server.yaml is Fluss's flat `key: value` format (a '#' starts a comment
	# anywhere, so no value may contain one).
	{
		printf 'zookeeper.address: 127.0.0.1:%s\n' "$ZK_PORT"
		printf 'zookeeper.path.root: /fluss\n'
		printf 'zookeeper.client.session-timeout: %s\n' "$ZK_SESSION_TIMEOUT"
		printf 'remote.data.dir: %s\n' "${REMOTE_DATA_DIR:-$CLUSTER_DIR/remote}"
		printf 'default.bucket.number: 1\n'
		printf 'default.replication.factor: 1\n'
		printf 'netty.server.num-network-threads: 1\n'
		printf 'netty.server.num-worker-threads: 3\n'
		if [[ "$CLUSTER_SASL" == 1 ]]; then
			printf 'internal.listener.name: INTERNAL\n'
			printf 'security.protocol.map: CLIENT:SASL\n'
			printf 'security.sasl.enabled.mechanisms: PLAIN\n'
			printf 'security.sasl.plain.jaas.config: %s.security.auth.sasl.plain.PlainLoginModule required user_%s="%s" user_%s="%s";\n' \
				"$FLUSS_PKG" "$SASL_USER" "$SASL_PASSWORD" "$SASL_USER2" "$SASL_PASSWORD2"
		fi
		local kv
		for kv in "${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"}"; do
			printf '%s: %s\n' "${kv%%=*}" "${kv#*=}"
		done
	} >"$conf/server.yaml"
}
