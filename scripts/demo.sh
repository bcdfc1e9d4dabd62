#!/usr/bin/env bash
# demo.sh (`make demo`): fluss-iggy on a fresh machine, end to end.
#
#   1. starts a local Fluss cluster (scripts/fluss-cluster.sh), unless
#      FLUSS_BOOTSTRAP names one that is running;
#   2. creates the table demo.orders (demo.orders_<time> on a cluster named
#      by FLUSS_BOOTSTRAP) and writes DEMO_ROWS rows (default 1000) into it
#      with the Java fixture tool (scripts/fluss-java.sh);
#   3. finds Iggy: the server at IGGY_TCP_ADDRESS (default 127.0.0.1:8090,
#      user IGGY_USERNAME/IGGY_PASSWORD, default iggy/iggy) if one answers
#      there, otherwise the bundled in-memory test server
#      (internal/iggytest/iggyserver), and says which;
#   4. runs config/fluss_to_iggy.yaml with config/resources/bbolt.yaml, as
#      shipped except `end_at: latest` so that it stops once every row is
#      in Iggy, and with its checkpoints in the temporary directory (not in
#      ./state);
#   5. prints what arrived (message count per topic partition and the first
#      messages with their ids and headers);
#   6. stops everything it started and deletes its temporary files (and, on
#      a cluster named by FLUSS_BOOTSTRAP, its table). Data written to a real
#      Iggy server stays there (stream IGGY_STREAM, default fluss_demo_<time>).
#
# demo.sh --table-only (`make demo-table`) does step 2 alone, for your own
# runs of the example pipeline: it creates the table the example reads,
# FLUSS_DATABASE.FLUSS_TABLE (default demo.orders), in the running cluster
# at FLUSS_BOOTSTRAP (required), writes DEMO_ROWS rows into it and leaves
# it there, and beside it the primary-key table <database>.customers (100
# rows, 20 of them updated), which README's `fluss snapshots` and `fluss
# scan --snapshot` examples read. A table that exists already is left as it
# is.
#
# Needs Go, Java 17 and Maven (for the first download of the Fluss jars).
# Run from anywhere: paths are relative to the repository.

set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

table_only=0
case "${1:-}" in
"") ;;
--table-only) table_only=1 ;;
-h | --help)
	sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
*)
	printf 'demo: unknown argument %s (usage: demo.sh [--table-only])\n' "$1" >&2
	exit 2
	;;
esac

rows="${DEMO_ROWS:-1000}"
bin="${FLUSS_IGGY_BIN:-$root/bin/fluss-iggy}"
iggy_addr="${IGGY_TCP_ADDRESS:-127.0.0.1:8090}"
iggy_user="${IGGY_USERNAME:-iggy}"
iggy_pass="${IGGY_PASSWORD:-iggy}"

say() { printf '\n==> %s\n' "$*"; }
die() {
	printf 'demo: error: %s\n' "$*" >&2
	exit 1
}

work="$(mktemp -d "${TMPDIR:-/tmp}/fluss-iggy-demo.XXXXXX")"
cluster_dir=""
drop_table=""
server_pid=""
pipeline_pid=""

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n "$pipeline_pid" ]] && kill -0 "$pipeline_pid" 2>/dev/null; then
		kill -TERM "$pipeline_pid" 2>/dev/null || true
		wait "$pipeline_pid" 2>/dev/null || true
	fi
	if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	if [[ -n "$drop_table" ]]; then
		scripts/fluss-java.sh drop-table "$drop_table" --if-exists >/dev/null 2>&1 || true
	fi
	if [[ -n "$cluster_dir" ]]; then
		say "stopping the Fluss cluster"
		scripts/fluss-cluster.sh down --dir "$cluster_dir" >/dev/null 2>&1 ||
			printf 'demo: stopping the cluster in %s failed; run: scripts/fluss-cluster.sh down --dir %s\n' "$cluster_dir" "$cluster_dir" >&2
	fi
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

command -v go >/dev/null 2>&1 || die "go not found on PATH"
if [[ ! -x "$bin" ]]; then
	say "building bin/fluss-iggy"
	make -s build
fi
# fill_table DB.TABLE writes $rows readable rows (the Java tool's --rows
# generator favours edge cases) into DB.TABLE with the Java client.
fill_table() {
	awk -v n="$rows" 'BEGIN {
		split("ada grace linus margaret ken barbara dennis frances", who, " ")
		split("first order|gift wrap|express|repeat customer|", notes, "|")
		for (i = 0; i < n; i++) {
			printf "{\"id\":%d,\"customer\":\"%s\",\"amount\":\"%d.%02d\",\"created_at\":\"2026-01-%02dT%02d:%02d:%02d.%03d\",\"note\":%s}\n",
				i, who[i % 8 + 1], (i * 37) % 500 + 1, (i * 13) % 100, i % 28 + 1, i % 24, i % 60, (i * 7) % 60, i % 1000,
				(i % 5 == 4) ? "null" : "\"" notes[i % 5 + 1] "\""
		}
	}' >"$work/rows.jsonl"
	scripts/fluss-java.sh append "$1" --file "$work/rows.jsonl"
}

# create_table DB.TABLE creates the demo table (a log table of 3 buckets).
create_table() {
	scripts/fluss-java.sh create-database "${1%%.*}" --if-not-exists >/dev/null
	scripts/fluss-java.sh create-table "$1" --if-not-exists --buckets 3 \
		--columns 'id BIGINT, customer STRING, amount DECIMAL(10,2), created_at TIMESTAMP(3), note STRING' >/dev/null
}

# create_customers DB.TABLE creates a primary-key table of 3 buckets (for
# `fluss snapshots` and `fluss scan --snapshot`, and
# config/pk_changelog_to_iggy.yaml) and upserts 100 rows, then 20 again
# with other values, unless it exists.
create_customers() {
	if scripts/fluss-java.sh info "$1" >/dev/null 2>&1; then
		say "$1 exists already; leaving it as it is"
		return
	fi
	say "creating the primary-key table $1 and upserting 120 rows into it"
	scripts/fluss-java.sh create-table "$1" --if-not-exists --buckets 3 --primary-key id \
		--columns 'id INT NOT NULL, name STRING, balance DECIMAL(12,2), updated TIMESTAMP(3)' >/dev/null
	scripts/fluss-java.sh upsert "$1" --rows 100 --seed 1 >/dev/null
	scripts/fluss-java.sh upsert "$1" --rows 20 --seed 2 >/dev/null
}

if ((table_only)); then
	[[ -n "${FLUSS_BOOTSTRAP:-}" ]] ||
		die "--table-only needs FLUSS_BOOTSTRAP: start a cluster with scripts/fluss-cluster.sh up and export the FLUSS_BOOTSTRAP=... line it prints last"
	target="${FLUSS_DATABASE:-demo}.${FLUSS_TABLE:-orders}"
	if scripts/fluss-java.sh info "$target" >/dev/null 2>&1; then
		say "$target exists already at $FLUSS_BOOTSTRAP; leaving it as it is"
		echo "(to start over: scripts/fluss-java.sh drop-table $target, then run this again)"
	else
		say "creating $target at $FLUSS_BOOTSTRAP and writing $rows rows with the Java client (scripts/fluss-java.sh)"
		create_table "$target"
		fill_table "$target"
	fi
	"$bin" fluss offsets --bootstrap "$FLUSS_BOOTSTRAP" "$target"
	create_customers "${target%%.*}.customers"
	say "done; run the example pipeline on it with:"
	echo "bin/fluss-iggy run -r config/resources/bbolt.yaml config/fluss_to_iggy.yaml"
	exit 0
fi

go build -o "$work/iggyserver" ./internal/iggytest/iggyserver

# 1. Fluss.
if [[ -n "${FLUSS_BOOTSTRAP:-}" ]]; then
	say "using the Fluss cluster at FLUSS_BOOTSTRAP=$FLUSS_BOOTSTRAP"
	bootstrap="$FLUSS_BOOTSTRAP"
	table="orders_$(date +%H%M%S)" # a table of our own on a cluster that is not ours
else
	say "starting a local Fluss cluster (scripts/fluss-cluster.sh up)"
	cluster_dir="$work/cluster"
	bootstrap="$(scripts/fluss-cluster.sh up --dir "$cluster_dir" --owner-pid $$ | sed -n 's/^FLUSS_BOOTSTRAP=//p' | tail -n 1)"
	[[ -n "$bootstrap" ]] || die "the cluster did not start"
	echo "Fluss is at $bootstrap"
	table="orders"
fi
export FLUSS_BOOTSTRAP="$bootstrap"

# 2. The demo table.
say "creating demo.$table and writing $rows rows with the Java client (scripts/fluss-java.sh)"
[[ -z "$cluster_dir" ]] && drop_table="demo.$table"
create_table "demo.$table"
fill_table "demo.$table"
"$bin" fluss offsets --bootstrap "$bootstrap" "demo.$table"

# 3. Iggy.
stream="${IGGY_STREAM:-fluss_demo_$(date +%H%M%S)}"
if "$work/iggyserver" ping -addr "$iggy_addr" -username "$iggy_user" -password "$iggy_pass" 2>"$work/ping.err"; then
	say "an Iggy server answers at $iggy_addr: writing to it (stream \"$stream\")"
else
	say "no Iggy server answers at $iggy_addr ($(tr -d '\n' <"$work/ping.err")):"
	echo "using the bundled in-memory Iggy test server instead (internal/iggytest; set IGGY_TCP_ADDRESS to use a real one)"
	"$work/iggyserver" serve -addr 127.0.0.1:0 -owner-pid $$ >"$work/server.out" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		grep -q '^IGGY_TCP_ADDRESS=' "$work/server.out" 2>/dev/null && break
		kill -0 "$server_pid" 2>/dev/null || die "the test server did not start: $(cat "$work/server.out")"
		sleep 0.1
	done
	iggy_addr="$(sed -n 's/^IGGY_TCP_ADDRESS=//p' "$work/server.out")"
	[[ -n "$iggy_addr" ]] || die "the test server did not start: $(cat "$work/server.out")"
	iggy_user=iggy iggy_pass=iggy
	echo "test server listening at $iggy_addr (user iggy / iggy)"
fi

# 4. The pipeline.
say "running: fluss-iggy run -r config/resources/bbolt.yaml config/fluss_to_iggy.yaml (with end_at: latest)"
start=$(date +%s.%N)
FLUSS_DATABASE=demo FLUSS_TABLE="$table" \
	IGGY_TCP_ADDRESS="$iggy_addr" IGGY_USERNAME="$iggy_user" IGGY_PASSWORD="$iggy_pass" IGGY_STREAM="$stream" \
	FLUSS_IGGY_HTTP_ADDRESS=127.0.0.1:0 FLUSS_IGGY_STATE_DIR="$work/state" \
	"$bin" run --set input.fluss.end_at=latest --set logger.level=warn \
	-r config/resources/bbolt.yaml config/fluss_to_iggy.yaml &
pipeline_pid=$!
if ! wait "$pipeline_pid"; then
	pipeline_pid=""
	die "the pipeline failed"
fi
pipeline_pid=""
printf 'the pipeline finished in %.1f s\n' "$(echo "$(date +%s.%N) - $start" | bc)"

# 5. What arrived.
say "what arrived in Iggy ($iggy_addr, stream \"$stream\")"
"$work/iggyserver" peek -addr "$iggy_addr" -username "$iggy_user" -password "$iggy_pass" -stream "$stream" -n 3

if [[ -n "$server_pid" ]]; then
	say "done; the bundled test server and the Fluss cluster are stopped now"
else
	say "done; the messages stay in stream \"$stream\" of the Iggy server at $iggy_addr"
fi
