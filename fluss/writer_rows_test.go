package fluss_test

// Writer.Write tests: rows go to the buckets and partitions the Java client
// sends them to.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestWriterWriteBucketKeyLikeJava: the Java client appends 300 rows to a
// log table with a bucket key and 4 buckets; our writer writes the same rows
// to a twin table in one record, interleaved across buckets, and must put
// every row in the bucket (and at the offset) the Java client did.
func TestWriterWriteBucketKeyLikeJava(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	src, dst := db+".src", db+".dst"
	flusstest.RunJava(t, "create-table", src, "--columns", "id BIGINT, name STRING, day DATE", "--bucket-key", "id", "--buckets", "4")
	flusstest.RunJava(t, "append", src, "--rows", "300", "--seed", "8", "--flush-every", "50")

	ctx := cmpCtx(t, 3*time.Minute)
	mem := checkedAlloc(t)
	byBucket := map[int32][]arrow.RecordBatch{}
	srcInfo := readAll(t, c, src, func(b *fluss.ScanBatch) {
		b.Record.Retain()
		byBucket[b.Bucket.Bucket] = append(byBucket[b.Bucket.Bucket], b.Record)
	})
	var buckets []arrow.RecordBatch // a record per bucket, rows in offset order
	for _, recs := range byBucket {
		buckets = append(buckets, concat(t, recs))
		for _, r := range recs {
			r.Release()
		}
	}
	all := interleave(t, mem, buckets)
	defer all.Release()
	for _, r := range buckets {
		r.Release()
	}
	if all.NumRows() != 300 {
		t.Fatalf("read %d rows of %s, want 300", all.NumRows(), src)
	}
	dstPath, _ := fluss.ParseTablePath(dst)
	if err := c.CreateTable(ctx, dstPath, srcInfo.Descriptor, false); err != nil {
		t.Fatal(err)
	}
	w, err := c.NewWriter(waitTable(t, c, dstPath), fluss.WriteAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(ctx, all, nil); err != nil {
		t.Fatal(err)
	}
	sameLines(t, dst+" (java scan)", javaScan(t, src), javaScan(t, dst))
}

// interleave concatenates the rows of recs taking one row of each in turn,
// so that consecutive rows come from different records (buckets); the rows
// of each record keep their order.
func interleave(t *testing.T, mem memory.Allocator, recs []arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	var parts [][]arrow.Array // per column
	for round := int64(0); ; round++ {
		took := false
		for _, r := range recs {
			if round >= r.NumRows() {
				continue
			}
			took = true
			for j := 0; j < int(r.NumCols()); j++ {
				if len(parts) <= j {
					parts = append(parts, nil)
				}
				parts[j] = append(parts[j], array.NewSlice(r.Column(j), round, round+1))
			}
		}
		if !took {
			break
		}
	}
	cols := make([]arrow.Array, len(parts))
	for j, p := range parts {
		var err error
		if cols[j], err = array.Concatenate(p, mem); err != nil {
			t.Fatal(err)
		}
		for _, a := range p {
			a.Release()
		}
	}
	out := array.NewRecordBatch(recs[0].Schema(), cols, int64(cols[0].Len()))
	for _, c := range cols {
		c.Release()
	}
	return out
}

// TestWriterWriteStickyBucket: without a bucket key each write goes to one
// bucket, the next one in turn.
func TestWriterWriteStickyBucket(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	table := db + ".sticky"
	flusstest.RunJava(t, "create-table", table, "--columns", "id BIGINT, name STRING", "--buckets", "4")
	ctx := cmpCtx(t, 3*time.Minute)
	path, _ := fluss.ParseTablePath(table)
	info := waitTable(t, c, path)
	mem := checkedAlloc(t)
	w, err := c.NewWriter(info, fluss.WriteAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	latest := func() []int64 {
		offs, err := c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.LatestOffset())
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, 4)
		for b, o := range offs {
			out[b] = o
		}
		return out
	}
	prev, grown := latest(), []int{}
	for i := 0; i < 6; i++ {
		rec := buildRows(t, mem, w.Schema(), i*10, 10, func(b *array.RecordBuilder, id int) {
			b.Field(0).(*array.Int64Builder).Append(int64(id))
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprint("n", id))
		})
		if err := w.Write(ctx, rec, nil); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		now := latest()
		for b := range now {
			if d := now[b] - prev[b]; d != 0 {
				if d != 10 {
					t.Fatalf("write %d: bucket %d grew by %d rows, want all 10 in one bucket", i, b, d)
				}
				grown = append(grown, b)
			}
		}
		prev = now
	}
	if len(grown) != 6 {
		t.Fatalf("buckets written: %v, want one per write", grown)
	}
	for i := 1; i < len(grown); i++ {
		if grown[i] != (grown[i-1]+1)%4 {
			t.Errorf("buckets written in turn %v, want each the next of the one before", grown)
		}
	}
}

// buildRows builds n rows of schema, row k from set(builder, from+k).
func buildRows(t *testing.T, mem memory.Allocator, schema *arrow.Schema, from, n int, set func(*array.RecordBuilder, int)) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for k := 0; k < n; k++ {
		set(b, from+k)
	}
	return b.NewRecordBatch()
}

// TestWriterWritePartitionedPrimaryKey: upserts, updates and deletes of a
// partitioned primary-key table, rows of three partitions mixed in each
// record, written by our writer (which creates the partitions) and, as
// JSON rows, by the Java client into a twin table: the Java tool's state of
// the two tables (partition, bucket and row of every key) must be equal.
func TestWriterWritePartitionedPrimaryKey(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	ours, ref := db+".ours", db+".ref"
	cols := "id INT NOT NULL, region STRING NOT NULL, v STRING"
	flusstest.RunJava(t, "create-table", ours, "--columns", cols, "--primary-key", "id,region", "--partition-key", "region", "--buckets", "3")
	flusstest.RunJava(t, "create-table", ref, "--columns", cols, "--primary-key", "id,region", "--partition-key", "region", "--buckets", "3", "--partitions", "us,eu,ap")

	regions := []string{"us", "eu", "ap"}
	type op struct {
		id  int
		v   string
		del bool
	}
	var ops []op
	for id := 0; id < 60; id++ {
		ops = append(ops, op{id: id, v: fmt.Sprint("v", id)})
	}
	for id := 0; id < 60; id++ {
		switch {
		case id%5 == 0:
			ops = append(ops, op{id: id, del: true})
		case id%4 == 0:
			ops = append(ops, op{id: id, v: fmt.Sprint("u", id)})
		}
	}

	ctx := cmpCtx(t, 3*time.Minute)
	path, _ := fluss.ParseTablePath(ours)
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mem := checkedAlloc(t)
	w, err := c.NewWriter(info, fluss.WriteAllocator(mem), fluss.WriteCreatePartitions(true))
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]op{ops[:60], ops[60:]} {
		deletes := make([]bool, len(batch))
		rec := buildRows(t, mem, w.Schema(), 0, len(batch), func(b *array.RecordBuilder, k int) {
			o := batch[k]
			deletes[k] = o.del
			b.Field(0).(*array.Int32Builder).Append(int32(o.id))
			b.Field(1).(*array.StringBuilder).Append(regions[o.id%3])
			if o.del {
				b.Field(2).AppendNull()
			} else {
				b.Field(2).(*array.StringBuilder).Append(o.v)
			}
		})
		err := w.Write(ctx, rec, deletes)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}

	// The same operations through the Java client, in the same order.
	dir := t.TempDir()
	var ups, dels []string
	for _, o := range ops[:60] {
		ups = append(ups, fmt.Sprintf(`{"id":%d,"region":%q,"v":%q}`, o.id, regions[o.id%3], o.v))
	}
	for _, o := range ops[60:] {
		if o.del {
			dels = append(dels, fmt.Sprintf(`{"id":%d,"region":%q}`, o.id, regions[o.id%3]))
		}
	}
	var updates []string
	for _, o := range ops[60:] {
		if !o.del {
			updates = append(updates, fmt.Sprintf(`{"id":%d,"region":%q,"v":%q}`, o.id, regions[o.id%3], o.v))
		}
	}
	for name, lines := range map[string][]string{"ups": ups, "updates": updates, "dels": dels} {
		if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	flusstest.RunJava(t, "upsert", ref, "--file", filepath.Join(dir, "ups.jsonl"))
	flusstest.RunJava(t, "upsert", ref, "--file", filepath.Join(dir, "updates.jsonl"))
	flusstest.RunJava(t, "delete", ref, "--file", filepath.Join(dir, "dels.jsonl"))

	want, got := sortedLines(flusstest.RunJava(t, "state", ref)), sortedLines(flusstest.RunJava(t, "state", ours))
	if len(want) != 60-12 {
		t.Fatalf("the Java client's table holds %d keys, want 48", len(want))
	}
	if !slices.Equal(want, got) {
		sameLines(t, ours+" (state)", strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	sort.Strings(lines)
	return lines
}

// TestWriterPartitionNamesLikeJava: rows partitioned by FLOAT, DOUBLE and
// timestamp columns, appended by the Java client (which creates the
// partitions it needs) and by our writer (WriteCreatePartitions) to twin
// tables: both must end with the same partitions, and the Java tool's scans
// of the two tables must be equal.
func TestWriterPartitionNamesLikeJava(t *testing.T) {
	t.Parallel()
	c := cmpClient(t)
	db := cmpDatabase(t, c)
	for _, tc := range []struct {
		typ    string
		values []string
	}{
		{"FLOAT", []string{"1.5", "-0.25", "1.0E7", "1.0E-4", "3.14159", "0.1"}},
		{"DOUBLE", []string{"1.5", "0.30000000000000004", "1.0E21", "9.9E-4", "123456.789", "-100"}},
		{"TIMESTAMP(3)", []string{`"2026-12-05T10:00:00.123"`, `"2026-12-05T10:00:00"`, `"1969-12-31T23:59:59.999"`}},
		{"TIMESTAMP(6)", []string{`"2026-12-05T10:00:00.120001"`, `"2026-01-01T00:00:00.5"`}},
		{"TIMESTAMP_LTZ(3)", []string{`"2026-12-05T10:00:00.123Z"`, `"2026-12-05T12:00:00+02:00"`}},
	} {
		name := strings.ToLower(strings.NewReplacer("(", "", ")", "").Replace(tc.typ))
		t.Run(name, func(t *testing.T) {
			ours, ref := db+".ours_"+name, db+".ref_"+name
			cols := "id INT, p " + tc.typ
			for _, table := range []string{ours, ref} {
				flusstest.RunJava(t, "create-table", table, "--columns", cols, "--partition-key", "p", "--buckets", "1")
			}
			var lines []string
			for i := 0; i < 3*len(tc.values); i++ {
				lines = append(lines, fmt.Sprintf(`{"id":%d,"p":%s}`, i, tc.values[i%len(tc.values)]))
			}
			file := filepath.Join(t.TempDir(), "rows.jsonl")
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			flusstest.RunJava(t, "append", ref, "--file", file)

			ctx := cmpCtx(t, 3*time.Minute)
			path, _ := fluss.ParseTablePath(ours)
			info, err := c.RefreshTable(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := jsonrow.NewSchemaRowBuilder(info.Schema)
			if err != nil {
				t.Fatal(err)
			}
			defer rb.Release()
			for _, l := range lines {
				if err := rb.AppendJSON([]byte(l)); err != nil {
					t.Fatalf("%s: %v", l, err)
				}
			}
			rec := rb.NewRecord()
			defer rec.Release()
			w, err := c.NewWriter(info, fluss.WriteCreatePartitions(true))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(ctx, rec, nil); err != nil {
				t.Fatal(err)
			}
			want, got := partitionNames(t, c, ref), partitionNames(t, c, ours)
			if len(want) != len(tc.values) || !slices.Equal(want, got) {
				t.Fatalf("partitions: Java %q, ours %q", want, got)
			}
			t.Logf("%s partitions: %q", tc.typ, got)
			sameLines(t, ours+" (java scan)", strings.ReplaceAll(javaScan(t, ref), "ref_", "ours_"), javaScan(t, ours))
		})
	}
}

// partitionNames lists the partitions of table, sorted.
func partitionNames(t *testing.T, c *fluss.Client, table string) []string {
	t.Helper()
	ctx := cmpCtx(t, time.Minute)
	path, _ := fluss.ParseTablePath(table)
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := c.Partitions(ctx, info)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range parts {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}
