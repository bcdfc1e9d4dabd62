// Package compat checks fluss-iggy against one Fluss release: the cluster at
// FLUSS_BOOTSTRAP, whose release FLUSS_VERSION names (see internal/flusstest;
// without FLUSS_BOOTSTRAP a cluster of FLUSS_VERSION is started). The Java
// fixture tool (scripts/fluss-java.sh) then uses that release's client, so
// each check compares fluss-iggy with the official client of the same
// release:
//
//   - `fluss-iggy fluss scan` (and `offsets`) print byte for byte what the
//     Java client's scan (and list-offsets) prints, for a log table with
//     several buckets and for a partitioned primary-key table after
//     upserts, updates and deletes (+I, -U, +U, -D), with every scalar type;
//     from 0.9 on with ARRAY, MAP and ROW columns too (the 0.7 client cannot
//     write them);
//   - a pipeline (fluss input, end_at: latest -> iggy output into the
//     in-process test server internal/iggytest) delivers each change of a
//     primary-key table's changelog exactly once, with the Java scan's row as
//     its payload and its partition, bucket, offset and change type as headers.
//
// `make compat` runs these tests on a Fluss 0.7.0 cluster (CI does after
// `make test`); `make test` runs them on the default release. The binary is
// $FLUSS_IGGY_BIN, or built from the working tree.
package compat
