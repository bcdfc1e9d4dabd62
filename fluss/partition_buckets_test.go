package fluss

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
)

// partitionedTable is what a fake server serves: table db.t (id 1) with
// columns id INT and p STRING, partitioned by p, declaring tableBuckets
// buckets, whose partitions have the bucket counts in buckets. That is a
// Fluss 1.0 table after ALTER TABLE SET ('bucket.num'): partitions created
// before keep their count. Every bucket holds rows at offsets 0 to
// rowsPerBucket-1 whose id is partition id*1000 + bucket*100 + offset.
type partitionedTable struct {
	tableBuckets int32
	parts        []PartitionInfo
	buckets      map[int64]int32
	// declared: the answers carry Fluss 1.0's bucket_count fields;
	// otherwise only the buckets the metadata lists tell a count (as
	// servers before 1.0 answer).
	declared bool
	pk       bool // a primary-key table (id, p), bucketed by id

	mu  sync.Mutex
	put []*pb.PbPutKvReqForBucket // the PutKv buckets received
}

const rowsPerBucket = 3

func (pt *partitionedTable) tableJSON() []byte {
	pk := ""
	if pt.pk {
		pk = `,"primary_key":["id","p"]`
	}
	return fmt.Appendf(nil, `{"version":1,"schema":{"version":1,"columns":[{"name":"id","data_type":{"type":"INTEGER"},"id":0},`+
		`{"name":"p","data_type":{"type":"STRING"},"id":1}]%s,"highest_field_id":1},"partition_key":["p"],"bucket_key":[],`+
		`"bucket_count":%d,"properties":{},"custom_properties":{}}`, pk, pt.tableBuckets)
}

// answer plays coordinator and tablet server 0 of the table.
func (pt *partitionedTable) answer(f *fakeTablet, key wire.APIKey, body []byte) proto.Message {
	switch key {
	case wire.APIVersions:
		return fakeVersions(wire.APIVersions, wire.GetMetadata, wire.ListPartitionInfos, wire.ListOffsets, wire.FetchLog, wire.PutKV)
	case wire.GetMetadata:
		return pt.metadata(f, decoded[pb.MetadataRequest](body))
	case wire.ListPartitionInfos:
		r := &pb.ListPartitionInfosResponse{}
		for _, p := range pt.parts {
			pi := &pb.PbPartitionInfo{PartitionId: proto.Int64(p.ID), PartitionSpec: &pb.PbPartitionSpec{
				PartitionKeyValues: []*pb.PbKeyValue{{Key: proto.String("p"), Value: proto.String(p.Name)}},
			}}
			if pt.declared {
				pi.BucketCount = proto.Int32(pt.buckets[p.ID])
			}
			r.PartitionsInfo = append(r.PartitionsInfo, pi)
		}
		return r
	case wire.ListOffsets:
		req := decoded[pb.ListOffsetsRequest](body)
		r := &pb.ListOffsetsResponse{}
		for _, b := range req.GetBucketId() {
			br := &pb.PbListOffsetsRespForBucket{BucketId: proto.Int32(b)}
			switch {
			case b >= pt.buckets[req.GetPartitionId()]:
				br.ErrorCode = proto.Int32(errcode.UnknownTableOrBucket.Code)
			case req.GetOffsetType() == int32(offsetLatest):
				br.Offset = proto.Int64(rowsPerBucket)
			default:
				br.Offset = proto.Int64(0)
			}
			r.BucketsResp = append(r.BucketsResp, br)
		}
		return r
	case wire.FetchLog:
		return pt.fetch(f, decoded[pb.FetchLogRequest](body))
	case wire.PutKV:
		req := decoded[pb.PutKvRequest](body)
		r := &pb.PutKvResponse{}
		pt.mu.Lock()
		for _, br := range req.GetBucketsReq() {
			pt.put = append(pt.put, br)
			r.BucketsResp = append(r.BucketsResp, &pb.PbPutKvRespForBucket{PartitionId: br.PartitionId, BucketId: br.BucketId})
		}
		pt.mu.Unlock()
		return r
	}
	return nil
}

func (pt *partitionedTable) metadata(f *fakeTablet, req *pb.MetadataRequest) *pb.MetadataResponse {
	r := &pb.MetadataResponse{CoordinatorServer: f.node(), TabletServers: []*pb.PbServerNode{f.node()}}
	for _, tp := range req.GetTablePath() {
		if tp.GetDatabaseName() == "db" && tp.GetTableName() == "t" {
			r.TableMetadata = append(r.TableMetadata, &pb.PbTableMetadata{
				TablePath: tp, TableId: proto.Int64(1), SchemaId: proto.Int32(1), TableJson: pt.tableJSON(),
				CreatedTime: proto.Int64(1), ModifiedTime: proto.Int64(2),
			})
		}
	}
	for _, p := range pt.parts {
		if !slices.Contains(req.GetPartitionsId(), p.ID) {
			continue
		}
		pm := &pb.PbPartitionMetadata{TableId: proto.Int64(1), PartitionName: proto.String(p.Name), PartitionId: proto.Int64(p.ID)}
		for b := range pt.buckets[p.ID] {
			pm.BucketMetadata = append(pm.BucketMetadata, &pb.PbBucketMetadata{BucketId: proto.Int32(b), LeaderId: proto.Int32(0)})
		}
		if pt.declared {
			pm.BucketCount = proto.Int32(pt.buckets[p.ID])
		}
		r.PartitionMetadata = append(r.PartitionMetadata, pm)
	}
	return r
}

func (pt *partitionedTable) fetch(f *fakeTablet, req *pb.FetchLogRequest) *pb.FetchLogResponse {
	r := &pb.FetchLogResponse{}
	for _, tr := range req.GetTablesReq() {
		out := &pb.PbFetchLogRespForTable{TableId: proto.Int64(tr.GetTableId())}
		for _, br := range tr.GetBucketsReq() {
			pid, b, off := br.GetPartitionId(), br.GetBucketId(), br.GetFetchOffset()
			resp := &pb.PbFetchLogRespForBucket{PartitionId: proto.Int64(pid), BucketId: proto.Int32(b)}
			switch {
			case b >= pt.buckets[pid]:
				resp.ErrorCode = proto.Int32(errcode.UnknownTableOrBucket.Code)
			case off < rowsPerBucket:
				resp.HighWatermark = proto.Int64(rowsPerBucket)
				resp.Records = partitionedBatch(f.t, pid, b, off)
			default:
				resp.HighWatermark = proto.Int64(rowsPerBucket)
				resp.Records = []byte{}
			}
			out.BucketsResp = append(out.BucketsResp, resp)
		}
		r.TablesResp = append(r.TablesResp, out)
	}
	return r
}

// partitionedBatch encodes the rows of a bucket of the table from offset
// first to its end.
func partitionedBatch(t *testing.T, pid int64, bucket int32, first int64) []byte {
	ids := array.NewInt32Builder(memory.DefaultAllocator)
	defer ids.Release()
	ps := array.NewStringBuilder(memory.DefaultAllocator)
	defer ps.Release()
	n := rowsPerBucket - first
	for off := first; off < rowsPerBucket; off++ {
		ids.Append(int32(pid*1000 + int64(bucket)*100 + off))
		ps.Append(fmt.Sprint(pid))
	}
	cols := []arrow.Array{ids.NewArray(), ps.NewArray()}
	defer cols[0].Release()
	defer cols[1].Release()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "p", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	rec := array.NewRecordBatch(schema, cols, n)
	defer rec.Release()
	out, err := records.EncodeLogBatch(rec, records.LogBatchOptions{SchemaID: 1, BaseOffset: first})
	if err != nil {
		t.Error(err)
	}
	return out
}

// rescaled is a table declaring 3 buckets whose partitions have 2 (a) and
// 5 (b): a reader going by the table's count asks for a bucket partition
// a does not have and misses two of b's.
func rescaled(declared bool) *partitionedTable {
	return &partitionedTable{
		tableBuckets: 3,
		parts:        []PartitionInfo{{ID: 10, Name: "a"}, {ID: 11, Name: "b"}},
		buckets:      map[int64]int32{10: 2, 11: 5},
		declared:     declared,
	}
}

// TestRescaledPartitionsReadFully reads a table whose partitions have
// bucket counts other than the table's: every bucket of both partitions is
// listed, subscribed and read once, and the bounded read ends; with the
// counts declared (Fluss 1.0 bucket_count) and with only the bucket lists
// of the metadata to go by.
func TestRescaledPartitionsReadFully(t *testing.T) {
	for _, declared := range []bool{true, false} {
		t.Run(fmt.Sprintf("declared=%v", declared), func(t *testing.T) {
			readEveryBucket(t, rescaled(declared))
		})
	}
}

// TestOldStylePartitionsReadFully: an answer without bucket_count fields
// whose partitions all have the table's count (every server before 1.0).
func TestOldStylePartitionsReadFully(t *testing.T) {
	pt := rescaled(false)
	pt.buckets = map[int64]int32{10: 3, 11: 3}
	readEveryBucket(t, pt)
}

// readEveryBucket reads pt's table from a fake server with BucketRanges and
// ReadRanges, subscribes every bucket of each partition, and lists the
// offsets of every bucket, checking each covers exactly the partitions'
// buckets.
func readEveryBucket(t *testing.T, pt *partitionedTable) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f := newFakeServer(t, pt.answer)
	c, info := openFakeTable(ctx, t, f.addr())
	want := map[TableBucket]bool{}
	for _, p := range pt.parts {
		for b := range pt.buckets[p.ID] {
			want[info.Bucket(p.ID, b)] = true
		}
		if n, err := c.NumBuckets(ctx, info, p.ID); err != nil || n != pt.buckets[p.ID] {
			t.Errorf("NumBuckets of partition %s = %d, %v; want %d", p.Name, n, err, pt.buckets[p.ID])
		}
	}

	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ranges {
		if !want[r.Bucket] || r.Start != 0 || r.End != rowsPerBucket {
			t.Errorf("range %+v", r)
		}
	}
	if len(ranges) != len(want) {
		t.Errorf("%d ranges, want %d", len(ranges), len(want))
	}
	s, err := c.NewScanner(info)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read := map[TableBucket][]int32{}
	err = s.ReadRanges(ctx, ranges, func(b *ScanBatch) error {
		ids := b.Record.Column(0).(*array.Int32)
		read[b.Bucket] = append(read[b.Bucket], ids.Int32Values()...)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadRanges: %v", err)
	}
	for tb := range want {
		base := int32(tb.PartitionID*1000) + tb.Bucket*100
		if got := read[tb]; !slices.Equal(got, []int32{base, base + 1, base + 2}) {
			t.Errorf("%s: read %v", tb, got)
		}
	}
	if len(read) != len(want) {
		t.Errorf("read %d buckets, want %d", len(read), len(want))
	}
	subscribeEveryBucket(ctx, t, c, info, pt, want)
}

// subscribeEveryBucket subscribes and lists the offsets of every bucket
// (nil) of each partition, and checks that a bucket beyond a partition's
// count is refused.
func subscribeEveryBucket(ctx context.Context, t *testing.T, c *Client, info *TableInfo, pt *partitionedTable, want map[TableBucket]bool) {
	s, err := c.NewScanner(info)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range pt.parts {
		if err := s.SubscribeBuckets(ctx, p.ID, nil, LatestOffset()); err != nil {
			t.Fatal(err)
		}
		offs, err := c.ListOffsets(ctx, info, p.ID, nil, LatestOffset())
		if err != nil || len(offs) != int(pt.buckets[p.ID]) {
			t.Errorf("latest offsets of partition %s: %v, %v", p.Name, offs, err)
		}
		n := pt.buckets[p.ID]
		err = s.Subscribe(ctx, p.ID, n, EarliestOffset())
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("bucket %d out of range [0, %d)", n, n)) {
			t.Errorf("subscribing bucket %d of partition %s: %v", n, p.Name, err)
		}
	}
	pos := s.Positions()
	for _, p := range pos {
		if !want[p.Bucket] || p.Offset != rowsPerBucket {
			t.Errorf("position %+v", p)
		}
	}
	if len(pos) != len(want) {
		t.Errorf("%d buckets subscribed, want %d", len(pos), len(want))
	}
}

// TestPutKVRoutesByPartitionBuckets: rows written to a partition of a
// primary-key table are hashed over that partition's bucket count, which
// the requests carry as routing_bucket_count.
func TestPutKVRoutesByPartitionBuckets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pt := rescaled(true)
	pt.pk = true
	f := newFakeServer(t, pt.answer)
	c, info := openFakeTable(ctx, t, f.addr())
	w, err := c.NewWriter(info)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pt.parts {
		ids := array.NewInt32Builder(memory.DefaultAllocator)
		ps := array.NewStringBuilder(memory.DefaultAllocator)
		for i := range 64 {
			ids.Append(int32(i))
			ps.Append(p.Name)
		}
		cols := []arrow.Array{ids.NewArray(), ps.NewArray()}
		rec := array.NewRecordBatch(w.Schema(), cols, 64)
		err := w.Upsert(ctx, p.ID, rec)
		rec.Release()
		cols[0].Release()
		cols[1].Release()
		ids.Release()
		ps.Release()
		if err != nil {
			t.Fatalf("upsert to partition %s: %v", p.Name, err)
		}
	}
	used := map[int64]map[int32]bool{}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	for _, br := range pt.put {
		pid, b, n := br.GetPartitionId(), br.GetBucketId(), pt.buckets[br.GetPartitionId()]
		if b < 0 || b >= n || br.GetRoutingBucketCount() != n {
			t.Errorf("partition %d: bucket %d with routing_bucket_count %d; the partition has %d buckets", pid, b, br.GetRoutingBucketCount(), n)
		}
		if used[pid] == nil {
			used[pid] = map[int32]bool{}
		}
		used[pid][b] = true
	}
	for _, p := range pt.parts {
		if len(used[p.ID]) != int(pt.buckets[p.ID]) {
			t.Errorf("64 keys went to buckets %v of partition %s, want all %d", used[p.ID], p.Name, pt.buckets[p.ID])
		}
	}
}

// TestListedBucketCount: a partition's listed buckets count only when their
// ids are exactly 0 to n-1 (a gap or a repeat is not its whole set).
func TestListedBucketCount(t *testing.T) {
	list := func(ids ...int32) []*pb.PbBucketMetadata {
		var out []*pb.PbBucketMetadata
		for _, id := range ids {
			out = append(out, &pb.PbBucketMetadata{BucketId: proto.Int32(id)})
		}
		return out
	}
	for _, c := range []struct {
		ids  []int32
		want int
	}{{nil, 0}, {[]int32{0}, 1}, {[]int32{2, 0, 1}, 3}, {[]int32{0, 2}, 0}, {[]int32{1, 1}, 0}, {[]int32{0, -1}, 0}} {
		if got := listedBucketCount(list(c.ids...)); got != c.want {
			t.Errorf("listedBucketCount(%v) = %d, want %d", c.ids, got, c.want)
		}
	}
}

// TestReportedBucketCount pins where a partition's bucket count comes
// from: the declared bucket_count, else the buckets listed, else none (the
// table's count applies); nonsense counts are not believed.
func TestReportedBucketCount(t *testing.T) {
	for _, c := range []struct {
		declared int32
		listed   int
		want     int32
		ok       bool
	}{
		{4, 2, 4, true},
		{0, 2, 2, true},
		{0, 0, 0, false},
		{-1, 3, 3, true},
		{maxBucketCount + 1, 0, 0, false},
		{maxBucketCount + 1, 7, 7, true},
		{maxBucketCount, 0, maxBucketCount, true},
	} {
		if n, ok := reportedBucketCount(c.declared, c.listed); n != c.want || ok != c.ok {
			t.Errorf("reportedBucketCount(%d, %d) = %d, %v; want %d, %v", c.declared, c.listed, n, ok, c.want, c.ok)
		}
	}
}
