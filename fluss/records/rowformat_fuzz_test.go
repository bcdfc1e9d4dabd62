package records

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// rowSeeds returns the row-format seeds of testdata/ (batches the Java
// client wrote), each also cut to its first batch, a smaller seed.
func rowSeeds(t testing.TB) [][]byte {
	var out [][]byte
	for name, b := range seedFiles(t) {
		if seedFormat(name) == LogFormatArrow {
			continue
		}
		out = append(out, b)
		if it := NewBatchIterator(b); it.Next() {
			out = append(out, it.Batch().Bytes)
		}
	}
	if len(out) == 0 {
		t.Fatal("no row-format seeds in testdata/")
	}
	return out
}

// FuzzDecodeRowBatch feeds arbitrary records bytes to COMPACTED and INDEXED
// decoders of the all-types schema, with and without CRC checks and
// projection, and under a small size limit: they may fail, never panic,
// never leak and never build more than the limit allows.
func FuzzDecodeRowBatch(f *testing.F) {
	for _, b := range rowSeeds(f) {
		f.Add(b)
	}
	rows := map[string][]byte{}
	for name, b := range seedFiles(f) {
		if seedFormat(name) != LogFormatArrow {
			rows[name] = b
		}
	}
	for _, b := range magicSeeds(f, rows) {
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	all := allTypesSchema(f)
	typ := allTypesTypes(f)
	small, smallTypes := smallRowSchema(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var decoders []*Decoder
		for _, format := range []LogFormat{LogFormatCompacted, LogFormatIndexed} {
			fo := WithLogFormat(format, typ)
			for _, opts := range [][]Option{
				{WithAllocator(mem), fo, WithMaxBatchBytes(1 << 20)},
				{WithAllocator(mem), fo, WithMaxBatchBytes(1 << 20), WithCRCCheck(false)},
				{WithAllocator(mem), fo, WithMaxBatchBytes(1 << 16), WithCRCCheck(false), WithProjection([]int{56, 13, 0, 54})},
			} {
				d, err := NewDecoder(fixedLookup(all), opts...)
				if err != nil {
					t.Fatal(err)
				}
				decoders = append(decoders, d)
			}
			d, err := NewDecoder(small, WithAllocator(mem), WithLogFormat(format, smallTypes),
				WithMaxBatchBytes(1<<16), WithCRCCheck(false))
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

// smallRowSchema is a schema whose records mutated all-types bytes often
// parse: few columns, nested ones, NOT NULL map values.
func smallRowSchema(t testing.TB) (SchemaLookup, TypeLookup) {
	cols, err := types.ParseColumns("id BIGINT NOT NULL, s CHAR(3), a ARRAY<ROW<x INT, y STRING>>, " +
		"m MAP<STRING, DECIMAL(38, 2) NOT NULL>, t TIMESTAMP(9)")
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
	return fixedLookup(as), func(int16) (*types.Schema, error) { return s, nil }
}
