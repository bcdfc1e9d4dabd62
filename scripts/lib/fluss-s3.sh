# shellcheck shell=bash
# lib/fluss-s3.sh: S3 remote storage for `up --remote-storage s3`: a SeaweedFS
# server (Apache-2.0; `weed server -s3`) inside the cluster directory, one
# bucket, the fluss-fs-s3 plugin in DIR/plugins/s3/ (the JVMs run in DIR, and
# Fluss loads plugins from ./plugins), and the server.yaml entries that make
# remote.data.dir an s3:// URI.
# Sourced by scripts/fluss-cluster.sh (the only entry point), which defines the
# settings (FLUSS_VERSION, CACHE_ROOT, ...) and log/die/need, pick_port,
# port_open, wait_for, stop_pids and ours.
#
# SeaweedFS is built from the Go module proxy once and cached (never
# committed): $CACHE_ROOT/seaweedfs/$WEED_VERSION/weed. FLUSS_WEED_BIN names a
# weed binary to use instead. The build takes minutes on 2 cores.

WEED_MODULE="github.com/seaweedfs/seaweedfs"
WEED_VERSION="${FLUSS_WEED_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}"
readonly S3_BUCKET="fluss" S3_ACCESS_KEY="fluss-iggy" S3_SECRET_KEY="fluss-iggy-secret" S3_REGION="us-east-1"
readonly S3_ROLE="FlussRemote"
REMOTE_STORAGE=""   # "" (a local directory) or s3: set by --remote-storage
REMOTE_DATA_DIR=""  # remote.data.dir when not the local DIR/remote

# s3_weed_bin: print the path of a weed binary, building it if needed.
s3_weed_bin() {
	if [[ -n "${FLUSS_WEED_BIN:-}" ]]; then
		[[ -x "$FLUSS_WEED_BIN" ]] || die "FLUSS_WEED_BIN=$FLUSS_WEED_BIN is not an executable"
		printf '%s' "$FLUSS_WEED_BIN"
		return 0
	fi
	local dir="$CACHE_ROOT/seaweedfs/$WEED_VERSION"
	if [[ ! -x "$dir/weed" ]]; then
		mkdir -p "$dir"
		exec {weed_lock}>"$dir/.lock"
		command -v flock >/dev/null 2>&1 && flock "$weed_lock"
		[[ -x "$dir/weed" ]] || s3_build_weed "$dir"
		exec {weed_lock}>&-
	fi
	printf '%s' "$dir/weed"
}

# s3_build_weed DIR: download SeaweedFS from the Go module proxy and build weed
# into DIR (`go install` refuses the module: its go.mod has a replace).
s3_build_weed() {
	local dir=$1 src start=$SECONDS
	need go "install Go to build the SeaweedFS S3 server (or set FLUSS_WEED_BIN)"
	log "building SeaweedFS $WEED_VERSION (weed) into $dir; this takes minutes"
	src="$(go mod download -json "$WEED_MODULE@$WEED_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
	[[ -d "$src" ]] || die "go mod download $WEED_MODULE@$WEED_VERSION gave no module directory"
	rm -rf "$dir/src"
	cp -r "$src" "$dir/src"
	chmod -R u+w "$dir/src"
	(cd "$dir/src" && go build -trimpath -ldflags='-s -w' -o "$dir/weed.tmp" ./weed) >"$dir/build.log" 2>&1 ||
		{ tail -20 "$dir/build.log" >&2; die "building weed failed (log: $dir/build.log)"; }
	mv "$dir/weed.tmp" "$dir/weed"
	rm -rf "$dir/src"
	log "weed built in $((SECONDS - start))s"
}

# s3_plugin_jar: print the cached fluss-fs-s3 jar of FLUSS_VERSION, fetching it.
# dependency:copy cannot resolve it (its parent POM fluss-filesystems is not
# deployed), so Maven's wagon plugin downloads the jar and its .sha1.
s3_plugin_jar() {
	local dir name rel
	dir="$(version_dir)/plugins/s3"
	name="fluss-fs-s3-$FLUSS_VERSION.jar"
	if [[ ! -f "$dir/$name" ]]; then
		need mvn "install Maven to download the fluss-fs-s3 plugin"
		mkdir -p "$dir"
		rel="${FLUSS_GROUP//.//}/fluss-fs-s3/$FLUSS_VERSION/$name"
		log "downloading $FLUSS_GROUP:fluss-fs-s3:$FLUSS_VERSION with mvn"
		local f
		for f in "$name" "$name.sha1"; do
			mvn -B -q org.codehaus.mojo:wagon-maven-plugin:2.0.2:download-single \
				-Dwagon.url=https://repo.maven.apache.org/maven2 -Dwagon.fromFile="${rel%/*}/$f" \
				-Dwagon.toFile="$dir/.$f.tmp" >"$dir/mvn.log" 2>&1 ||
				{ cat "$dir/mvn.log" >&2; die "mvn could not fetch $rel"; }
		done
		[[ "$(sha1sum <"$dir/.$name.tmp" | cut -d' ' -f1)" == "$(cut -c1-40 <"$dir/.$name.sha1.tmp")" ]] ||
			die "$name does not match its .sha1"
		mv "$dir/.$name.tmp" "$dir/$name"
		rm -f "$dir/.$name.sha1.tmp" "$dir/mvn.log"
	fi
	printf '%s' "$dir/$name"
}

# s3_write_identity FILE: the S3 gateway's static identity, and an STS role
# the servers assume for the file-system security tokens they hand clients
# (fluss-fs-s3 asks STS AssumeRole when s3.assumed.role.arn is set;
# SeaweedFS serves STS on its S3 port).
s3_write_identity() {
	local key
	key="$(head -c 32 /dev/urandom | base64)"
	cat >"$1" <<EOF
{"identities": [{"name": "fluss", "credentials": [{"accessKey": "$S3_ACCESS_KEY", "secretKey": "$S3_SECRET_KEY"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}],
 "sts": {"tokenDuration": "1h", "maxSessionLength": "12h", "issuer": "fluss-iggy-sts", "signingKey": "$key"},
 "policy": {"defaultEffect": "Deny", "storeType": "memory"},
 "policies": [{"name": "S3All", "document": {"Version": "2012-10-17",
   "Statement": [{"Effect": "Allow", "Action": ["s3:*"], "Resource": ["*"]}]}}],
 "roles": [{"roleName": "$S3_ROLE", "roleArn": "arn:aws:iam::role/$S3_ROLE", "attachedPolicies": ["S3All"],
   "trustPolicy": {"Version": "2012-10-17",
     "Statement": [{"Effect": "Allow", "Principal": "*", "Action": ["sts:AssumeRole"]}]}}]}
EOF
}

# s3_up: start SeaweedFS in CLUSTER_DIR/s3, create the bucket, put the plugin
# in place and add the S3 settings to EXTRA_CONF. Call before write_configs.
s3_up() {
	local weed jar
	weed="$(s3_weed_bin)"
	jar="$(s3_plugin_jar)"
	mkdir -p "$CLUSTER_DIR/plugins/s3" "$CLUSTER_DIR/s3"
	ln -s "$jar" "$CLUSTER_DIR/plugins/s3/"
	s3_write_identity "$CLUSTER_DIR/conf/s3.json"
	WAIT_DEADLINE=$((SECONDS + START_TIMEOUT))
	S3_PORT="$(pick_port)"
	local mp mgp vp vgp fp fgp sgp
	mp="$(pick_port)" mgp="$(pick_port)" vp="$(pick_port)" vgp="$(pick_port)"
	fp="$(pick_port)" fgp="$(pick_port)" sgp="$(pick_port)"
	log "starting SeaweedFS S3 on 127.0.0.1:$S3_PORT"
	(cd "$CLUSTER_DIR/s3" && exec setsid "$weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$CLUSTER_DIR/s3" \
		-master.port="$mp" -master.port.grpc="$mgp" -master.telemetry=false -master.volumeSizeLimitMB=64 \
		-volume.port="$vp" -volume.port.grpc="$vgp" -volume.max=0 \
		-filer -filer.port="$fp" -filer.port.grpc="$fgp" \
		-s3 -s3.port="$S3_PORT" -s3.port.grpc="$sgp" -s3.port.iceberg=0 -s3.port.lance=0 \
		-s3.config="$CLUSTER_DIR/conf/s3.json" -s3.iam.config="$CLUSTER_DIR/conf/s3.json") </dev/null >>"$CLUSTER_DIR/logs/s3.out" 2>&1 &
	printf '%s\n' "$!" >"$CLUSTER_DIR/pids/s3.pid"
	wait_for "SeaweedFS S3 on port $S3_PORT to create bucket $S3_BUCKET" "s3_create_bucket" s3
	REMOTE_DATA_DIR="s3://$S3_BUCKET/remote"
	s3_default_conf
}

# s3_create_bucket: PUT the bucket (SigV4-signed by curl); true once it exists.
s3_create_bucket() {
	port_open "$S3_PORT" || return 1
	local code
	code="$(curl -s -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:$S3_REGION:s3" \
		--user "$S3_ACCESS_KEY:$S3_SECRET_KEY" "http://127.0.0.1:$S3_PORT/$S3_BUCKET")" || return 1
	[[ "$code" == 200 || "$code" == 409 ]]
}

# s3_default_conf: the S3 keys (static ones for the servers, the STS role for
# the clients' tokens), plus small segments and a 1 s tiering task
# unless --conf set them (so tests see segments tiered within seconds).
s3_default_conf() {
	EXTRA_CONF=(
		"s3.endpoint=http://127.0.0.1:$S3_PORT" "s3.region=$S3_REGION"
		"s3.access-key=$S3_ACCESS_KEY" "s3.secret-key=$S3_SECRET_KEY" "s3.path.style.access=true"
		"s3.assumed.role.arn=arn:aws:iam::role/$S3_ROLE" "s3.assumed.role.sts.endpoint=http://127.0.0.1:$S3_PORT"
		"${EXTRA_CONF[@]+"${EXTRA_CONF[@]}"}")
	local key kv given
	for key in log.segment.file-size=1kb remote.log.task-interval-duration=1s; do
		given=0
		for kv in "${EXTRA_CONF[@]}"; do
			[[ "${kv%%=*}" == "${key%%=*}" ]] && given=1
		done
		((given)) || EXTRA_CONF+=("$key")
	done
}

# s3_env: the cluster.env lines of the S3 storage (none without it).
s3_env() {
	[[ "$REMOTE_STORAGE" == s3 ]] || return 0
	printf 'FLUSS_REMOTE_DATA_DIR=%s\n' "$REMOTE_DATA_DIR"
	printf 'FLUSS_S3_ENDPOINT=http://127.0.0.1:%s\n' "$S3_PORT"
	printf 'FLUSS_S3_REGION=%s\n' "$S3_REGION"
	printf 'FLUSS_S3_ACCESS_KEY=%s\n' "$S3_ACCESS_KEY"
	printf 'FLUSS_S3_SECRET_KEY=%s\n' "$S3_SECRET_KEY"
	printf 'FLUSS_S3_BUCKET=%s\n' "$S3_BUCKET"
}

# s3_stop: stop the SeaweedFS server of CLUSTER_DIR, if it has one.
s3_stop() {
	local pid
	pid="$(pid_of s3)"
	[[ -n "$pid" ]] || return 0
	stop_pids "$STOP_GRACE" "$pid"
	rm -f "$CLUSTER_DIR/pids/s3.pid"
}
