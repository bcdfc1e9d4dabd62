package records

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// seedValues turns the rows of a row-format log batch into KV values of
// schema id 1, the bytes a KV store of the same rows holds.
func seedValues(t testing.TB, batch []byte) [][]byte {
	t.Helper()
	var out [][]byte
	it := NewBatchIterator(batch)
	for it.Next() {
		b := it.Batch().Bytes
		for pos := it.Batch().RecordsOffset(); pos+recordOverhead <= len(b); {
			n := int(int32(binary.LittleEndian.Uint32(b[pos:])))
			if n < 1 || pos+4+n > len(b) {
				t.Fatalf("seed record at byte %d: length %d", pos, n)
			}
			out = append(out, append([]byte{1, 0}, b[pos+recordOverhead:pos+4+n]...))
			pos += 4 + n
		}
	}
	return out
}

// tagged returns value in the TAGGED layout of Fluss 1.0
// (table.kv.value-layout-version 2; apache/fluss#3621): a big-endian int64
// tag, here a row TTL's reference timestamp, before the plain value.
func tagged(value []byte, tag int64) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(tag)), value...)
}

// TestValueDecoderMatchesLog decodes the all-types rows of the Java
// client's row-format logs as KV values, plain and tagged: the records
// equal the log decoder's, with and without a projection.
func TestValueDecoderMatchesLog(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	typ := allTypesTypes(t)
	for name, b := range seedFiles(t) {
		format := seedFormat(name)
		if format == LogFormatArrow {
			continue
		}
		for k, proj := range [][]int{nil, {56, 13, 0, 54}, nil} {
			layout := KVValueLayoutPlain
			if k == 2 {
				layout = KVValueLayoutTagged
			}
			opts := []Option{WithAllocator(mem), WithCRCCheck(false), WithLogFormat(format, typ)}
			vopts := []Option{WithAllocator(mem), WithKVValueLayout(layout)}
			if proj != nil {
				opts = append(opts, WithProjection(proj))
				vopts = append(vopts, WithProjection(proj))
			}
			ld, err := NewDecoder(fixedLookup(allTypesSchema(t)), opts...)
			if err != nil {
				t.Fatal(err)
			}
			res, err := ld.Decode(b, 0)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			vd, err := NewValueDecoder(typ, 1, format, vopts...)
			if err != nil {
				t.Fatal(err)
			}
			values := seedValues(t, b)
			if layout == KVValueLayoutTagged {
				for i := range values {
					values[i] = tagged(values[i], 1796018035906+int64(i))
				}
			}
			i := 0
			for _, batch := range res.Batches {
				for r := 0; r < batch.NumRows(); r++ {
					if err := vd.Append(values[i]); err != nil {
						t.Fatalf("%s: value %d: %v", name, i, err)
					}
					i++
				}
				got, err := vd.Flush()
				if err != nil {
					t.Fatal(err)
				}
				same := sameRecords(batch.Record, got)
				got.Release()
				if !same {
					t.Fatalf("%s (projection %v, %v): the values decode to other records than the log", name, proj, layout)
				}
			}
			if i != len(values) {
				t.Fatalf("%s: log has %d rows, %d values", name, i, len(values))
			}
			res.Release()
			vd.Release()
		}
	}
}

// TestValueDecoderSchemaEvolution reads values of an old schema (before
// ADD COLUMN) and of the current one into the current, projected schema.
func TestValueDecoderSchemaEvolution(t *testing.T) {
	v1 := types.MustSchema(mustColumns(t, "id INT NOT NULL, name STRING"), "id")
	v2 := types.MustSchema(mustColumns(t, "id INT NOT NULL, name STRING, score BIGINT"), "id")
	lookup := func(id int16) (*types.Schema, error) {
		switch id {
		case 1:
			return v1, nil
		case 2:
			return v2, nil
		}
		return nil, errors.New("no such schema")
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d, err := NewValueDecoder(lookup, 2, LogFormatCompacted, WithAllocator(mem), WithProjection([]int{2, 0}))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	// v1: id 7, name "a"; v2: id 300, name null, score -1.
	for _, v := range [][]byte{
		{1, 0, 0x00, 7, 1, 'a'},
		{2, 0, 0x02, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	} {
		if err := d.Append(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Append([]byte{9, 0, 0}); err == nil {
		t.Fatal("unknown schema id accepted")
	}
	if err := d.Append([]byte{1, 0, 0x00, 7, 5, 'a'}); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("truncated value: %v", err)
	}
	rec, err := d.Flush()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if rec.NumRows() != 2 || rec.Schema().Field(0).Name != "score" || rec.Schema().Field(1).Name != "id" {
		t.Fatalf("record %v", rec)
	}
	score, id := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int32)
	if !score.IsNull(0) || score.Value(1) != -1 || id.Value(0) != 7 || id.Value(1) != 300 {
		t.Fatalf("record %v", rec)
	}
	if _, err := NewValueDecoder(lookup, 2, LogFormatArrow); err == nil {
		t.Fatal("ARROW kv format accepted")
	}
	if _, err := NewValueDecoder(lookup, 2, LogFormatCompacted, WithProjection([]int{3})); err == nil {
		t.Fatal("projection out of range accepted")
	}
}

// TestValueDecoderTypeChange refuses a column whose type differs between
// the value's schema and the reader's.
func TestValueDecoderTypeChange(t *testing.T) {
	v1 := types.MustSchema(mustColumns(t, "id INT NOT NULL, name STRING"), "id")
	v2 := types.MustSchema(mustColumns(t, "id INT NOT NULL, name BIGINT"), "id")
	lookup := func(id int16) (*types.Schema, error) { return map[int16]*types.Schema{1: v1, 2: v2}[id], nil }
	d, err := NewValueDecoder(lookup, 2, LogFormatCompacted)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if err := d.Append([]byte{1, 0, 0x00, 7, 1, 'a'}); err == nil {
		t.Fatal("type change accepted")
	}
}

func mustColumns(t testing.TB, s string) []types.Column {
	t.Helper()
	cols, err := types.ParseColumns(s)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

// FuzzValueDecoder feeds arbitrary KV values to COMPACTED and INDEXED value
// decoders of the all-types schema (with and without a projection, under a
// small size limit): they may fail, never panic and never leak, and a
// refused value leaves the decoder usable.
func FuzzValueDecoder(f *testing.F) {
	for _, b := range rowSeeds(f) {
		for i, v := range seedValues(f, b) {
			if i < 3 {
				f.Add(v)
				f.Add(tagged(v, int64(i)))
			}
		}
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0})
	f.Add(tagged([]byte{1, 0}, 1))
	typ := allTypesTypes(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		for _, format := range []LogFormat{LogFormatCompacted, LogFormatIndexed} {
			for _, opts := range [][]Option{
				{WithAllocator(mem), WithMaxBatchBytes(1 << 20)},
				{WithAllocator(mem), WithMaxBatchBytes(1 << 12), WithProjection([]int{56, 13, 0, 54})},
				{WithAllocator(mem), WithMaxBatchBytes(1 << 20), WithKVValueLayout(KVValueLayoutTagged)},
			} {
				d, err := NewValueDecoder(typ, 1, format, opts...)
				if err != nil {
					t.Fatal(err)
				}
				n := int64(0)
				for range 2 {
					if d.Append(data) == nil {
						n++
					}
				}
				if rec, err := d.Flush(); err == nil {
					if rec.NumRows() != n {
						t.Fatalf("%d rows, %d values accepted", rec.NumRows(), n)
					}
					touch(rec)
					rec.Release()
				}
				d.Release()
			}
		}
		mem.AssertSize(t, 0)
	})
}

// TestKVValueLayout: the table.kv.value-layout-version values, and tagged
// values too short for their tag and schema id.
func TestKVValueLayout(t *testing.T) {
	for in, want := range map[string]KVValueLayout{"": KVValueLayoutPlain, "1": KVValueLayoutPlain, " plain ": KVValueLayoutPlain,
		"2": KVValueLayoutTagged, "TAGGED": KVValueLayoutTagged} {
		if got, err := ParseKVValueLayout(in); err != nil || got != want {
			t.Errorf("ParseKVValueLayout(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"3", "0", "v2", "-1"} {
		if _, err := ParseKVValueLayout(in); err == nil || !strings.Contains(err.Error(), "table.kv.value-layout-version") {
			t.Errorf("ParseKVValueLayout(%q): %v", in, err)
		}
	}
	typ := allTypesTypes(t)
	if _, err := NewValueDecoder(typ, 1, LogFormatCompacted, WithKVValueLayout(3)); err == nil {
		t.Error("layout 3 accepted")
	}
	d, err := NewValueDecoder(typ, 1, LogFormatCompacted, WithKVValueLayout(KVValueLayoutTagged))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	for _, v := range [][]byte{nil, {1, 0}, make([]byte, 9)} {
		if err := d.Append(v); !errors.Is(err, ErrInvalidBatch) || !strings.Contains(err.Error(), "TAGGED") {
			t.Errorf("%d-byte tagged value: %v", len(v), err)
		}
	}
}
