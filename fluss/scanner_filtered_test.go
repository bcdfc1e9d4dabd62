package fluss

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// TestFilteredEndOffsetMovesTheFetch: a Fluss 1.0 server that read on past
// the records it returned, dropping batches a filter excluded, says how
// far in filtered_end_offset; the next fetch starts at the larger of that
// and the end of the records. The dropped offsets are never asked for, and
// a bounded read over them ends.
func TestFilteredEndOffsetMovesTheFetch(t *testing.T) {
	var (
		mu    sync.Mutex
		asked []int64
	)
	f := newFakeTablet(t, func(offset int64) *pb.PbFetchLogRespForBucket {
		mu.Lock()
		asked = append(asked, offset)
		mu.Unlock()
		r := &pb.PbFetchLogRespForBucket{HighWatermark: proto.Int64(10), Records: []byte{}}
		switch offset {
		case 0: // rows 0 and 1 kept, [2, 5) dropped
			r.Records, r.FilteredEndOffset = fakeLogBatch(t, 0, 2), proto.Int64(5)
		case 5: // [5, 7) dropped, nothing kept
			r.FilteredEndOffset = proto.Int64(7)
		case 7: // rows 7 to 9 kept; an end below theirs changes nothing
			r.Records, r.FilteredEndOffset = fakeLogBatch(t, 7, 3), proto.Int64(8)
		}
		return r
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, info := openFakeTable(ctx, t, f.addr())
	s, err := c.NewScanner(info)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []int32
	err = s.ReadRanges(ctx, []BucketRange{{Bucket: info.Bucket(NoPartition, 0), Start: 0, End: 10}}, func(b *ScanBatch) error {
		ids = append(ids, b.Record.Column(0).(*array.Int32).Int32Values()...)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadRanges: %v (fetched at %v)", err, asked)
	}
	if !slices.Equal(ids, []int32{0, 1, 7, 8, 9}) {
		t.Errorf("read %v, want [0 1 7 8 9]", ids)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []int64{0, 5, 7}) {
		t.Errorf("fetched at %v, want [0 5 7]", asked)
	}
}

// FuzzParseFetchResponse: the hand-written FetchLogResponse decoder never
// panics, and on every body the generated decoder accepts it finds each
// bucket with the same fields.
func FuzzParseFetchResponse(f *testing.F) {
	for _, m := range []*pb.FetchLogResponse{
		{TablesResp: []*pb.PbFetchLogRespForTable{{TableId: proto.Int64(1), BucketsResp: []*pb.PbFetchLogRespForBucket{
			{BucketId: proto.Int32(0), HighWatermark: proto.Int64(9), Records: []byte{1, 2, 3}, FilteredEndOffset: proto.Int64(7)},
			{PartitionId: proto.Int64(4), BucketId: proto.Int32(2), ErrorCode: proto.Int32(12), ErrorMessage: proto.String("not leader")},
		}}}},
		{TablesResp: []*pb.PbFetchLogRespForTable{{TableId: proto.Int64(-3), BucketsResp: []*pb.PbFetchLogRespForBucket{
			{BucketId: proto.Int32(1), MinRetainOffset: proto.Int64(5), LogStartOffset: proto.Int64(0),
				RemoteLogFetchInfo: &pb.PbRemoteLogFetchInfo{RemoteLogTabletDir: proto.String("/r")}},
		}}}},
	} {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := parseFetchResponse(body)
		var want pb.FetchLogResponse
		if proto.Unmarshal(body, &want) != nil {
			return
		}
		if err != nil {
			t.Fatalf("generated decoder accepts the body, parseFetchResponse: %v", err)
		}
		if len(got.tables) != len(want.GetTablesResp()) {
			t.Fatalf("%d tables, want %d", len(got.tables), len(want.GetTablesResp()))
		}
		for i, wt := range want.GetTablesResp() {
			gt := got.tables[i]
			if gt.tableID != wt.GetTableId() || len(gt.buckets) != len(wt.GetBucketsResp()) {
				t.Fatalf("table %d: id %d with %d buckets, want %d with %d", i, gt.tableID, len(gt.buckets), wt.GetTableId(), len(wt.GetBucketsResp()))
			}
			for j, wb := range wt.GetBucketsResp() {
				checkFetchBucket(t, &gt.buckets[j], wb)
			}
		}
	})
}

// checkFetchBucket compares a bucket decoded by hand with the generated
// decoder's.
func checkFetchBucket(t *testing.T, got *fetchBucketResp, want *pb.PbFetchLogRespForBucket) {
	t.Helper()
	orDefault := func(set bool, v, def int64) int64 {
		if set {
			return v
		}
		return def
	}
	if got.partitionID != orDefault(want.PartitionId != nil, want.GetPartitionId(), NoPartition) ||
		got.bucket != want.GetBucketId() || got.errCode != want.GetErrorCode() || got.errMsg != want.GetErrorMessage() ||
		got.hw != orDefault(want.HighWatermark != nil, want.GetHighWatermark(), -1) ||
		got.filteredEnd != orDefault(want.FilteredEndOffset != nil, want.GetFilteredEndOffset(), -1) ||
		!bytes.Equal(got.records, want.GetRecords()) || (got.remote == nil) != (want.RemoteLogFetchInfo == nil) {
		t.Fatalf("bucket decoded as %+v, want %v", got, want)
	}
}
