package fluss_test

// Writer tests: rows written by our writer are read identically by the Java
// tool's scan.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// readAll reads every batch of table src with our scanner and hands it to
// fn in offset order per bucket.
func readAll(t *testing.T, c *fluss.Client, src string, fn func(b *fluss.ScanBatch)) *fluss.TableInfo {
	t.Helper()
	ctx := cmpCtx(t, 3*time.Minute)
	path, err := fluss.ParseTablePath(src)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewScanner(info, fluss.ScanAllocator(checkedAlloc(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error { fn(b); return nil }); err != nil {
		t.Fatal(err)
	}
	return info
}

// TestWriterAppendRoundTrip: every batch the Java client wrote to a table of
// every type is appended by our writer to a twin table, bucket for bucket;
// the Java tool must then print the same lines for both tables (same
// buckets, offsets, change types and values), projected scans included.
func TestWriterAppendRoundTrip(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	for _, codec := range []string{"ZSTD", "LZ4_FRAME"} {
		t.Run(codec, func(t *testing.T) {
			src := db + ".src_" + strings.ToLower(codec)
			dst := db + ".dst_" + strings.ToLower(codec)
			flusstest.RunJava(t, "create-table", src, "--all-types", "--buckets", "2", "--compression", codec)
			flusstest.RunJava(t, "append", src, "--rows", "160", "--seed", "21", "--flush-every", "40")

			ctx := cmpCtx(t, 3*time.Minute)
			srcPath, _ := fluss.ParseTablePath(src)
			dstPath, _ := fluss.ParseTablePath(dst)
			srcInfo, err := c.RefreshTable(ctx, srcPath)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.CreateTable(ctx, dstPath, srcInfo.Descriptor, false); err != nil {
				t.Fatal(err)
			}
			dstInfo := waitTable(t, c, dstPath)
			w, err := c.NewWriter(dstInfo)
			if err != nil {
				t.Fatal(err)
			}
			if w.Compression().String() != codec {
				t.Errorf("writer codec %s, want the table's %s", w.Compression(), codec)
			}
			rows := 0
			readAll(t, c, src, func(b *fluss.ScanBatch) {
				off, err := w.Append(ctx, fluss.NoPartition, b.Bucket.Bucket, b.Record)
				if err != nil {
					t.Fatalf("append bucket %d: %v", b.Bucket.Bucket, err)
				}
				if off != b.FirstOffset {
					t.Errorf("bucket %d: appended at offset %d, source batch at %d", b.Bucket.Bucket, off, b.FirstOffset)
				}
				rows += b.NumRows()
			})
			if rows != 160 {
				t.Fatalf("copied %d rows, want 160", rows)
			}
			want := javaScan(t, src)
			sameLines(t, dst+" (java scan)", want, javaScan(t, dst))
			sameLines(t, dst+" (go scan)", want, goScan(t, c, dst))
			if codec == "ZSTD" {
				cols := []string{"c_row_nested", "id", "c_map_bytes_ltz"}
				sameLines(t, dst+" projected (java scan)", javaScan(t, src, cols...), javaScan(t, dst, cols...))
			}
		})
	}
}

// waitTable waits until a new table's buckets have leaders.
func waitTable(t *testing.T, c *fluss.Client, path fluss.TablePath) *fluss.TableInfo {
	t.Helper()
	ctx := cmpCtx(t, 3*time.Minute) // a loaded machine can take over a minute to elect leaders
	for {
		info, err := c.RefreshTable(ctx, path)
		if err == nil {
			if _, err = c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.LatestOffset()); err == nil {
				return info
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("table %s not ready: %v", path, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestWriterPrimaryKey: our writer upserts and deletes rows of a
// primary-key table with 3 buckets; the Java client then updates some of
// the same keys, which proves both clients route a key to the same bucket;
// the Java tool's scan of the changelog must match ours, with the expected
// change types.
func TestWriterPrimaryKey(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	cols := "id INT NOT NULL, name STRING, score BIGINT, price DECIMAL(12, 3), day DATE, at TIMESTAMP(6)"
	src := db + ".rows"
	pk := db + ".pk"
	flusstest.RunJava(t, "create-table", src, "--columns", cols)
	flusstest.RunJava(t, "create-table", pk, "--columns", cols, "--primary-key", "id", "--buckets", "3")
	flusstest.RunJava(t, "append", src, "--rows", "60", "--seed", "1")
	flusstest.RunJava(t, "append", src, "--rows", "1", "--seed", "1", "--start", "5000")

	ctx := cmpCtx(t, 3*time.Minute)
	pkPath, _ := fluss.ParseTablePath(pk)
	pkInfo := waitTable(t, c, pkPath)
	w, err := c.NewWriter(pkInfo)
	if err != nil {
		t.Fatal(err)
	}
	// Collect the source rows as one record (offsets 0..59) and the
	// missing key (offset 60).
	var recs []arrow.RecordBatch
	readAll(t, c, src, func(b *fluss.ScanBatch) {
		b.Record.Retain()
		recs = append(recs, b.Record)
	})
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	all := concat(t, recs)
	defer all.Release()
	if all.NumRows() != 61 {
		t.Fatalf("source has %d rows, want 61", all.NumRows())
	}
	srcRows := javaScan(t, src)

	first := all.NewSlice(0, 60)
	defer first.Release()
	if err := w.Upsert(ctx, fluss.NoPartition, first); err != nil {
		t.Fatal(err)
	}
	// Java updates keys 30..59.
	flusstest.RunJava(t, "upsert", pk, "--rows", "30", "--seed", "2", "--start", "30")
	// We delete keys 10..19 and the missing key 5000.
	del := all.NewSlice(10, 20)
	defer del.Release()
	if err := w.Delete(ctx, fluss.NoPartition, del); err != nil {
		t.Fatal(err)
	}
	missing := all.NewSlice(60, 61)
	defer missing.Release()
	if err := w.Delete(ctx, fluss.NoPartition, missing); err != nil {
		t.Fatal(err)
	}
	// A log-table call on a primary-key table is refused.
	if _, err := w.Append(ctx, fluss.NoPartition, 0, first); err == nil {
		t.Error("Append to a primary-key table succeeded")
	}

	want := javaScan(t, pk)
	sameLines(t, pk, want, goScan(t, c, pk))
	counts := map[string]int{}
	srcSet := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(srcRows), "\n") {
		srcSet[rowOf(t, l)] = true
	}
	for _, l := range strings.Split(strings.TrimSpace(want), "\n") {
		var line struct {
			ChangeType string `json:"change_type"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		counts[line.ChangeType]++
		if line.ChangeType == "+I" && !srcSet[rowOf(t, l)] {
			t.Errorf("inserted row %s is not a source row", l)
		}
	}
	if counts["+I"] != 60 || counts["-U"] != 30 || counts["+U"] != 30 || counts["-D"] != 10 {
		t.Errorf("change types %v, want +I 60, -U 30, +U 30, -D 10 (a key routed to another bucket than Java's shows as an extra +I)", counts)
	}
}

// rowOf returns the "row" member of a scan line as text.
func rowOf(t *testing.T, line string) string {
	t.Helper()
	var l struct {
		Row json.RawMessage `json:"row"`
	}
	if err := json.Unmarshal([]byte(line), &l); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return string(l.Row)
}

// concat joins records of one schema into one.
func concat(t *testing.T, recs []arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	tbl := array.NewTableFromRecords(recs[0].Schema(), recs)
	defer tbl.Release()
	cols := make([]arrow.Array, tbl.NumCols())
	for i := range cols {
		ch := tbl.Column(i).Data()
		arr, err := array.Concatenate(ch.Chunks(), memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		cols[i] = arr
	}
	rec := array.NewRecordBatch(tbl.Schema(), cols, tbl.NumRows())
	for _, c := range cols {
		c.Release()
	}
	return rec
}
