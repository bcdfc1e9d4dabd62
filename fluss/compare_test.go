package fluss_test

// Comparison tests: rows written by the Java fixture tool (the official Java
// client) are read by our scanner and rendered line for line like the Java
// tool's own scan, through the same code as `fluss-iggy fluss scan`.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/flusscmd"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

func cmpCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// cmpClient connects to the shared cluster.
func cmpClient(t *testing.T) *fluss.Client {
	t.Helper()
	addr := flusstest.Require(t)
	c, err := fluss.NewClient(cmpCtx(t, time.Minute), fluss.Bootstrap(addr), fluss.RequestTimeout(30*time.Second))
	if err != nil {
		t.Fatalf("connect to %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// cmpDatabase creates a database dropped with its tables when the test ends.
func cmpDatabase(t *testing.T, c *fluss.Client) string {
	t.Helper()
	db := flusstest.UniqueName("scan")
	if err := c.CreateDatabase(cmpCtx(t, time.Minute), db, nil, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.DropDatabase(ctx, db, true, true); err != nil {
			t.Logf("drop database %s: %v", db, err)
		}
	})
	return db
}

// checkedAlloc returns an allocator that fails the test if anything it
// handed out is not released by the end of the test.
func checkedAlloc(t *testing.T) *memory.CheckedAllocator {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	return mem
}

// goScan renders a table like the Java tool's scan, with our scanner.
func goScan(t *testing.T, c *fluss.Client, table string, columns ...string) string {
	t.Helper()
	path, err := fluss.ParseTablePath(table)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	opts := flusscmd.ScanOptions{Timeout: time.Minute, ScanOptions: []fluss.ScanOption{fluss.ScanAllocator(checkedAlloc(t))}}
	if len(columns) > 0 {
		opts.Columns = columns
	}
	if err := flusscmd.Scan(cmpCtx(t, 3*time.Minute), c, path, &buf, opts); err != nil {
		t.Fatalf("scan %s: %v", table, err)
	}
	return buf.String()
}

// javaScan is the Java tool's scan of a table.
func javaScan(t *testing.T, table string, columns ...string) string {
	t.Helper()
	args := []string{"scan", table}
	if len(columns) > 0 {
		args = append(args, "--columns", strings.Join(columns, ","))
	}
	return flusstest.RunJava(t, args...)
}

// sameLines fails the test with the first differing lines of two scans.
func sameLines(t *testing.T, what, want, got string) {
	t.Helper()
	if want == got {
		if want == "" {
			t.Errorf("%s: both scans are empty", what)
		}
		return
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	shown := 0
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("%s: line %d differs\njava: %s\ngo:   %s", what, i+1, w, g)
			if shown++; shown >= 3 {
				break
			}
		}
	}
	t.Errorf("%s: java printed %d lines, go %d", what, len(wl)-1, len(gl)-1)
}

func countLines(s string) int { return strings.Count(s, "\n") }

// TestCompareLogCompression: log tables with NONE, LZ4_FRAME and ZSTD
// buffers, several batches each.
func TestCompareLogCompression(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	for _, codec := range []string{"NONE", "LZ4_FRAME", "ZSTD"} {
		t.Run(codec, func(t *testing.T) {
			table := db + ".log_" + strings.ToLower(codec)
			flusstest.RunJava(t, "create-table", table, "--columns",
				"id BIGINT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), tags ARRAY<STRING>",
				"--compression", codec)
			flusstest.RunJava(t, "append", table, "--rows", "600", "--seed", "7", "--flush-every", "150")
			want := javaScan(t, table)
			if n := countLines(want); n != 600 {
				t.Fatalf("java scan printed %d lines, want 600", n)
			}
			sameLines(t, table, want, goScan(t, c, table))
		})
	}
}

// TestCompareAllTypes: every Fluss type incl. nested ones, three buckets;
// then projections, checked against the Java tool's projected scans.
func TestCompareAllTypes(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".all_types"
	flusstest.RunJava(t, "create-table", table, "--all-types", "--buckets", "3")
	flusstest.RunJava(t, "append", table, "--rows", "400", "--seed", "11", "--flush-every", "100")
	sameLines(t, table, javaScan(t, table), goScan(t, c, table))

	cols := []string{"c_map_string_row", "id", "c_ts_9", "c_row_nested", "c_decimal_38_18"}
	got := goScan(t, c, table, cols...)
	sameLines(t, table+" projected", javaScan(t, table, cols...), got)
	// Exactly the chosen columns, in the chosen order.
	first, _, _ := strings.Cut(got, "\n")
	idx := strings.Index(first, `"row":{`)
	if idx < 0 {
		t.Fatalf("no row in %q", first)
	}
	var prev int
	for i, col := range cols {
		at := strings.Index(first[idx:], `"`+col+`":`)
		if at < 0 || (i > 0 && at <= prev) {
			t.Fatalf("projected line %q: column %q missing or out of order", first, col)
		}
		prev = at
	}
	if strings.Contains(first[idx:], `"c_string"`) {
		t.Errorf("projected line %q holds an unselected column", first)
	}
}

// TestCompareProjectionUnknownColumn: an unknown column fails with an error
// that names it.
func TestCompareProjectionUnknownColumn(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	ctx := cmpCtx(t, time.Minute)
	path := fluss.NewTablePath(db, "proj")
	desc := &types.TableDescriptor{Schema: *types.MustSchema([]types.Column{
		types.NewColumn("id", types.BigInt()), types.NewColumn("name", types.String()),
	}), BucketCount: 1}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		t.Fatal(err)
	}
	info, err := c.Table(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.NewScanner(info, fluss.ScanColumns("name", "no_such_column"))
	if err == nil || !strings.Contains(err.Error(), "no_such_column") {
		t.Fatalf("NewScanner with an unknown column: err = %v, want one naming no_such_column", err)
	}
	var uc *types.UnknownColumnError
	if !errors.As(err, &uc) || uc.Column != "no_such_column" {
		t.Errorf("err = %v, want a *types.UnknownColumnError for no_such_column", err)
	}
}

// TestComparePrimaryKey: a primary-key table with 3 buckets: inserts,
// updates, deletes and a delete of a missing key (an empty batch).
func TestComparePrimaryKey(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".pk"
	flusstest.RunJava(t, "create-table", table, "--columns",
		"id INT NOT NULL, name STRING, score BIGINT, at TIMESTAMP_LTZ(6)", "--primary-key", "id", "--buckets", "3")
	flusstest.RunJava(t, "upsert", table, "--rows", "120", "--seed", "1", "--flush-every", "40")
	flusstest.RunJava(t, "upsert", table, "--rows", "50", "--seed", "2", "--start", "30")
	flusstest.RunJava(t, "delete", table, "--rows", "20", "--seed", "2", "--start", "60")
	flusstest.RunJava(t, "delete", table, "--rows", "1", "--start", "100000")
	want := javaScan(t, table)
	for _, ct := range []string{`"+I"`, `"-U"`, `"+U"`, `"-D"`} {
		if !strings.Contains(want, `"change_type":`+ct) {
			t.Errorf("java scan has no %s row", ct)
		}
	}
	sameLines(t, table, want, goScan(t, c, table))
	cols := []string{"score", "id"}
	sameLines(t, table+" projected", javaScan(t, table, cols...), goScan(t, c, table, cols...))
}

// TestCompareAddColumn: batches written before and after ADD COLUMN, read
// with the current schema (and projected onto the new column).
func TestCompareAddColumn(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".evolving"
	flusstest.RunJava(t, "create-table", table, "--columns", "id BIGINT, name STRING", "--buckets", "2")
	flusstest.RunJava(t, "append", table, "--rows", "80", "--seed", "3")
	flusstest.RunJava(t, "alter-table-add-column", table, "--columns", "extra INT, note STRING")
	flusstest.RunJava(t, "append", table, "--rows", "80", "--seed", "4", "--start", "80")
	want := javaScan(t, table)
	if !strings.Contains(want, `"extra":null`) {
		t.Errorf("java scan shows no null extra column for old rows")
	}
	sameLines(t, table, want, goScan(t, c, table))
	// The Java client cannot project old batches onto columns added later
	// (the server rejects the indices: INVALID_COLUMN_PROJECTION); we fall
	// back to projecting locally. Compare with the Java tool's full scan,
	// projected here.
	for _, cols := range [][]string{{"note", "id", "extra"}, {"extra", "note"}} {
		sameLines(t, fmt.Sprintf("%s projected to %v", table, cols), projectLines(t, want, cols), goScan(t, c, table, cols...))
	}
	cols := []string{"name"}
	sameLines(t, table+" projected to an old column", javaScan(t, table, cols...), goScan(t, c, table, cols...))
}

// projectLines projects scan lines onto columns, keeping every value's text.
func projectLines(t *testing.T, scan string, cols []string) string {
	t.Helper()
	var out strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(scan, "\n"), "\n") {
		var line struct {
			Partition  json.RawMessage            `json:"partition"`
			Bucket     json.RawMessage            `json:"bucket"`
			Offset     json.RawMessage            `json:"offset"`
			ChangeType json.RawMessage            `json:"change_type"`
			Row        map[string]json.RawMessage `json:"row"`
		}
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("scan line %q: %v", l, err)
		}
		fmt.Fprintf(&out, `{"partition":%s,"bucket":%s,"offset":%s,"change_type":%s,"row":{`, line.Partition, line.Bucket, line.Offset, line.ChangeType)
		for i, c := range cols {
			if i > 0 {
				out.WriteByte(',')
			}
			v, ok := line.Row[c]
			if !ok {
				t.Fatalf("scan line %q has no column %q", l, c)
			}
			fmt.Fprintf(&out, "%q:%s", c, v)
		}
		out.WriteString("}}\n")
	}
	return out.String()
}

// TestComparePartitionAddedWhileScanning: a partitioned log table; a
// partition is created and written while our scanner runs; the partition
// watcher finds it and the scanner reads it from its start.
func TestComparePartitionAddedWhileScanning(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".parts"
	path, _ := fluss.ParseTablePath(table)
	flusstest.RunJava(t, "create-table", table, "--columns", "id BIGINT, region STRING, v INT",
		"--partition-key", "region", "--partitions", "eu,us", "--buckets", "2")
	flusstest.RunJava(t, "append", table, "--rows", "100", "--seed", "5")

	ctx := cmpCtx(t, 3*time.Minute)
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewScanner(info, fluss.ScanAllocator(checkedAlloc(t)), fluss.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	w, err := c.NewPartitionWatcher(info)
	if err != nil {
		t.Fatal(err)
	}
	discover := func() int {
		added, removed, err := w.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(removed) > 0 {
			t.Errorf("partitions removed: %v", removed)
		}
		for _, p := range added {
			if err := s.SubscribeBuckets(ctx, p.ID, nil, fluss.EarliestOffset()); err != nil {
				t.Fatal(err)
			}
		}
		return len(added)
	}
	if n := discover(); n != 2 {
		t.Fatalf("discovered %d partitions, want 2", n)
	}
	enc, err := jsonrow.NewEncoder(s.Schema().RowType(), s.ArrowSchema())
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string][]string{} // "partition/bucket" -> lines in offset order
	var line []byte
	poll := func(pctx context.Context) {
		bs, err := s.Poll(pctx)
		defer func() {
			for _, b := range bs {
				b.Release()
			}
		}()
		if err != nil && pctx.Err() == nil {
			t.Fatal(err)
		}
		for _, b := range bs {
			if err := enc.Bind(b.Record); err != nil {
				t.Fatal(err)
			}
			k := fmt.Sprintf("%s/%d", b.Partition, b.Bucket.Bucket)
			for i := 0; i < b.NumRows(); i++ {
				line = flusscmd.AppendLine(line[:0], b, i, enc)
				lines[k] = append(lines[k], string(line))
			}
		}
	}
	total := func() int {
		n := 0
		for _, l := range lines {
			n += len(l)
		}
		return n
	}
	for total() < 100 && ctx.Err() == nil {
		poll(ctx)
	}

	// A new partition, written while the scanner is subscribed.
	flusstest.RunJava(t, "add-partition", table, "ap")
	flusstest.RunJava(t, "append", table, "--rows", "90", "--seed", "6", "--start", "100")
	if n := discover(); n != 1 {
		t.Fatalf("discovered %d new partitions, want 1", n)
	}
	for total() < 190 && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		poll(pctx)
		cancel()
	}
	if total() != 190 {
		t.Fatalf("read %d rows, want 190", total())
	}
	// Render in the Java tool's order: partition name, bucket, offset.
	ranges, err := c.BucketRanges(ctx, info, "")
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for _, r := range ranges {
		for _, l := range lines[fmt.Sprintf("%s/%d", r.Partition, r.Bucket.Bucket)] {
			got.WriteString(l)
			got.WriteByte('\n')
		}
	}
	sameLines(t, table, javaScan(t, table), got.String())
	// And the whole table through the CLI code path.
	sameLines(t, table+" (cli)", javaScan(t, table), goScan(t, c, table))
}

// TestCompareOffsetOutOfRange: a fetch beyond the log end is reported as an
// *OffsetOutOfRangeError with the valid range; SeekBucket resumes.
func TestCompareOffsetOutOfRange(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".oor"
	flusstest.RunJava(t, "create-table", table, "--columns", "id BIGINT, name STRING")
	flusstest.RunJava(t, "append", table, "--rows", "10")
	ctx := cmpCtx(t, 2*time.Minute)
	path, _ := fluss.ParseTablePath(table)
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.NewScanner(info, fluss.ScanAllocator(checkedAlloc(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Subscribe(ctx, fluss.NoPartition, 0, fluss.ExactOffset(1000)); err != nil {
		t.Fatal(err)
	}
	var oor *fluss.OffsetOutOfRangeError
	for {
		bs, err := s.Poll(ctx)
		for _, b := range bs {
			b.Release()
		}
		if errors.As(err, &oor) {
			break
		}
		if err != nil {
			t.Fatalf("poll: %v, want an *OffsetOutOfRangeError", err)
		}
	}
	if oor.Offset != 1000 || oor.Earliest != 0 || oor.Latest != 10 || !errors.Is(oor, errcode.LogOffsetOutOfRange) {
		t.Errorf("out of range error = %+v (%v), want offset 1000 in [0, 10)", oor, oor)
	}
	if p, _ := s.Position(fluss.NoPartition, 0); !p.Paused {
		t.Errorf("bucket not paused after the error: %+v", p)
	}
	if err := s.SeekBucket(fluss.NoPartition, 0, 4); err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for len(offs) < 6 {
		bs, err := s.Poll(ctx)
		for _, b := range bs {
			for i := 0; i < b.NumRows(); i++ {
				offs = append(offs, b.Offset(i))
			}
			if b.HighWatermark != 10 {
				t.Errorf("batch high watermark %d, want 10", b.HighWatermark)
			}
			b.Release()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(offs) != "[4 5 6 7 8 9]" {
		t.Errorf("offsets after seek to 4: %v", offs)
	}
	if hw := s.HighWatermark(fluss.NoPartition, 0); hw != 10 {
		t.Errorf("HighWatermark = %d, want 10", hw)
	}
	// A Poll waiting for new rows returns when the scanner is closed.
	done := make(chan error, 1)
	go func() {
		bs, err := s.Poll(context.Background())
		for _, b := range bs {
			b.Release()
		}
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	s.Close()
	select {
	case err := <-done:
		if !errors.Is(err, fluss.ErrScannerClosed) {
			t.Errorf("Poll after Close: %v, want ErrScannerClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Poll did not return after Close")
	}
}
