package records

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the generated fuzz seeds in testdata/")

// fuzzSchema is the schema every fuzz decoder uses: the schema of the
// generated seeds (testSchema). Seeds captured from a real cluster must be
// written with a table of this schema (see testdata/README.md).
func fuzzSchema() *arrow.Schema { return testSchema() }

// allTypesColumns is the column list of the Java tool's `create-table
// --all-types` (scripts/FlussTool.java), the schema of testdata/cluster-*.bin.
const allTypesColumns = "id BIGINT NOT NULL, c_boolean BOOLEAN, c_tinyint TINYINT, c_smallint SMALLINT, " +
	"c_int INT, c_bigint BIGINT, c_float FLOAT, c_double DOUBLE, c_decimal_5_2 DECIMAL(5, 2), " +
	"c_decimal_18_6 DECIMAL(18, 6), c_decimal_38_0 DECIMAL(38, 0), c_decimal_38_18 DECIMAL(38, 18), " +
	"c_char CHAR(8), c_string STRING, c_binary BINARY(4), c_bytes BYTES, c_date DATE, " +
	"c_time_0 TIME(0), c_time_3 TIME(3), c_time_6 TIME(6), c_time_9 TIME(9), " +
	"c_ts_0 TIMESTAMP(0), c_ts_1 TIMESTAMP(1), c_ts_2 TIMESTAMP(2), c_ts_3 TIMESTAMP(3), c_ts_4 TIMESTAMP(4), " +
	"c_ts_5 TIMESTAMP(5), c_ts_6 TIMESTAMP(6), c_ts_7 TIMESTAMP(7), c_ts_8 TIMESTAMP(8), c_ts_9 TIMESTAMP(9), " +
	"c_ltz_0 TIMESTAMP_LTZ(0), c_ltz_1 TIMESTAMP_LTZ(1), c_ltz_2 TIMESTAMP_LTZ(2), c_ltz_3 TIMESTAMP_LTZ(3), " +
	"c_ltz_4 TIMESTAMP_LTZ(4), c_ltz_5 TIMESTAMP_LTZ(5), c_ltz_6 TIMESTAMP_LTZ(6), c_ltz_7 TIMESTAMP_LTZ(7), " +
	"c_ltz_8 TIMESTAMP_LTZ(8), c_ltz_9 TIMESTAMP_LTZ(9), c_int_not_null INT NOT NULL, " +
	"c_string_not_null STRING NOT NULL, c_array_int ARRAY<INT>, c_array_string_not_null ARRAY<STRING NOT NULL>, " +
	"c_array_double ARRAY<DOUBLE>, c_array_decimal ARRAY<DECIMAL(38, 10)>, c_array_ts ARRAY<TIMESTAMP(9)>, " +
	"c_array_array ARRAY<ARRAY<BIGINT>>, c_map_string_int MAP<STRING, INT>, c_map_int_string MAP<INT, STRING>, " +
	"c_map_bytes_ltz MAP<BYTES, TIMESTAMP_LTZ(3)>, c_map_string_array MAP<STRING, ARRAY<FLOAT>>, " +
	"c_row ROW<a INT, b STRING, c DOUBLE>, " +
	"c_row_nested ROW<inner ROW<d DECIMAL(20, 4), t TIMESTAMP(6)>, tags ARRAY<STRING>, attrs MAP<STRING, BOOLEAN>>, " +
	"c_array_row ARRAY<ROW<k STRING, v DATE>>, c_map_string_row MAP<STRING, ROW<x BINARY(2), y TIME(3)>>"

// allTypesSchema is the Arrow schema fluss/types derives for allTypesColumns.
func allTypesSchema(t testing.TB) *arrow.Schema { return columnsSchema(t, allTypesColumns) }

// columnsSchema is the Arrow schema fluss/types derives for a column list.
func columnsSchema(t testing.TB, columns string) *arrow.Schema {
	t.Helper()
	cols, err := types.ParseColumns(columns)
	if err != nil {
		t.Fatal(err)
	}
	s, err := types.NewSchema(cols)
	if err != nil {
		t.Fatal(err)
	}
	as, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// seedFiles returns the records bytes kept in testdata/*.bin.
func seedFiles(t testing.TB) map[string][]byte {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// generatedSeeds builds the seeds this package writes with its own encoder.
func generatedSeeds(t testing.TB) map[string][]byte {
	s := fuzzSchema()
	mem := memory.DefaultAllocator
	rec := buildRecord(t, mem, s, 4, 0, 11)
	defer rec.Release()
	empty := buildRecord(t, mem, s, 0, 0, 12)
	defer empty.Release()
	cts := []ChangeType{Insert, UpdateBefore, UpdateAfter, Delete}
	out := map[string][]byte{
		"gen-none.bin":      mustEncode(t, rec, CompressionNone, 0, nil, mem),
		"gen-lz4.bin":       mustEncode(t, rec, CompressionLZ4Frame, 0, nil, mem),
		"gen-zstd.bin":      mustEncode(t, rec, CompressionZSTD, 0, nil, mem),
		"gen-changelog.bin": mustEncode(t, rec, CompressionZSTD, 0, cts, mem),
	}
	multi := mustEncode(t, rec, CompressionLZ4Frame, 0, cts, mem)
	multi = append(multi, mustEncode(t, empty, CompressionLZ4Frame, 4, []ChangeType{}, mem)...)
	multi = append(multi, mustEncode(t, rec, CompressionNone, 5, nil, mem)...)
	out["gen-multi.bin"] = multi
	out["gen-truncated.bin"] = multi[:len(multi)-17]
	// Fluss 1.0 magics: V1 with statistics (none for the empty batch), V2.
	d, err := NewDecoder(fixedLookup(s))
	if err != nil {
		t.Fatal(err)
	}
	stats := statsOf(t, d, []int{0, 1, 4, 6, 7})
	out["gen-v1-multi.bin"] = withMagic(t, multi, 1, stats, 0)
	out["gen-v2-changelog.bin"] = withMagic(t, out["gen-changelog.bin"], 2, stats, 3)
	return out
}

// TestWriteSeeds rewrites testdata/gen-*.bin with -update-seeds; otherwise it
// checks that the committed seeds still decode.
func TestWriteSeeds(t *testing.T) {
	if *updateSeeds {
		for name, b := range generatedSeeds(t) {
			if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	seeds := seedFiles(t)
	if len(seeds) == 0 {
		t.Fatal("no seeds in testdata/")
	}
	for name, b := range seeds {
		d := seedDecoder(t, name, mem)
		res, err := d.Decode(b, 0)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(res.Batches) == 0 {
			t.Errorf("%s: no batches", name)
		}
		for _, batch := range res.Batches {
			touch(batch.Record)
		}
		res.Release()
	}
}

// seedDecoder returns a decoder of the seed file name (testdata/README.md):
// the generated ones have testSchema, the cluster ones the all-types
// schema, in the log format and projection their name says.
func seedDecoder(t testing.TB, name string, mem memory.Allocator) *Decoder {
	opts := []Option{WithAllocator(mem)}
	lookup := fixedLookup(allTypesSchema(t))
	switch {
	case seedFormat(name) != LogFormatArrow:
		opts = append(opts, WithLogFormat(seedFormat(name), allTypesTypes(t)))
	case strings.HasSuffix(name, "-projected.bin"):
		// Server-projected: columns 0, 13, 54, 56 (see the integration test).
		opts = append(opts, WithProjection([]int{56, 13, 0, 54}), WithProjectionPushedDown(true))
	case !strings.HasPrefix(name, "cluster-"):
		lookup = fixedLookup(fuzzSchema())
	}
	d, err := NewDecoder(lookup, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// magicSeeds returns the V1 and V2 forms of the magic-0 seed files, with
// statistics of some columns (none for server-projected ones, as the
// server sends them).
func magicSeeds(t testing.TB, seeds map[string][]byte) [][]byte {
	var out [][]byte
	for name, b := range seeds {
		if it := NewBatchIterator(b); !it.Next() || it.Batch().Magic != 0 {
			continue
		}
		var stats statsFunc
		switch {
		case strings.HasSuffix(name, "-projected.bin"):
		case strings.HasPrefix(name, "cluster-"):
			stats = statsOf(t, seedDecoder(t, name, memory.DefaultAllocator), allTypesStatsColumns)
		default:
			stats = statsOf(t, seedDecoder(t, name, memory.DefaultAllocator), []int{0, 1, 4, 6, 7})
		}
		out = append(out, withMagic(t, b, 1, stats, 0), withMagic(t, b, 2, stats, 5))
	}
	return out
}

// touch reads every value, as a consumer would.
func touch(rec arrow.RecordBatch) int {
	n := 0
	for _, col := range rec.Columns() {
		for i := 0; i < col.Len(); i++ {
			if !col.IsNull(i) {
				n += len(col.ValueStr(i))
			}
		}
	}
	return n
}

// FuzzDecodeBatch feeds arbitrary records bytes to decoders with and without
// CRC checks and projection: they may fail, never panic, and never leak.
func FuzzDecodeBatch(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b)
	}
	for _, b := range generatedSeeds(f) {
		f.Add(b)
	}
	for _, b := range magicSeeds(f, seedFiles(f)) {
		f.Add(b)
	}
	rust, err := filepath.Glob(filepath.Join("testdata", "rust", "*.bin"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range rust {
		f.Add(readSeed(f, filepath.Join("rust", filepath.Base(p))))
	}
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	s := fuzzSchema()
	all := allTypesSchema(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		limit := WithMaxBatchBytes(1 << 20)
		decoders := []*Decoder{}
		for _, opts := range [][]Option{
			{WithAllocator(mem), limit},
			{WithAllocator(mem), limit, WithCRCCheck(false)},
			{WithAllocator(mem), limit, WithCRCCheck(false), WithAlignedBuffers(true)},
			{WithAllocator(mem), limit, WithProjection([]int{17, 7, 0}), WithProjectionPushedDown(true)},
			{WithAllocator(mem), limit, WithProjection([]int{18, 9}), WithCRCCheck(false)},
			{WithAllocator(dirtyAllocator{mem}), limit, WithCRCCheck(false), WithOwnedBuffers(true)},
		} {
			d, err := NewDecoder(fixedLookup(s), opts...)
			if err != nil {
				t.Fatal(err)
			}
			decoders = append(decoders, d)
		}
		for _, opts := range [][]Option{
			{WithAllocator(mem), limit},
			{WithAllocator(mem), limit, WithCRCCheck(false)},
			{WithAllocator(mem), limit, WithProjection([]int{56, 13, 0, 54}), WithProjectionPushedDown(true)},
			{WithAllocator(dirtyAllocator{mem}), limit, WithCRCCheck(false), WithOwnedBuffers(true)},
		} {
			d, err := NewDecoder(fixedLookup(all), opts...)
			if err != nil {
				t.Fatal(err)
			}
			decoders = append(decoders, d)
		}
		for _, d := range decoders {
			res, _ := d.Decode(data, 0)
			for _, b := range res.Batches {
				touch(b.Record)
				for i := 0; i < b.NumRows(); i++ {
					_ = b.ChangeType(i).String()
				}
			}
			res.Release()
		}
		mem.AssertSize(t, 0)
	})
}
