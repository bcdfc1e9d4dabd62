package records

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestKVBatchBytes(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int32},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	b.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 300}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"a", ""}, []bool{true, false})
	b.Field(2).(*array.Int64Builder).AppendValues([]int64{0, -1}, []bool{false, true})
	rec := b.NewRecordBatch()
	defer rec.Release()

	enc, err := NewRowEncoder(s, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	kb := NewKVBatchBuilder(3, nil)
	if err := kb.AppendRow(enc, rec, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := kb.AppendRow(enc, rec, 1, false); err != nil {
		t.Fatal(err)
	}
	if err := kb.AppendRow(enc, rec, 1, true); err != nil {
		t.Fatal(err)
	}
	got := kb.Build()
	want := []byte{
		// record 1: key 1, value {bitmap 0b100, 1, "a"}
		6, 0, 0, 0, 1, 0x01, 0x04, 0x01, 0x01, 'a',
		// record 2: key 300, value {bitmap 0b010, 300, -1 as 10-byte LEB128}
		16, 0, 0, 0, 2, 0xac, 0x02, 0x02, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		// record 3: delete of key 300
		3, 0, 0, 0, 2, 0xac, 0x02,
	}
	if !bytes.Equal(got[KVHeaderSize:], want) {
		t.Fatalf("records\n got %x\nwant %x", got[KVHeaderSize:], want)
	}
	le := binary.LittleEndian
	if int(le.Uint32(got)) != len(got)-4 || got[kvOffMagic] != 0 || le.Uint16(got[kvOffSchemaID:]) != 3 ||
		got[kvOffAttributes] != 0 || int64(le.Uint64(got[kvOffWriterID:])) != -1 ||
		int32(le.Uint32(got[kvOffBatchSequence:])) != -1 || le.Uint32(got[kvOffRecordCount:]) != 3 {
		t.Fatalf("header % x", got[:KVHeaderSize])
	}
	if le.Uint32(got[kvOffCRC:]) != crc32c(got[kvOffSchemaID:]) {
		t.Fatal("bad CRC")
	}
}

func TestCompactedEncodings(t *testing.T) {
	cases := []struct {
		dt   arrow.DataType
		fill func(array.Builder)
		want []byte
	}{
		{arrow.FixedWidthTypes.Boolean, func(b array.Builder) { b.(*array.BooleanBuilder).Append(true) }, []byte{1}},
		{arrow.PrimitiveTypes.Int8, func(b array.Builder) { b.(*array.Int8Builder).Append(-2) }, []byte{0xfe}},
		{arrow.PrimitiveTypes.Int16, func(b array.Builder) { b.(*array.Int16Builder).Append(-2) }, []byte{0xfe, 0xff}},
		{arrow.PrimitiveTypes.Int32, func(b array.Builder) { b.(*array.Int32Builder).Append(-1) }, []byte{0xff, 0xff, 0xff, 0xff, 0x0f}},
		{arrow.FixedWidthTypes.Date32, func(b array.Builder) { b.(*array.Date32Builder).Append(19000) }, []byte{0xb8, 0x94, 0x01}},
		{arrow.FixedWidthTypes.Time32s, func(b array.Builder) { b.(*array.Time32Builder).Append(2) }, []byte{0xd0, 0x0f}},
		{arrow.FixedWidthTypes.Time64us, func(b array.Builder) { b.(*array.Time64Builder).Append(2000999) }, []byte{0xd0, 0x0f}},
		{arrow.PrimitiveTypes.Float64, func(b array.Builder) { b.(*array.Float64Builder).Append(1.5) }, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f}},
		{&arrow.FixedSizeBinaryType{ByteWidth: 2}, func(b array.Builder) { b.(*array.FixedSizeBinaryBuilder).Append([]byte{7, 8}) }, []byte{2, 7, 8}},
		{&arrow.Decimal128Type{Precision: 10, Scale: 2}, func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(-1)) },
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{&arrow.Decimal128Type{Precision: 20, Scale: 2}, func(b array.Builder) { b.(*array.Decimal128Builder).Append(decimal128.FromI64(-129)) }, []byte{2, 0xff, 0x7f}},
		{&arrow.TimestampType{Unit: arrow.Millisecond}, func(b array.Builder) { b.(*array.TimestampBuilder).Append(300) }, []byte{0xac, 0x02}},
		// -1 µs = millis -1 (10-byte LEB128) and 999000 nanos of milli.
		{&arrow.TimestampType{Unit: arrow.Microsecond}, func(b array.Builder) { b.(*array.TimestampBuilder).Append(-1) },
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0xd8, 0xfc, 0x3c}},
	}
	for _, c := range cases {
		s := arrow.NewSchema([]arrow.Field{{Name: "v", Type: c.dt}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, s)
		c.fill(b.Field(0))
		rec := b.NewRecordBatch()
		enc, err := NewRowEncoder(s, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		key, err := enc.AppendKey(nil, rec, 0)
		if err != nil || !bytes.Equal(key, c.want) {
			t.Errorf("%s: key % x (%v), want % x", c.dt, key, err, c.want)
		}
		val, _ := enc.AppendValue(nil, rec, 0)
		if !bytes.Equal(val, append([]byte{0}, c.want...)) {
			t.Errorf("%s: value % x", c.dt, val)
		}
		rec.Release()
		b.Release()
	}
}

func twosComplementBE(v decimal128.Num) []byte {
	var buf [maxDecimalBytes]byte
	return append([]byte(nil), unscaledBytes(&buf, v)...)
}

func TestTwosComplementMatchesJava(t *testing.T) {
	// Java BigInteger.valueOf(x).toByteArray().
	cases := map[int64][]byte{0: {0}, 1: {1}, 127: {0x7f}, 128: {0, 0x80}, -1: {0xff}, -128: {0x80}, -129: {0xff, 0x7f}, -32768: {0x80, 0}, 255: {0, 0xff}}
	for v, want := range cases {
		if got := twosComplementBE(decimal128.FromI64(v)); !bytes.Equal(got, want) {
			t.Errorf("%d: % x, want % x", v, got, want)
		}
	}
	big38, _ := new(big.Int).SetString("-99999999999999999999999999999999999999", 10)
	n := decimal128.FromBigInt(big38)
	got := twosComplementBE(n)
	back := new(big.Int).SetBytes(got)
	back.Sub(back, new(big.Int).Lsh(big.NewInt(1), uint(8*len(got))))
	if back.Cmp(big38) != 0 || got[0]&0x80 == 0 || (len(got) > 1 && got[0] == 0xff && got[1]&0x80 != 0) {
		t.Fatalf("38 digits: % x", got)
	}
}

func TestKVErrors(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)}}, nil)
	if _, err := NewRowEncoder(s, []int{0}); err != nil {
		t.Fatalf("list value column: %v", err)
	}
	if _, err := NewRowEncoder(s, []int{1}); err == nil || !strings.Contains(err.Error(), `key column "l" is list<item: int32, nullable>`) {
		t.Fatalf("list key column: %v", err)
	}
	s = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	b.Field(0).AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	enc, _ := NewRowEncoder(s, []int{0})
	if _, err := enc.AppendKey(nil, rec, 0); err == nil {
		t.Fatal("null key accepted")
	}
}
