package fluss_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/flusscmd"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// s3Storage returns a RemoteStorage with the cluster's static S3 credentials.
func s3Storage(t *testing.T, e *flusstest.S3Cluster, c *fluss.Client) *fluss.RemoteStorage {
	t.Helper()
	rs, err := c.RemoteStorage(fluss.RemoteStorageOptions{S3: fluss.S3Options{
		Endpoint:  e.Endpoint,
		Region:    e.Region,
		AccessKey: e.AccessKey,
		SecretKey: e.SecretKey,
		PathStyle: true,
	}, ReadAhead: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	return rs
}

// TestScannerRemoteSegmentsS3: a table whose first segments exist only in
// S3 (tiered, then deleted locally) reads from earliest through `fluss
// scan` exactly as the Java client reads it.
func TestScannerRemoteSegmentsS3(t *testing.T) {
	env := flusstest.RequireS3Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(env.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info := writeTieredTable(ctx, t, c)
	rs := s3Storage(t, env, c)

	remote := waitRemoteBatches(ctx, t, c, info, rs)
	t.Logf("batches read from S3 segments: %d", remote)
	table := info.Path.String()
	// The cluster's security token (STS AssumeRole on the S3 server) gives
	// the endpoint, path style and credentials: no options at all.
	tokens, err := c.RemoteStorage(fluss.RemoteStorageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tokens.Close()
	scan := func(st *fluss.RemoteStorage, columns ...string) string {
		var b strings.Builder
		opts := flusscmd.ScanOptions{Timeout: time.Minute, Columns: columns,
			ScanOptions: []fluss.ScanOption{fluss.ScanAllocator(checkedAlloc(t)), fluss.ScanRemoteStorage(st), fluss.FetchMaxBucketBytes(4 << 10)}}
		if err := flusscmd.Scan(ctx, c, info.Path, &b, opts); err != nil {
			t.Fatalf("fluss scan %s: %v", table, err)
		}
		return b.String()
	}
	java := javaS3Scan(t, env, table)
	sameLines(t, table, java, scan(rs))
	sameLines(t, table+" with the cluster's token", java, scan(tokens))
	sameLines(t, table+" projected", javaS3Scan(t, env, table, "--columns", "note,id"), scan(rs, "note", "id"))
}

// writeTieredTable creates a two-bucket log table that keeps one segment
// locally and appends 40 batches one by one (so they land in many 1 KiB
// segments).
func writeTieredTable(ctx context.Context, t *testing.T, c *fluss.Client) *fluss.TableInfo {
	t.Helper()
	db := flusstest.UniqueName("s3remote")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		t.Fatal(err)
	}
	path := fluss.NewTablePath(db, "tiered")
	desc := &types.TableDescriptor{
		Schema: *types.MustSchema([]types.Column{
			types.NewColumn("id", types.BigInt().NotNull()),
			types.NewColumn("bucket", types.Int()),
			types.NewColumn("note", types.String()),
		}),
		BucketCount: 2,
		Properties:  map[string]string{"table.log.tiered.local-segments": "1"},
	}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	info := waitTable(t, c, path)
	w, err := c.NewWriter(info)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 40; i++ {
		rec := failoverBatch(w.Schema(), int64(i*10), int32(i%2), 10)
		_, err := w.Append(ctx, fluss.NoPartition, int32(i%2), rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return info
}

// waitRemoteBatches reads the table from earliest until some batches come
// from remote segments (tiering runs every second) and returns how many.
func waitRemoteBatches(ctx context.Context, t *testing.T, c *fluss.Client, info *fluss.TableInfo, rs *fluss.RemoteStorage) int {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(2 * time.Second) {
		s, err := c.NewScanner(info, fluss.ScanAllocator(checkedAlloc(t)), fluss.ScanRemoteStorage(rs))
		if err != nil {
			t.Fatal(err)
		}
		ranges, err := c.BucketRanges(ctx, info, "")
		if err != nil {
			t.Fatal(err)
		}
		remote := 0
		err = s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error {
			if b.Remote {
				remote++
			}
			return nil
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if remote > 0 {
			return remote
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch was read from an S3 segment within 2 minutes")
		}
	}
}

// javaS3Scan is the Java tool's scan with the fluss-fs-s3 plugin on its
// class path; the client reads S3 with the cluster's security token.
func javaS3Scan(t *testing.T, env *flusstest.S3Cluster, table string, extra ...string) string {
	t.Helper()
	return env.RunJava(t, append([]string{"scan", table}, extra...)...)
}
