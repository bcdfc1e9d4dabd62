// Package pipeline benchmarks the whole distribution on one Fluss table, in
// one run on one machine, stage by stage, and writes bench/results.md:
//
//   - Java client scan: scripts/fluss-java.sh scan --count-only (the
//     official fluss-client, full JIT), as the reference reader;
//   - our scanner: bin/fluss-iggy fluss scan --count-only;
//   - the physical floor (scan_floor, floor_test.go): the table's log
//     segment files read from the tablet server's data directory
//     (FLUSS_CLUSTER_DIR) and every Arrow buffer of every batch decompressed
//     (one zstd decoder, output buffers reused), building no arrays and no
//     rows: the cost of the bytes, which the scanner's CPU per row is
//     compared with (skipped without FLUSS_CLUSTER_DIR);
//   - the fluss input into the drop output, with json and with arrow_ipc
//     payloads (the binary, end_at: latest);
//   - the iggy output alone: a child process feeding the output
//     configuration of config/fluss_to_iggy.yaml with messages built in
//     memory from the table's rows (same payloads, metadata, headers, ids);
//   - raw SDK send: the same messages prebuilt, sent with the Iggy Go SDK's
//     SendMessages, 1,000 per request, on one connection;
//   - the full pipeline: the binary running config/fluss_to_iggy.yaml
//     (Bloblang mapping, key = row id, deterministic ids, bbolt
//     checkpoints) with end_at: latest, rows as structured values, with
//     pipeline.threads 2 and 1; the same with rows as JSON bytes (the path
//     before structured rows); the same without the mapping (threads 2
//     and 1);
//   - config/arrow_ipc_to_iggy.yaml with arrow_ipc_compression none, lz4
//     and zstd (payload bytes per row measured in the bench process);
//   - the json pipeline under GOGC 100/200/400 and GOMEMLIMIT settings;
//
// with rows/s, MB/s, CPU µs per row and the peak RSS of each process, the
// ratios the issue asks for (stages_test.go lists the stages, report_test.go the
// ratios), and a chart of CPU µs per row by stage (results.svg next to
// the report, chart_test.go). Every stage of the binary runs with the
// Docker image's GOGC and GOMEMLIMIT (shippedGC) unless it says otherwise.
//
// Iggy is the in-memory test server (internal/iggytest/iggyserver) in a
// process of its own, for every stage that writes to Iggy, so its CPU is
// counted the same way everywhere (on 2 cores it competes with the
// pipeline). The table is written with our writer: 10 columns of mixed
// types (the schema of bench/scan), ZSTD, 4 buckets.
//
// Run it through bench/run-all.sh (what `make bench` calls), or:
//
//	FLUSS_BENCH_RESULTS=bench/results.md go test -run '^$' -bench Pipeline -benchtime 1x -timeout 60m ./bench/pipeline
//
// Knobs: FLUSS_BENCH_ROWS (default 2,000,000), FLUSS_BENCH_TABLE=DB.TABLE
// (reuse a table an earlier run made; it is then kept), FLUSS_BENCH_ROUNDS
// (default 1: each stage once; with more the best round counts),
// FLUSS_IGGY_BIN (default bin/fluss-iggy, built when missing),
// FLUSS_BOOTSTRAP (default: a cluster of its own, internal/flusstest),
// FLUSS_CLUSTER_DIR (the cluster's directory, for scan_floor).
package pipeline
