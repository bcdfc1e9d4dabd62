#!/usr/bin/env bash
# run-all.sh (`make bench`): every benchmark stage on one table in one run,
# written to bench/results.md.
#
#   1. uses the Fluss cluster at FLUSS_BOOTSTRAP, or starts one
#      (scripts/fluss-cluster.sh) and stops it at the end; the physical
#      floor stage reads the table's segments under FLUSS_CLUSTER_DIR (set
#      here for its own cluster; for a shared one:
#      `set -a; source /tmp/shared-fluss/cluster.env; set +a`);
#   2. runs bench/pipeline (see bench/pipeline/doc.go): it writes the table
#      (FLUSS_BENCH_ROWS rows, default 2,000,000) and measures the Java
#      client scan, our scanner, input → drop (json, arrow_ipc), the output
#      alone, raw SDK sends and the full pipeline, and writes the report
#      and its chart (results.svg next to it);
#   3. when bench/input exists, runs it on the same table and appends its
#      figures to the report;
#   4. drops the table;
#   5. runs bench/flussout (tables of its own): the fluss output against the
#      Java client's writer on the same rows (FLUSS_BENCH_OUT_ROWS, default
#      1,000,000), and appends its report.
#
# Environment: FLUSS_BENCH_ROWS, FLUSS_BENCH_ROUNDS (see bench/pipeline),
# FLUSS_BENCH_OUT_ROWS, FLUSS_BENCH_OUT_ROUNDS (see bench/flussout),
# BENCH_RESULTS (default bench/results.md), FLUSS_IGGY_BIN (default
# bin/fluss-iggy, built when missing).

set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
results="${BENCH_RESULTS:-$root/bench/results.md}"
work="$(mktemp -d "${TMPDIR:-/tmp}/fluss-iggy-bench.XXXXXX")"
cluster_dir=""
table=""

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n "$table" && -z "$cluster_dir" ]]; then
		scripts/fluss-java.sh drop-database "${table%%.*}" --if-exists --cascade >/dev/null 2>&1 || true
	fi
	if [[ -n "$cluster_dir" ]]; then
		scripts/fluss-cluster.sh down --dir "$cluster_dir" >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ ! -x "${FLUSS_IGGY_BIN:-bin/fluss-iggy}" ]]; then
	make -s build
fi
if [[ -z "${FLUSS_BOOTSTRAP:-}" ]]; then
	cluster_dir="$work/cluster"
	FLUSS_BOOTSTRAP="$(scripts/fluss-cluster.sh up --dir "$cluster_dir" --owner-pid $$ | sed -n 's/^FLUSS_BOOTSTRAP=//p' | tail -n 1)"
	[[ -n "$FLUSS_BOOTSTRAP" ]] || {
		echo "run-all: the Fluss cluster did not start" >&2
		exit 1
	}
	FLUSS_CLUSTER_DIR="$cluster_dir"
fi
export FLUSS_BOOTSTRAP
[[ -n "${FLUSS_CLUSTER_DIR:-}" ]] && export FLUSS_CLUSTER_DIR

echo "run-all: bench/pipeline (Fluss at $FLUSS_BOOTSTRAP, ${FLUSS_BENCH_ROWS:-2000000} rows)"
FLUSS_BENCH_RESULTS="$work/results.md" FLUSS_BENCH_KEEP=1 FLUSS_BENCH_TABLE_OUT="$work/table" \
	go test -run '^$' -bench Pipeline -benchtime 1x -timeout 60m -v ./bench/pipeline | tee "$work/pipeline.out"
table="$(cat "$work/table")"

if [[ -d bench/input ]] && ls bench/input/*_test.go >/dev/null 2>&1; then
	echo "run-all: bench/input on $table"
	if FLUSS_BENCH_TABLE="$table" go test -run '^$' -bench . -benchtime 1x -timeout 60m ./bench/input >"$work/input.out" 2>&1; then
		cat "$work/input.out"
		{
			printf '\n## bench/input on the same table\n\n'
			printf 'The `fluss` input in a Benthos stream inside a test process (no binary start-up), against the client'"'"'s scanner; its own report, as printed:\n\n```\n'
			grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok \)' "$work/input.out" | sed -e '/^$/d'
			printf '```\n'
		} >>"$work/results.md"
	else
		cat "$work/input.out" >&2
		printf '\n## bench/input\n\nFailed on this run (see the output of `make bench`).\n' >>"$work/results.md"
	fi
fi

# bench/scan stages with tables of their own: the same rows in COMPACTED beside
# ARROW, a KV snapshot beside the log scan, and a table half in S3 (on an
# S3-tiered cluster the stage starts; SeaweedFS from `fluss-cluster.sh fetch-s3`).
scan_stage() { # name, pattern, extra env...
	local name="$1" pattern="$2"
	shift 2
	echo "run-all: bench/scan $pattern"
	if env "$@" go test -run '^$' -bench "$pattern" -benchtime 1x -timeout 40m -v ./bench/scan >"$work/scan.out" 2>&1; then
		cat "$work/scan.out"
		{
			printf '\n## bench/scan: %s\n\n```\n' "$name"
			grep -v '^\(goos\|goarch\|pkg\|cpu\|PASS\|ok \|=== \)' "$work/scan.out" | sed -e '/^$/d'
			printf '```\n'
		} >>"$work/results.md"
	else
		cat "$work/scan.out" >&2
		printf '\n## bench/scan: %s\n\nFailed on this run (see the output of `make bench`).\n' "$name" >>"$work/results.md"
	fi
}
scan_stage "row-format logs (COMPACTED beside ARROW)" ScanRowFormat FLUSS_BENCH_ROWS="${FLUSS_BENCH_SCAN_ROWS:-1000000}"
scan_stage "a KV snapshot beside the log scan (1,000,000 keys)" BenchmarkSnapshot FLUSS_BENCH_ROWS=1000000
scan_stage "a table half in S3" ScanRemoteS3 FLUSS_S3_START=1 FLUSS_BENCH_ROWS="${FLUSS_BENCH_S3_ROWS:-2000000}"

# bench/flussout: the fluss output writing the same JSON lines as the Java
# client's writer, each into fresh tables of its own database.
if [[ -d bench/flussout ]]; then
	echo "run-all: bench/flussout (${FLUSS_BENCH_OUT_ROWS:-1000000} rows)"
	if FLUSS_BENCH_OUT_REPORT="$work/flussout.txt" go test -run '^$' -bench . -benchtime 1x -timeout 90m ./bench/flussout >"$work/flussout.out" 2>&1; then
		cat "$work/flussout.out"
		{
			printf '\n## bench/flussout: the fluss output against the Java client'"'"'s writer\n\n'
			printf 'The same JSON lines (the bench table'"'"'s rows) written by `fluss-java.sh append/upsert --file` and by Benthos streams inside a test process into the `fluss` output (see bench/flussout/README.md); its own report, as printed:\n\n```\n'
			cat "$work/flussout.txt"
			printf '```\n'
		} >>"$work/results.md"
	else
		cat "$work/flussout.out" >&2
		printf '\n## bench/flussout\n\nFailed on this run (see the output of `make bench`).\n' >>"$work/results.md"
	fi
fi

cp "$work/results.md" "$results"
if [[ -f "$work/results.svg" ]]; then
	cp "$work/results.svg" "$(dirname "$results")/results.svg"
fi
echo "run-all: wrote $results"
