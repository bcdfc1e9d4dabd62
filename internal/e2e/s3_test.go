package e2e_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// The tiered table of TestSigkillRemoteS3: s3Rows rows of the log table's
// columns in 4 buckets (bucket key id, so that they fill evenly), written
// by the Java tool in batches of at most s3BatchSize (some 600 rows), each
// a segment of its own (the S3 cluster rolls segments at 1 KiB): about 15
// segments per bucket. The last s3LocalSegments of a bucket stay on the
// tablet server; the earlier ones are tiered to S3 (one copy takes some
// 0.4 s) and deleted locally.
const (
	s3Rows          = 40_000
	s3BatchSize     = "32kb"
	s3LocalSegments = 1
	s3Kills         = 3
)

// TestSigkillRemoteS3: on a cluster whose remote.data.dir is on S3
// (flusstest.RequireS3Cluster), a log table whose first segments (at least
// half of each bucket) exist only in S3 is moved by
// config/fluss_to_iggy.yaml from earliest (the input reads the segments
// with the cluster's security token). The pipeline is killed with SIGKILL
// three times while it reads the S3 part (kill moments drawn from the
// progress in Iggy, as log_table_sigkill does) and restarted on the same
// bbolt file; every row of the Java client's scan (which reads S3 too)
// must arrive (payload, headers, id), duplicates per kill bounded, each
// kill must come before the S3 rows were all delivered, and a restart must
// resume from a checkpoint inside the S3 part. Alone:
//
//	FLUSS_S3_START=1 go test -run TestSigkillRemoteS3 -v ./internal/e2e
//
// (or FLUSS_S3_CLUSTER_ENV=DIR/cluster.env of a running
// `scripts/fluss-cluster.sh up --remote-storage s3 --dir DIR`).
func TestSigkillRemoteS3(t *testing.T) {
	s3 := flusstest.RequireS3Cluster(t)
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	javaEnv, err := s3.JavaEnv()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	f := &fixture{start: time.Now(), root: root, bootstrap: s3.Bootstrap, javaEnv: javaEnv, db: flusstest.UniqueName("e2e_s3")}
	f.log.name = "tiered"
	binErr := make(chan error, 1)
	go func() {
		var err error
		f.bin, err = sharedBinary(ctx, root)
		binErr <- err
	}()
	f.iggy = startIggy(t)

	start := time.Now()
	if _, err := f.tool(ctx, "create-database", f.db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = f.tool(context.Background(), "drop-database", f.db, "--if-exists", "--cascade") })
	if err := f.createTable(ctx, &f.log,
		[]string{"--columns", logColumns, "--buckets", "4", "--bucket-key", "id", "--property", "table.log.tiered.local-segments=" + strconv.Itoa(s3LocalSegments)},
		[][]string{{"append", "--rows", strconv.Itoa(s3Rows), "--seed", "13", "--conf", "client.writer.batch-size=" + s3BatchSize}}); err != nil {
		t.Fatal(err)
	}
	written := time.Since(start)
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(s3.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.RefreshTable(ctx, fluss.NewTablePath(f.db, f.log.name))
	if err != nil {
		t.Fatal(err)
	}
	waitTiered(ctx, t, c, info)
	tiered := time.Since(start)
	// The Java client reads the S3 segments too.
	if err := f.scanTable(ctx, &f.log, f.logExtra()); err != nil {
		t.Fatal(err)
	}
	if len(f.log.scan) != s3Rows {
		t.Fatalf("the Java scan of %s.%s has %d rows, want %d", f.db, f.log.name, len(f.log.scan), s3Rows)
	}
	// Tiering may have gone on meanwhile: the rows below these offsets are
	// only in S3 now, and stay so.
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	localStart, err := e2e.LocalLogStarts(ctx, c, info, ranges)
	if err != nil {
		t.Fatal(err)
	}
	remoteRows := 0
	for k := range f.log.scan {
		if k.offset < localStart[k.bucket] {
			remoteRows++
		}
	}
	if err := <-binErr; err != nil {
		t.Fatal(err)
	}
	t.Logf("%s.%s: %d rows written in %s, half of each bucket only in S3 after %s, Java scan after %s; then %d rows (%.0f%%) only in S3 (local logs start at %v, bucket: offset)",
		f.db, f.log.name, s3Rows, written.Round(time.Millisecond), tiered.Round(time.Millisecond), time.Since(start).Round(time.Millisecond),
		remoteRows, 100*float64(remoteRows)/s3Rows, localStart)

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLUSS_E2E_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	// Between 4% and 68% of the S3 part: every bucket is still reading S3
	// (the check below tells).
	at := killMoments(rng, remoteRows*3/4, s3Kills)
	t.Logf("FLUSS_E2E_SEED=%d: %d kills when the topic holds %v messages", seed, s3Kills, at)
	run := f.runKilled(t, rng, "e2e_s3_kill", at, nil)

	// Each kill came while the S3 part was being read: rows of it were
	// still missing in Iggy, and the run it ended had delivered S3 rows
	// (after its restart from the checkpoint, for the later ones).
	seen := map[bkey]bool{}
	remoteSeen, resumedInS3 := 0, 0
	for k, cut := range run.cuts {
		var from map[uint32]uint64
		if k > 0 {
			from = run.cuts[k-1]
		}
		runRemote, local := 0, 0
		resumed := map[int32]int64{} // the run's first offset per bucket
		for _, m := range run.msgs {
			if m.Offset >= cut[m.Partition] {
				continue
			}
			_, _, bucket, offset := decodeID(m.ID)
			key := bkey{int32(bucket), int64(offset)}
			remote := key.offset < localStart[key.bucket]
			if m.Offset >= from[m.Partition] {
				if o, ok := resumed[key.bucket]; !ok || key.offset < o {
					resumed[key.bucket] = key.offset
				}
				if remote {
					runRemote++
				}
			}
			if seen[key] {
				continue
			}
			seen[key] = true
			if remote {
				remoteSeen++
			} else {
				local++
			}
		}
		t.Logf("kill %d: %d of %d S3 rows and %d local rows in Iggy; the run it ended delivered %d S3 rows, from offsets %v (bucket: offset)",
			k+1, remoteSeen, remoteRows, local, runRemote, resumed)
		if remoteSeen >= remoteRows {
			t.Errorf("kill %d came after every S3 row had arrived, not while the S3 part was read", k+1)
		}
		if runRemote == 0 {
			t.Errorf("kill %d: the run it ended delivered no S3 row", k+1)
		}
		for bk, o := range resumed {
			if k > 0 && o > 0 && o < localStart[bk] {
				resumedInS3++
			}
		}
	}
	// The restarts resumed from checkpoints inside the S3 part (a run
	// killed before its first checkpoint starts again from earliest).
	if resumedInS3 == 0 {
		t.Errorf("no run after a kill resumed a bucket from a checkpoint inside the S3 part")
	}
}

// waitTiered waits until the first half of every bucket of the table
// exists only in S3 (the cluster tiers every second): until every
// bucket's local log start (localLogStarts) is past half its rows.
func waitTiered(ctx context.Context, t *testing.T, c *fluss.Client, info *fluss.TableInfo) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		ranges, err := c.BucketRanges(ctx, info, "")
		if err != nil {
			t.Fatal(err)
		}
		starts, err := e2e.LocalLogStarts(ctx, c, info, ranges)
		if err != nil {
			t.Fatal(err)
		}
		done := true
		for _, r := range ranges {
			done = done && r.End > r.Start && (starts[r.Bucket.Bucket]-r.Start)*2 >= r.End-r.Start
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first half of every bucket of %s was not tiered to S3 within 2 minutes: local logs start at %v (bucket: offset), ranges %v",
				info.Path, starts, ranges)
		}
	}
}
