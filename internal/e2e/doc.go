// Package e2e proves the whole distribution end to end: the built
// fluss-iggy binary runs the shipped example pipelines (config/*.yaml) from a
// real Fluss cluster into Iggy, and what arrived in Iggy is compared, row by
// row, with what the official Java client reads from the same tables.
//
// The tests (e2e_test.go, run by `make test`):
//
//   - the Java fixture tool writes 100,000 rows (FLUSS_E2E_LOG_ROWS) into a
//     log table and 20,000 changes (10,000 inserts, 5,000 updates, 5,000
//     deletes) into a primary-key table, and scans both;
//   - config/fluss_to_iggy.yaml moves the log table (streaming; the test
//     watches Iggy until every row arrived, then stops the process with
//     SIGTERM) and config/pk_changelog_to_iggy.yaml the changelog (with
//     end_at: latest, so the process ends by itself); every message is checked
//     for its payload (the Java scan's row, plus the fields the Bloblang
//     mapping adds), headers, partition (xxHash32 of the key, as Iggy
//     partitions by messages key) and deterministic id, and the changelog
//     for its order within each bucket and its routing (-U dropped, -D to
//     the deletes topic);
//   - the log pipeline again while the binary is killed with SIGKILL at
//     random moments and restarted with the same bbolt checkpoint file
//     (the subtest log_table_sigkill; run it alone with
//     -run 'TestEndToEnd/log_table_sigkill'): every row must arrive, and
//     the duplicates each kill caused are reported (and bounded);
//   - TestSigkillRemoteS3 (s3_test.go): on an S3-tiered cluster
//     (flusstest.RequireS3Cluster), a table whose first half exists only in
//     S3; the pipeline is SIGKILLed 3 times while it reads the S3 part; every
//     row must arrive and a restart must resume inside the S3 part;
//   - round_trip (roundtrip_test.go): the other direction. The log table,
//     the primary-key table and a primary-key table partitioned by region
//     (with an ARRAY column) go through config/fluss_to_iggy.yaml into Iggy
//     and back through config/iggy_to_fluss.yaml into copies, that pipeline
//     SIGKILLed 5 times on the way (when the consumer group has committed
//     1/7 … 5/7 of the messages) and restarted; the log copy holds every
//     row of the source once (the Java scans as multisets; the output's
//     journal keeps the kills from repeating rows), the primary-key copies
//     have the source's state (the Java client's replay of both, and
//     `fluss scan --snapshot` of the copy);
//   - pk_ordering (ordering_test.go): a 4-bucket primary-key table through
//     4 threads, random pauses and 8 batches in flight: with ordering: bucket
//     every key's changes arrive in changelog order, with none they do not.
//
// Iggy is the in-process test server (internal/iggytest) unless
// IGGY_TCP_ADDRESS (with IGGY_USERNAME, IGGY_PASSWORD, default iggy/iggy)
// names a real Iggy 0.8 or 0.9 server, which is then read back with the
// repository's own client (package iggy, through ClientReader). Fluss is the
// cluster of internal/flusstest (FLUSS_BOOTSTRAP, or one it starts;
// FLUSS_VERSION selects the release). The binary is built from the working
// tree into a temporary directory, or taken from FLUSS_IGGY_BIN.
//
// More settings, all optional (the defaults are what CI runs):
//
//   - FLUSS_E2E_LOG_ROWS: rows of the log table (default 100000);
//   - FLUSS_E2E_KILLS: SIGKILLs in log_table_sigkill (default 3);
//   - FLUSS_E2E_THROTTLE: a duration (e.g. 20ms) log_table_sigkill's
//     pipelines sleep per batch (an added sleep processor), so that the
//     kills land mid-stream on a fast machine (default none);
//   - FLUSS_E2E_SEED: replays the random kill moments of an earlier run
//     (with the same rows and kills);
//   - FLUSS_E2E_SET: extra comma-separated --set overrides for every
//     pipeline.
//
// A pipeline is given up on when no message arrived in Iggy for three
// minutes (not after a fixed time), so that large tables and throttles need
// no other setting.
//
// The non-test files hold what the tests, `make demo` (through
// internal/iggytest/iggyserver) and the benchmarks share: reading an Iggy
// topic back (Reader: ServerReader for the test server, ClientReader for any
// server) and running the binary as a child process (Start, Proc).
package e2e
