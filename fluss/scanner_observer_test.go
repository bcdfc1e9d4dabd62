package fluss

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// TestScanFetchObserver: the observer sees every FetchLog request with the
// leader's id, the bucket count, the response size and a duration that
// covers the server's answer time.
func TestScanFetchObserver(t *testing.T) {
	const delay = 20 * time.Millisecond
	l := &fakeLog{local: [][]byte{fakeLogBatch(t, 0, 10), fakeLogBatch(t, 10, 10)}, hw: 20}
	f := newFakeTablet(t, func(offset int64) *pb.PbFetchLogRespForBucket {
		time.Sleep(delay)
		return l.answer(offset)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, info := openFakeTable(ctx, t, f.addr())
	var (
		mu    sync.Mutex
		infos []FetchInfo
	)
	s, err := c.NewScanner(info, ScanFetchObserver(func(fi FetchInfo) {
		mu.Lock()
		infos = append(infos, fi)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	err = s.ReadRanges(ctx, []BucketRange{{Bucket: info.Bucket(NoPartition, 0), Start: 0, End: 20}}, func(b *ScanBatch) error {
		rows += b.NumRows()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if rows != 20 {
		t.Errorf("read %d rows, want 20", rows)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(infos) == 0 {
		t.Fatal("the observer saw no fetch")
	}
	if got := s.Stats().Fetches; int64(len(infos)) < got {
		t.Errorf("the observer saw %d fetches, the scanner counted %d responses", len(infos), got)
	}
	answered := 0
	for i, fi := range infos {
		if fi.Err != nil {
			// Only the fetch cut short by Close may fail.
			continue
		}
		answered++
		if fi.Server != 0 || fi.Buckets != 1 {
			t.Errorf("fetch %d: server %d, %d buckets; want server 0, 1 bucket", i, fi.Server, fi.Buckets)
		}
		if fi.Duration < delay || fi.Duration > 10*time.Second {
			t.Errorf("fetch %d: duration %v, want at least the server's %v", i, fi.Duration, delay)
		}
		if fi.Bytes <= 0 {
			t.Errorf("fetch %d: %d bytes", i, fi.Bytes)
		}
	}
	if answered == 0 {
		t.Errorf("no answered fetch among %v", infos)
	}
}
