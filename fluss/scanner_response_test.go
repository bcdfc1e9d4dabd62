package fluss

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// TestParseFetchResponse checks the hand-written FetchLogResponse decoder
// against the generated one, and that the records alias the body.
func TestParseFetchResponse(t *testing.T) {
	recs := bytes.Repeat([]byte{7}, 100)
	msg := &pb.FetchLogResponse{TablesResp: []*pb.PbFetchLogRespForTable{{
		TableId: proto.Int64(42),
		BucketsResp: []*pb.PbFetchLogRespForBucket{
			{BucketId: proto.Int32(0), HighWatermark: proto.Int64(10), Records: recs},
			{PartitionId: proto.Int64(5), BucketId: proto.Int32(2), ErrorCode: proto.Int32(-1), ErrorMessage: proto.String("boom")},
			{BucketId: proto.Int32(1), ErrorCode: proto.Int32(12), RemoteLogFetchInfo: &pb.PbRemoteLogFetchInfo{
				RemoteLogTabletDir: proto.String("/r/log"), FirstStartPos: proto.Int32(3),
			}},
		},
	}}}
	body, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseFetchResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := r.find(42, NoPartition, 0)
	if !ok || b.hw != 10 || !bytes.Equal(b.records, recs) || b.errCode != 0 {
		t.Errorf("bucket 0 = %+v, %v", b, ok)
	}
	if idx := bytes.Index(body, recs); idx < 0 || &b.records[0] != &body[idx] {
		t.Errorf("records are a copy, not a slice of the body")
	}
	b, ok = r.find(42, 5, 2)
	if !ok || b.errCode != -1 || b.errMsg != "boom" || b.hw != -1 {
		t.Errorf("partition 5 bucket 2 = %+v, %v", b, ok)
	}
	b, ok = r.find(42, NoPartition, 1)
	if !ok || b.errCode != 12 || len(b.remote) == 0 {
		t.Errorf("bucket 1 = %+v, %v", b, ok)
	}
	var info pb.PbRemoteLogFetchInfo
	if err := proto.Unmarshal(b.remote, &info); err != nil || info.GetFirstStartPos() != 3 {
		t.Errorf("remote info %v, %v", &info, err)
	}
	if _, ok := r.find(43, NoPartition, 0); ok {
		t.Error("found a bucket of another table")
	}
	// Every truncation fails cleanly.
	for i := 0; i < len(body); i++ {
		_, _ = parseFetchResponse(body[:i])
	}
	if _, err := parseFetchResponse(body[:len(body)-1]); err == nil {
		t.Error("truncated body parsed without error")
	}
}

// TestBucketOf pins the Fluss bucketing function on a few keys (values
// checked against the Java client by TestWriterPrimaryKey, which routes
// keys with both clients to the same buckets).
func TestBucketOf(t *testing.T) {
	if got := BucketOf([]byte{1, 2, 3}, 1); got != 0 {
		t.Errorf("one bucket: %d", got)
	}
	seen := map[int32]bool{}
	for i := 0; i < 64; i++ {
		b := BucketOf([]byte{byte(i), 0xff, byte(i * 7)}, 3)
		if b < 0 || b >= 3 {
			t.Fatalf("bucket %d out of range", b)
		}
		seen[b] = true
	}
	if len(seen) != 3 {
		t.Errorf("64 keys hit buckets %v only", seen)
	}
	if murmurInt(-1<<31) < 0 {
		t.Error("negative hash")
	}
}
