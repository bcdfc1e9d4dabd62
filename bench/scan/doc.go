// Package scan benchmarks the Fluss scanner against the official Java
// client.
//
// BenchmarkScan creates a table of 10 mixed-type columns (ZSTD, 4 buckets)
// holding 2,000,000 rows (FLUSS_BENCH_ROWS to change it), written with
// our writer in batches of 8,192 rows, and then, in the same run, reads it
// from the earliest offsets to the end:
//
//   - with our scanner, counting rows, in a child process so that its peak
//     RSS (VmHWM) covers the scan alone;
//   - with the Java tool's `scan --count-only` (scripts/fluss-java.sh, full
//     JIT, -Xmx1g), which times its own scan the same way (after connecting
//     and listing offsets);
//
// all columns, then a projection of 2 of the 10 columns (pushed down to
// the server by both clients). It prints rows/s and MB/s (MB of log batches
// as stored and fetched, ZSTD-compressed, the same bytes for both clients),
// the ratio ours/Java, and our peak RSS.
//
// Run with:
//
//	go test -run '^$' -bench . -benchtime 1x -timeout 30m ./bench/scan
//
// against the cluster named by FLUSS_BOOTSTRAP or a cluster it starts
// itself (internal/flusstest). FLUSS_SCAN_BENCH_TABLE=DB.TABLE reuses a
// table an earlier run created (it is then not dropped).
//
// BenchmarkScanRowFormat compares the CPU per row of the ARROW and the
// COMPACTED log formats on the same rows (see README.md).
package scan
