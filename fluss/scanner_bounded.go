package fluss

import (
	"context"
	"fmt"
	"sort"
)

// BucketRange is a range of offsets [Start, End) of one bucket.
type BucketRange struct {
	Bucket TableBucket
	// Partition is the partition name ("" when not partitioned).
	Partition string
	Start     int64
	End       int64
}

// BucketRanges lists every bucket of a table with its earliest offset and
// its high watermark: what a reader starting now from the beginning would
// read. For a partitioned table it covers every bucket of every partition
// (each partition has its own count: Client.NumBuckets), or of the one named
// partition when partition is not "", ordered by partition name and then
// bucket; buckets of a non-partitioned table come in bucket order.
func (c *Client) BucketRanges(ctx context.Context, info *TableInfo, partition string) ([]BucketRange, error) {
	type part struct {
		id   int64
		name string
	}
	var parts []part
	if info.IsPartitioned() {
		ps, err := c.Partitions(ctx, info)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if partition == "" || p.Name == partition {
				parts = append(parts, part{p.ID, p.Name})
			}
		}
		if partition != "" && len(parts) == 0 {
			return nil, fmt.Errorf("fluss: table %s has no partition %q", info.Path, partition)
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i].name < parts[j].name })
	} else {
		if partition != "" {
			return nil, fmt.Errorf("fluss: table %s is not partitioned", info.Path)
		}
		parts = []part{{NoPartition, ""}}
	}
	var out []BucketRange
	for _, p := range parts {
		n, err := c.NumBuckets(ctx, info, p.id)
		if err != nil {
			return nil, err
		}
		earliest, err := c.ListOffsets(ctx, info, p.id, nil, EarliestOffset())
		if err != nil {
			return nil, err
		}
		latest, err := c.ListOffsets(ctx, info, p.id, nil, LatestOffset())
		if err != nil {
			return nil, err
		}
		for b := int32(0); b < n; b++ {
			out = append(out, BucketRange{
				Bucket: info.Bucket(p.id, b), Partition: p.name, Start: earliest[b], End: latest[b],
			})
		}
	}
	return out, nil
}

// ReadRanges reads the given bucket ranges with s and calls fn with every
// batch, trimmed to the range, in offset order per bucket (buckets
// interleave). The batch is released when fn returns: retain its record to
// keep it. The buckets are subscribed for the call and unsubscribed as they
// reach their End; s must not be subscribed to them already. ReadRanges
// returns when every range is read, on the first error (from Poll or fn),
// or when ctx ends.
func (s *Scanner) ReadRanges(ctx context.Context, ranges []BucketRange, fn func(*ScanBatch) error) error {
	ends := map[TableBucket]int64{}
	for _, r := range ranges {
		if r.Start >= r.End {
			continue
		}
		if _, dup := ends[r.Bucket]; dup {
			return fmt.Errorf("fluss: read ranges of %s: %s listed twice", s.info.Path, r.Bucket)
		}
		if err := s.Subscribe(ctx, r.Bucket.PartitionID, r.Bucket.Bucket, ExactOffset(r.Start)); err != nil {
			return err
		}
		ends[r.Bucket] = r.End
	}
	defer func() {
		for tb := range ends {
			s.Unsubscribe(tb.PartitionID, tb.Bucket)
		}
	}()
	for len(ends) > 0 {
		batches, err := s.Poll(ctx)
		var ferr error
		for _, b := range batches {
			end, ok := ends[b.Bucket]
			if ferr == nil && ok && b.FirstOffset < end {
				if last := b.FirstOffset + int64(b.NumRows()); last > end {
					trimBatch(b, end)
				}
				ferr = fn(b)
			}
			b.Release()
		}
		if ferr != nil {
			return ferr
		}
		if err != nil {
			return err
		}
		// A bucket is done when Poll has returned every row below its end.
		// Its fetch position is no proof: a fetch that completes while fn
		// runs moves it to the end with the last batch still queued for
		// the next Poll (and Unsubscribe would drop that batch).
		for tb, end := range ends {
			if p, ok := s.Position(tb.PartitionID, tb.Bucket); !ok || p.Returned >= end {
				s.Unsubscribe(tb.PartitionID, tb.Bucket)
				delete(ends, tb)
			}
		}
	}
	return nil
}

// trimBatch drops the rows at or after offset end.
func trimBatch(b *ScanBatch, end int64) {
	n := end - b.FirstOffset
	rec := b.Record.NewSlice(0, n)
	b.Record.Release()
	b.Record = rec
	if b.ChangeTypes != nil {
		b.ChangeTypes = b.ChangeTypes[:n]
	}
}

// PartitionWatcher discovers the partitions of a partitioned table created
// and dropped over time (Fluss does not notify clients of them): call Poll
// periodically.
type PartitionWatcher struct {
	c     *Client
	info  *TableInfo
	known map[int64]PartitionInfo
}

// NewPartitionWatcher returns a watcher that knows no partition yet: its
// first Poll reports every existing partition as added.
func (c *Client) NewPartitionWatcher(info *TableInfo) (*PartitionWatcher, error) {
	if !info.IsPartitioned() {
		return nil, fmt.Errorf("fluss: table %s is not partitioned", info.Path)
	}
	return &PartitionWatcher{c: c, info: info, known: map[int64]PartitionInfo{}}, nil
}

// Poll lists the table's partitions and returns those created and dropped
// since the previous call, ordered by partition id.
func (w *PartitionWatcher) Poll(ctx context.Context) (added, removed []PartitionInfo, err error) {
	ps, err := w.c.Partitions(ctx, w.info)
	if err != nil {
		return nil, nil, err
	}
	seen := make(map[int64]bool, len(ps))
	for _, p := range ps {
		seen[p.ID] = true
		if _, ok := w.known[p.ID]; !ok {
			w.known[p.ID] = p
			added = append(added, p)
		}
	}
	for id, p := range w.known {
		if !seen[id] {
			delete(w.known, id)
			removed = append(removed, p)
		}
	}
	sort.Slice(removed, func(i, j int) bool { return removed[i].ID < removed[j].ID })
	return added, removed, nil
}
