package flussout_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
)

// envRows sets how many rows each case writes.
const envRows = "FLUSS_BENCH_OUT_ROWS"

// defaultRows is the row count the issue asks for.
const defaultRows = 1_000_000

// rowCount is $FLUSS_BENCH_OUT_ROWS, or defaultRows.
func rowCount() int {
	if n, err := strconv.Atoi(os.Getenv(envRows)); err == nil && n > 0 {
		return n
	}
	return defaultRows
}

// writeRows writes rows [0, n) of the bench table (bench/benchtable, the
// same values every benchmark reads) to path as JSON lines in the canonical
// mapping (the fluss input's json payload, which the Java tool reads),
// and returns the file's size in bytes.
func writeRows(path string, n int) (int64, error) {
	s := benchtable.Schema()
	schema, err := s.ArrowSchema()
	if err != nil {
		return 0, err
	}
	enc, err := jsonrow.NewSchemaEncoder(s)
	if err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	buf := make([]byte, 0, 1<<20)
	var size int64
	for first := 0; first < n; first += benchtable.BatchRows {
		rec := benchtable.Batch(schema, int64(first), min(benchtable.BatchRows, n-first))
		err := enc.Bind(rec)
		if err == nil {
			buf = buf[:0]
			for i := 0; i < int(rec.NumRows()); i++ {
				buf = append(enc.AppendRow(buf, i), '\n')
			}
			_, err = w.Write(buf)
			size += int64(len(buf))
		}
		rec.Release()
		if err != nil {
			f.Close()
			return 0, fmt.Errorf("writing rows from %d to %s: %w", first, path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, fmt.Errorf("writing %s: %w", path, err)
	}
	return size, f.Close()
}

// TestRowsFile checks that the file both writers read holds the bench
// table's rows: read back with the output's own decoder (jsonrow), its lines
// give the record benchtable.Batch builds, value for value, and there is one
// line per row.
func TestRowsFile(t *testing.T) {
	const n = benchtable.BatchRows + 100 // two batches, the second partial
	path := t.TempDir() + "/rows.jsonl"
	if _, err := writeRows(path, n); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	rb, err := jsonrow.NewSchemaRowBuilder(benchtable.Schema())
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Release()
	for first := 0; first < n; first += benchtable.BatchRows {
		m := min(benchtable.BatchRows, n-first)
		for i, l := range lines[first : first+m] {
			if err := rb.AppendJSON(l); err != nil {
				t.Fatalf("line %d: %v", first+i+1, err)
			}
		}
		got := rb.NewRecord()
		want := benchtable.Batch(rb.Schema(), int64(first), m)
		if !array.RecordEqual(got, want) {
			t.Errorf("rows %d..%d read back differ from benchtable.Batch", first, first+m)
		}
		got.Release()
		want.Release()
	}
}
