package e2e

import (
	"context"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// LocalLogStarts returns the local log start of each bucket of ranges: the
// first offset from which a fetch is answered from the tablet server's
// local log, not with remote segments; the offsets below it exist only in
// remote storage. Found by bisection with one-row reads (a fetch at an
// offset below it comes back from remote segments, ScanBatch.Remote).
// (A scan from earliest does not tell: the answer to a fetch below it
// names every segment already copied to S3, local or not.)
func LocalLogStarts(ctx context.Context, c *fluss.Client, info *fluss.TableInfo, ranges []fluss.BucketRange) (map[int32]int64, error) {
	lo, hi := map[int32]int64{}, map[int32]int64{}
	for _, r := range ranges {
		lo[r.Bucket.Bucket], hi[r.Bucket.Bucket] = r.Start, r.End
	}
	for {
		var probe []fluss.BucketRange
		for _, r := range ranges {
			if bk := r.Bucket.Bucket; lo[bk] < hi[bk] {
				mid := lo[bk] + (hi[bk]-lo[bk])/2
				probe = append(probe, fluss.BucketRange{Bucket: r.Bucket, Start: mid, End: mid + 1})
			}
		}
		if len(probe) == 0 {
			return lo, nil
		}
		s, err := c.NewScanner(info)
		if err != nil {
			return nil, err
		}
		remote := map[int32]bool{}
		err = s.ReadRanges(ctx, probe, func(b *fluss.ScanBatch) error {
			remote[b.Bucket.Bucket] = b.Remote
			return nil
		})
		s.Close()
		if err != nil {
			return nil, err
		}
		for _, p := range probe {
			if bk := p.Bucket.Bucket; remote[bk] {
				lo[bk] = p.Start + 1
			} else {
				hi[bk] = p.Start
			}
		}
	}
}
