// Package pipeline benchmarks the whole distribution on one Fluss table, in
// one run on one machine, stage by stage, and writes bench/results.md:
//
//   - Java client scan: scripts/fluss-java.sh scan --count-only (the
//     official fluss-client, full JIT), as the reference reader;
//   - our scanner: bin/fluss-iggy fluss scan --count-only;
//   - the fluss input into the drop output, with json and with arrow_ipc
//     payloads (the binary, end_at: latest);
//   - the iggy output alone: a child process feeding the output
//     configuration of config/fluss_to_iggy.yaml with messages built in
//     memory from the table's rows (same payloads, metadata, headers, ids);
//   - raw SDK send: the same messages prebuilt, sent with the Iggy Go SDK's
//     SendMessages, 1,000 per request, on one connection;
//   - the full pipeline: the binary running config/fluss_to_iggy.yaml
//     as shipped (Bloblang mapping, key = row id, deterministic ids, bbolt
//     checkpoints) with end_at: latest, and the same without the mapping;
//
// with rows/s, MB/s and the peak RSS of each process, and the ratios the
// issue asks for (full pipeline in json against the lower of our raw scan
// rate and the raw SDK send rate; target at least 50 %).
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
// FLUSS_BOOTSTRAP (default: a cluster of its own, internal/flusstest).
package pipeline
