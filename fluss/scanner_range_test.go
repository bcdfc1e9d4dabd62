package fluss

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// fakeLog is the log of the fake table's bucket: remote segments (files in
// a temp dir) below localStart, local batches from localStart to hw.
type fakeLog struct {
	dir        string
	segments   []*pb.PbRemoteLogSegment
	localStart int64
	local      [][]byte // batches, each at its base offset
	hw         int64
}

// answer plays the server's read of offset: remote segments below the local
// log start, the local batches from the one containing offset, or nothing
// (after a short wait, like max_wait_ms) at the high watermark.
func (l *fakeLog) answer(offset int64) *pb.PbFetchLogRespForBucket {
	r := &pb.PbFetchLogRespForBucket{HighWatermark: proto.Int64(l.hw)}
	if offset < l.localStart {
		info := &pb.PbRemoteLogFetchInfo{RemoteLogTabletDir: proto.String(l.dir), FirstStartPos: proto.Int32(0)}
		for _, s := range l.segments {
			if offset < s.GetRemoteLogEndOffset() {
				info.RemoteLogSegments = append(info.RemoteLogSegments, s)
			}
		}
		r.RemoteLogFetchInfo = info
		return r
	}
	if offset >= l.hw {
		time.Sleep(10 * time.Millisecond)
		r.Records = []byte{}
		return r
	}
	var recs []byte
	for _, b := range l.local {
		h := batchRange(b)
		if h[1] > offset {
			recs = append(recs, b...)
		}
	}
	r.Records = recs
	return r
}

// batchRange returns [base offset, next offset) of an encoded batch.
func batchRange(b []byte) [2]int64 {
	base := int64(b[0]) | int64(b[1])<<8 | int64(b[2])<<16 | int64(b[3])<<24
	delta := int64(b[28]) | int64(b[29])<<8 | int64(b[30])<<16 | int64(b[31])<<24
	return [2]int64{base, base + delta + 1}
}

type readRow struct {
	offset int64
	id     int32
	remote bool
}

// readFake reads [0, end) of the fake table with ReadRanges; during the
// callback of the first batch it waits until check returns true.
func readFake(t *testing.T, f *fakeTablet, end int64, check func(s *Scanner) bool) ([]readRow, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, info := openFakeTable(ctx, t, f.addr())
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s, err := c.NewScanner(info, ScanAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var rows []readRow
	first := true
	err = s.ReadRanges(ctx, []BucketRange{{Bucket: info.Bucket(NoPartition, 0), Start: 0, End: end}}, func(b *ScanBatch) error {
		if first && check != nil {
			first = false
			for !check(s) {
				if ctx.Err() != nil {
					return fmt.Errorf("waiting in the callback: %w", ctx.Err())
				}
				time.Sleep(time.Millisecond)
			}
		}
		col := b.Record.Column(0).(*array.Int32)
		for i := 0; i < b.NumRows(); i++ {
			rows = append(rows, readRow{offset: b.Offset(i), id: col.Value(i), remote: b.Remote})
		}
		return nil
	})
	return rows, err
}

// wantRows checks that rows hold offsets [0, end) once each, in order, with
// the id column equal to the offset.
func wantRows(t *testing.T, rows []readRow, end int64) {
	t.Helper()
	if int64(len(rows)) != end {
		t.Errorf("read %d rows, want %d", len(rows), end)
	}
	for i, r := range rows {
		if r.offset != int64(i) || r.id != int32(i) {
			t.Fatalf("row %d: offset %d id %d (rows %v)", i, r.offset, r.id, rows)
		}
	}
}

// TestReadRangesBatchFetchedDuringCallback reproduces the lost batch of
// TestScannerRemoteSegments deterministically: the first fetch reads the
// remote segments [0, 20), the scanner fetches [20, 30) from the local log
// while the caller still processes the remote batches, and the bucket's
// fetch position reaches the range end before the last batch was returned
// by Poll. ReadRanges must still return that batch.
func TestReadRangesBatchFetchedDuringCallback(t *testing.T) {
	dir := t.TempDir() + "/remote/log/db/t-1/0"
	b0, b1, b2 := fakeLogBatch(t, 0, 10), fakeLogBatch(t, 10, 10), fakeLogBatch(t, 20, 10)
	l := &fakeLog{
		dir: dir,
		segments: []*pb.PbRemoteLogSegment{
			fakeSegment(t, dir, "seg-a", 0, 10, b0),
			fakeSegment(t, dir, "seg-b", 10, 20, b1),
		},
		localStart: 20,
		local:      [][]byte{b2},
		hw:         30,
	}
	f := newFakeTablet(t, l.answer)
	rows, err := readFake(t, f, 30, func(s *Scanner) bool {
		p, _ := s.Position(NoPartition, 0)
		return p.Offset == 30
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, rows, 30)
	for _, r := range rows {
		if r.remote != (r.offset < 20) {
			t.Errorf("offset %d: remote = %v", r.offset, r.remote)
		}
	}
}

// TestScannerRemoteOverlappingSegments: remote segments whose batches
// overlap (a segment re-uploaded by a new leader) give each offset once.
func TestScannerRemoteOverlappingSegments(t *testing.T) {
	dir := t.TempDir() + "/remote/log/db/t-1/0"
	b0, b1, b2, b3 := fakeLogBatch(t, 0, 10), fakeLogBatch(t, 10, 10), fakeLogBatch(t, 20, 10), fakeLogBatch(t, 30, 10)
	l := &fakeLog{
		dir: dir,
		segments: []*pb.PbRemoteLogSegment{
			fakeSegment(t, dir, "seg-a", 0, 20, b0, b1),
			fakeSegment(t, dir, "seg-b", 10, 30, b1, b2),
		},
		localStart: 30,
		local:      [][]byte{b3},
		hw:         40,
	}
	f := newFakeTablet(t, l.answer)
	rows, err := readFake(t, f, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, rows, 40)
}

// TestScannerOffsetGap: a hole in the offsets (remote segments that do not
// join up, or a fetch response that skips a batch) is an error, never a
// silent skip.
func TestScannerOffsetGap(t *testing.T) {
	t.Run("remote", func(t *testing.T) {
		dir := t.TempDir() + "/remote/log/db/t-1/0"
		b0, b2 := fakeLogBatch(t, 0, 10), fakeLogBatch(t, 20, 10)
		l := &fakeLog{
			dir: dir,
			segments: []*pb.PbRemoteLogSegment{
				fakeSegment(t, dir, "seg-a", 0, 10, b0),
				fakeSegment(t, dir, "seg-c", 20, 30, b2),
			},
			localStart: 30,
			hw:         30,
		}
		checkGap(t, newFakeTablet(t, l.answer))
	})
	t.Run("local", func(t *testing.T) {
		l := &fakeLog{local: [][]byte{fakeLogBatch(t, 0, 10), fakeLogBatch(t, 20, 10)}, hw: 30}
		checkGap(t, newFakeTablet(t, l.answer))
	})
}

func checkGap(t *testing.T, f *fakeTablet) {
	t.Helper()
	rows, err := readFake(t, f, 30, nil)
	var be *BucketError
	if !errors.As(err, &be) || be.Offset != 10 || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("err = %v, want a *BucketError at offset 10 about missing offsets", err)
	}
	wantRows(t, rows, 10)
}
