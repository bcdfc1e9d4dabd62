package fluss

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// OffsetSpec selects an offset of each bucket: which offset ListOffsets
// returns, and where a scanner subscription starts reading.
type OffsetSpec struct {
	kind  int8 // offsetEarliest, offsetLatest, offsetTimestamp, offsetExact
	value int64
}

// The kinds of OffsetSpec; the first three are the server's offset types.
const (
	offsetEarliest  int8 = 0
	offsetLatest    int8 = 1
	offsetTimestamp int8 = 2
	offsetExact     int8 = 3
)

// EarliestOffset is the first offset still stored (local, remote or lake).
func EarliestOffset() OffsetSpec { return OffsetSpec{kind: offsetEarliest} }

// LatestOffset is the high watermark: the offset the next committed record
// will get; records below it are readable. A subscription starting there
// reads only rows written from now on.
func LatestOffset() OffsetSpec { return OffsetSpec{kind: offsetLatest} }

// OffsetAtTimestamp is the offset of the first batch committed at or after
// ms (milliseconds since the epoch); the high watermark when no batch is that
// recent. A time in the server's future is an INVALID_TIMESTAMP error.
func OffsetAtTimestamp(ms int64) OffsetSpec { return OffsetSpec{kind: offsetTimestamp, value: ms} }

// ExactOffset is an explicit offset: a subscription starts there, and
// ListOffsets returns it for every bucket without asking the servers.
func ExactOffset(offset int64) OffsetSpec { return OffsetSpec{kind: offsetExact, value: offset} }

// String describes the spec.
func (s OffsetSpec) String() string {
	switch s.kind {
	case offsetEarliest:
		return "earliest"
	case offsetLatest:
		return "latest"
	case offsetTimestamp:
		return "timestamp " + strconv.FormatInt(s.value, 10)
	}
	return "offset " + strconv.FormatInt(s.value, 10)
}

// ListOffsets returns the offset selected by spec for buckets (nil = every
// bucket) of a table, or of one partition (partitionID NoPartition for
// non-partitioned tables). Requests go to each bucket's leader, buckets
// grouped by leader; leader changes and retriable errors are retried after a
// metadata refresh.
func (c *Client) ListOffsets(ctx context.Context, info *TableInfo, partitionID int64, buckets []int32, spec OffsetSpec) (map[int32]int64, error) {
	buckets, _, err := c.checkBuckets(ctx, info, partitionID, buckets)
	if err != nil {
		return nil, fmt.Errorf("fluss: list offsets of table %s: %w", info.Path, err)
	}
	out := make(map[int32]int64, len(buckets))
	if spec.kind == offsetExact {
		if spec.value < 0 {
			return nil, fmt.Errorf("fluss: list offsets of table %s: negative offset %d", info.Path, spec.value)
		}
		for _, b := range buckets {
			out[b] = spec.value
		}
		return out, nil
	}
	remaining := append([]int32(nil), buckets...)
	where := info.Path.String()
	if partitionID != NoPartition {
		where += " partition " + strconv.FormatInt(partitionID, 10)
	}

	err = c.retry(ctx, retriableOrStale, nil, func() error {
		next, retryErr, fatal := c.listOffsetsRound(ctx, info, partitionID, remaining, spec, where, out)
		if fatal != nil {
			return fatal
		}
		remaining = next
		if len(remaining) > 0 {
			return retryErr
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// listOffsetsRound asks the leaders of buckets for their offsets once,
// storing answers in out. It returns the buckets to ask again (with the last
// retriable error) or the first error not worth retrying.
func (c *Client) listOffsetsRound(ctx context.Context, info *TableInfo, partitionID int64, buckets []int32, spec OffsetSpec, where string, out map[int32]int64) (next []int32, retryErr, fatal error) {
	var mu sync.Mutex
	keep := func(b int32, err error) {
		mu.Lock()
		defer mu.Unlock()
		if errcode.InvalidatesMetadata(err) {
			c.invalidateLeader(info.Bucket(partitionID, b))
		}
		if retriableOrStale(err) {
			next = append(next, b)
			retryErr = err
			return
		}
		if fatal == nil {
			fatal = err
		}
	}
	noLeader := func(b int32, err error) {
		keep(b, fmt.Errorf("fluss: %s offset of %s bucket %d: %w", spec, where, b, err))
	}
	c.forEachLeader(ctx, info, partitionID, buckets, noLeader, func(leader int32, bs []int32) {
		res, err := c.listOffsetsOnce(ctx, leader, info, partitionID, bs, spec)
		if err != nil {
			for _, b := range bs {
				keep(b, fmt.Errorf("fluss: %s offset of %s bucket %d on tablet server %d: %w", spec, where, b, leader, err))
			}
			return
		}
		got := map[int32]bool{}
		for _, r := range res.GetBucketsResp() {
			b := r.GetBucketId()
			got[b] = true
			if err := errcode.New(r.GetErrorCode(), r.GetErrorMessage()); err != nil {
				keep(b, fmt.Errorf("fluss: %s offset of %s bucket %d on tablet server %d: %w", spec, where, b, leader, err))
				continue
			}
			mu.Lock()
			out[b] = r.GetOffset()
			mu.Unlock()
		}
		for _, b := range bs {
			if !got[b] {
				keep(b, fmt.Errorf("fluss: %s offset of %s bucket %d: missing from the response of tablet server %d: %w",
					spec, where, b, leader, errcode.New(errcode.UnknownTableOrBucket.Code, "")))
			}
		}
	})
	return next, retryErr, fatal
}

func (c *Client) listOffsetsOnce(ctx context.Context, leader int32, info *TableInfo, partitionID int64, buckets []int32, spec OffsetSpec) (*pb.ListOffsetsResponse, error) {
	conn, err := c.tabletConn(ctx, leader)
	if err != nil {
		return nil, err
	}
	req := &pb.ListOffsetsRequest{
		FollowerServerId: proto.Int32(-1),
		OffsetType:       proto.Int32(int32(spec.kind)),
		TableId:          proto.Int64(info.TableID),
		BucketId:         buckets,
	}
	if partitionID != NoPartition {
		req.PartitionId = proto.Int64(partitionID)
	}
	if spec.kind == offsetTimestamp {
		req.StartTimestamp = proto.Int64(spec.value)
	}
	var resp pb.ListOffsetsResponse
	if err := conn.Call(ctx, wire.ListOffsets, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
