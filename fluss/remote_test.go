package fluss_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestScannerRemoteSegments: with tiny segments and tiering every second,
// the oldest batches are only in remote storage (a local directory here);
// the scanner reads them from the segment files and the result, projected
// or not, matches the Java tool's scan.
func TestScannerRemoteSegments(t *testing.T) {
	if testing.Short() && !flusstest.InCI() {
		t.Skip("starts its own cluster; skipped with -short outside CI")
	}
	cl := flusstest.StartCluster(t, flusstest.Options{Conf: map[string]string{
		"log.segment.file-size":             "1kb",
		"remote.log.task-interval-duration": "1s",
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c, err := fluss.NewClient(ctx, fluss.Bootstrap(cl.Bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info := writeTieredTable(ctx, t, c)

	// Wait until reading from the start goes through remote segments.
	var remote, local int
	for deadline := time.Now().Add(90 * time.Second); ; {
		remote, local = 0, 0
		s, err := c.NewScanner(info, fluss.ScanAllocator(checkedAlloc(t)))
		if err != nil {
			t.Fatal(err)
		}
		ranges, err := c.BucketRanges(ctx, info, "")
		if err != nil {
			t.Fatal(err)
		}
		err = s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error {
			if b.Remote {
				remote++
			} else {
				local++
			}
			return nil
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if remote > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("batches read from remote segments: %d, from the servers: %d", remote, local)
	if remote == 0 {
		t.Fatal("no batch was read from a remote segment")
	}
	readRangesSlowly(ctx, t, c, info)
	table := info.Path.String()
	sameLines(t, table, cl.RunJava(t, "scan", table), goScan(t, c, table))
	sameLines(t, table+" projected", cl.RunJava(t, "scan", table, "--columns", "note,id"), goScan(t, c, table, "note", "id"))
}

// readRangesSlowly reads the table with ReadRanges and a callback that
// waits, before taking a batch, until the scanner has fetched past it (or
// up to the bucket's end): the next response then always waits in the
// scanner's queue while the callback runs. When that response holds the
// last rows (from the local log, after the remote segments), the fetch
// position is already at the end before Poll returned them, which once
// made ReadRanges drop them. Every offset must come once, in order.
func readRangesSlowly(ctx context.Context, t *testing.T, c *fluss.Client, info *fluss.TableInfo) {
	t.Helper()
	s, err := c.NewScanner(info, fluss.ScanAllocator(checkedAlloc(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	next := map[int32]int64{}
	ends := map[int32]int64{}
	for _, r := range ranges {
		next[r.Bucket.Bucket], ends[r.Bucket.Bucket] = r.Start, r.End
	}
	err = s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error {
		bk := b.Bucket.Bucket
		after := b.FirstOffset + int64(b.NumRows())
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if p, ok := s.Position(fluss.NoPartition, bk); !ok || p.Offset > after || p.Offset >= ends[bk] {
				break
			}
		}
		if b.FirstOffset != next[bk] {
			return fmt.Errorf("bucket %d: batch at offset %d, want %d", bk, b.FirstOffset, next[bk])
		}
		next[bk] = after
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for bk, end := range ends {
		if next[bk] != end {
			t.Errorf("bucket %d: ReadRanges stopped at offset %d, the range ends at %d", bk, next[bk], end)
		}
	}
}
