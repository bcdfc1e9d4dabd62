package fluss

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// TestScannerS3SegmentsStreamed: remote segments in S3 (a fake server)
// larger than one fetch are read over several fetches from one GET each
// (the stream is parked between fetches, the next segment prefetched), and
// every offset comes once, in order.
func TestScannerS3SegmentsStreamed(t *testing.T) {
	root := t.TempDir()
	local := root + "/remote/log/db/t-1/0"
	const rows = 5000 // about 20 KB per batch: a segment is several fetches
	var segs []*pb.PbRemoteLogSegment
	next := int64(0)
	for s := 0; s < 3; s++ {
		var batches [][]byte
		start := next
		for b := 0; b < 5; b++ {
			batches = append(batches, fakeLogBatch(t, next, rows))
			next += rows
		}
		segs = append(segs, fakeSegment(t, local, "seg-"+string(rune('a'+s)), start, next, batches...))
	}
	f := &fakeS3{objects: map[string][]byte{}, gets: map[string]int{}}
	for _, s := range segs {
		p := RemoteSegmentPath(local, s.GetRemoteLogSegmentId(), s.GetRemoteLogStartOffset())
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f.objects["/bkt/"+strings.TrimPrefix(p, root+"/")] = data
	}
	srv := httptest.NewServer(f)
	defer srv.Close()
	l := &fakeLog{dir: "s3://bkt/remote/log/db/t-1/0", segments: segs, localStart: next, local: [][]byte{fakeLogBatch(t, next, 10)}, hw: next + 10}
	var fetches atomic.Int32
	tablet := newFakeTablet(t, func(offset int64) *pb.PbFetchLogRespForBucket {
		if offset < l.localStart {
			fetches.Add(1)
		}
		return l.answer(offset)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, info := openFakeTable(ctx, t, tablet.addr())
	rs, err := c.RemoteStorage(RemoteStorageOptions{S3: S3Options{Endpoint: srv.URL, AccessKey: "ak", SecretKey: "sk", PathStyle: true}, ReadAhead: 32 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := c.NewScanner(info, ScanAllocator(mem), ScanRemoteStorage(rs), FetchMaxBucketBytes(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := int64(0)
	err = s.ReadRanges(ctx, []BucketRange{{Bucket: info.Bucket(NoPartition, 0), Start: 0, End: l.hw}}, func(b *ScanBatch) error {
		col := b.Record.Column(0).(*array.Int32)
		for i := 0; i < b.NumRows(); i++ {
			if b.Offset(i) != want || int64(col.Value(i)) != want {
				t.Fatalf("row at offset %d id %d, want %d", b.Offset(i), col.Value(i), want)
			}
			want++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want != l.hw {
		t.Fatalf("read up to offset %d, want %d", want, l.hw)
	}
	if n := fetches.Load(); n <= int32(len(segs)) {
		t.Errorf("%d remote fetches for %d segments: a segment should take several", n, len(segs))
	}
	for p := range f.objects {
		if n := f.getCount(p); n != 1 {
			t.Errorf("%s: %d GETs, want 1", p, n)
		}
	}
}
