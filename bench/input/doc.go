// Package input benchmarks the fluss input against the client it is built
// on, on one table of 2,000,000 rows in a real Fluss cluster:
//
//   - raw: the client's Scanner reads every bucket from the start to the
//     end offsets, touching each row count and releasing the batches;
//   - json: a stream `fluss` (payload_format: json, end_at: latest) →
//     `drop`, one message per row;
//   - arrow_ipc: the same with payload_format: arrow_ipc, one message per
//     record batch;
//   - floor: no Fluss at all, messages built like the json ones (same
//     payload size and metadata keys) handed to the same auto-replay
//     wrapper and drop: what Benthos itself costs per message.
//
// Each mode runs in a child process (the test binary re-executed), so that
// its peak RSS (ru_maxrss) is its own. Results: rows/s, peak RSS in MiB, and
// the ratio of each input mode to the raw scan.
//
// Run with (a cluster is started unless FLUSS_BOOTSTRAP names one):
//
//	go test -run '^$' -bench . -benchtime 1x ./bench/input
//
// Environment: FLUSS_BENCH_ROWS (default 2000000) sets the table size;
// FLUSS_BENCH_TABLE=db.table reuses a table loaded by an earlier run (it
// must hold exactly FLUSS_BENCH_ROWS rows); FLUSS_BENCH_KEEP=1 keeps the
// table a run creates; FLUSS_INPUT_BENCH_CPUPROFILE=FILE writes a CPU
// profile of each child (the last one wins).
package input
