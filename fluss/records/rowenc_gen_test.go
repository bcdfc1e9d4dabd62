package records

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// Random Fluss types and values for the encoders' round trips.

// scalarTypes are the non-nested types with the precisions and lengths
// whose encodings differ: compact and wide DECIMAL and TIMESTAMP(_LTZ),
// every TIME and TIMESTAMP unit, CHAR(n) and BINARY(n).
func scalarTypes() []types.DataType {
	return []types.DataType{
		types.Boolean(), types.TinyInt(), types.SmallInt(), types.Int(), types.BigInt(), types.Float(), types.Double(),
		types.Decimal(5, 2), types.Decimal(18, 0), types.Decimal(19, 4), types.Decimal(38, 10),
		types.Char(5), types.String(), types.Binary(3), types.Binary(12), types.Bytes(), types.Date(),
		types.Time(0), types.Time(3), types.Time(6), types.Time(9),
		types.Timestamp(0), types.Timestamp(2), types.Timestamp(3), types.Timestamp(4), types.Timestamp(9),
		types.TimestampLTZ(0), types.TimestampLTZ(3), types.TimestampLTZ(6), types.TimestampLTZ(8),
	}
}

// everyNestedColumns returns, for every scalar type T, ARRAY<T>,
// ARRAY<T NOT NULL>, MAP<T, T>, ROW<a T, b T NOT NULL> and ARRAY<ARRAY<T>>.
func everyNestedColumns() []types.Column {
	var cols []types.Column
	add := func(t types.DataType) {
		cols = append(cols, types.Column{Name: fmt.Sprintf("c%d", len(cols)), Type: t})
	}
	add(types.BigInt().NotNull())
	for _, s := range scalarTypes() {
		add(types.ArrayOf(s))
		add(types.ArrayOf(s.NotNull()))
		add(types.MapOf(s.NotNull(), s))
		add(types.RowOf(types.NewField("a", s), types.NewField("b", s.NotNull())))
		add(types.ArrayOf(types.ArrayOf(s)))
	}
	return cols
}

// randomType returns a random type, nested down to depth 3.
func randomType(r *rand.Rand, depth int) types.DataType {
	sc := scalarTypes()
	k := r.IntN(len(sc) + 6)
	if depth >= 3 {
		k = r.IntN(len(sc))
	}
	var t types.DataType
	switch {
	case k < len(sc):
		t = sc[k]
	case k < len(sc)+2:
		t = types.ArrayOf(randomType(r, depth+1))
	case k < len(sc)+4:
		t = types.MapOf(sc[r.IntN(len(sc))].NotNull(), randomType(r, depth+1))
	default:
		fields := make([]types.Field, 1+r.IntN(4))
		for i := range fields {
			fields[i] = types.NewField(fmt.Sprintf("f%d", i), randomType(r, depth+1))
		}
		t = types.RowOf(fields...)
	}
	return t.WithNullable(r.IntN(4) != 0)
}

// randomSchema returns id BIGINT NOT NULL and n random columns.
func randomSchema(t testing.TB, r *rand.Rand, n int) *types.Schema {
	cols := []types.Column{{Name: "id", Type: types.BigInt().NotNull()}}
	for i := 0; i < n; i++ {
		cols = append(cols, types.Column{Name: fmt.Sprintf("c%d", i), Type: randomType(r, 0)})
	}
	return mustSchema(t, cols)
}

func mustSchema(t testing.TB, cols []types.Column) *types.Schema {
	t.Helper()
	s, err := types.NewSchema(cols)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// randomRecord builds n rows of random values of s (column 0 the row
// index when it is a BIGINT).
func randomRecord(t testing.TB, mem memory.Allocator, s *types.Schema, n int, r *rand.Rand) arrow.RecordBatch {
	t.Helper()
	as, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(mem, as)
	defer b.Release()
	for row := 0; row < n; row++ {
		for c, col := range s.Columns {
			if ib, ok := b.Field(c).(*array.Int64Builder); ok && c == 0 {
				ib.Append(int64(row))
				continue
			}
			randomValue(t, r, b.Field(c), col.Type)
		}
	}
	return b.NewRecordBatch()
}

// randomValue appends a random value of type typ (null now and then when
// typ is nullable) to b.
func randomValue(t testing.TB, r *rand.Rand, b array.Builder, typ types.DataType) {
	if typ.Nullable && r.IntN(6) == 0 {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(r.IntN(2) == 0)
	case *array.Int8Builder:
		b.Append(int8(r.Uint32()))
	case *array.Int16Builder:
		b.Append(int16(r.Uint32()))
	case *array.Int32Builder:
		b.Append(int32(r.Uint32()) >> r.IntN(32))
	case *array.Int64Builder:
		b.Append(int64(r.Uint64()) >> r.IntN(64))
	case *array.Float32Builder:
		b.Append([]float32{float32(r.NormFloat64()), float32(math.NaN()), float32(math.Inf(-1)), 0}[r.IntN(4)])
	case *array.Float64Builder:
		b.Append([]float64{r.NormFloat64() * 1e9, math.NaN(), math.Inf(1), math.Copysign(0, -1)}[r.IntN(4)])
	case *array.StringBuilder:
		b.Append(randomText(r, typ))
	case *array.BinaryBuilder:
		b.Append(randomBytes(r, randomLen(r)))
	case *array.FixedSizeBinaryBuilder:
		b.Append(randomBytes(r, typ.Length))
	case *array.Decimal128Builder:
		b.Append(randomDecimal(r, typ.Precision))
	case *array.Date32Builder:
		b.Append(arrow.Date32(int32(r.Uint32()) >> r.IntN(32)))
	case *array.Time32Builder, *array.Time64Builder, *array.TimestampBuilder:
		appendRandomTime(r, b, typ)
	default:
		randomNested(t, r, b, typ)
	}
}

// randomNested appends a random ARRAY, MAP or ROW value.
func randomNested(t testing.TB, r *rand.Rand, b array.Builder, typ types.DataType) {
	switch b := b.(type) {
	case *array.ListBuilder:
		b.Append(true)
		n := r.IntN(5)
		if r.IntN(8) == 0 {
			n = 30 + r.IntN(45) // null bitmaps of more than one word
		}
		for k := 0; k < n; k++ {
			randomValue(t, r, b.ValueBuilder(), *typ.Elem)
		}
	case *array.MapBuilder:
		b.Append(true)
		for k := r.IntN(5); k > 0; k-- {
			randomValue(t, r, b.KeyBuilder(), typ.Key.NotNull()) // Arrow keys are never null
			randomValue(t, r, b.ItemBuilder(), *typ.Value)
		}
	case *array.StructBuilder:
		b.Append(true)
		for k, f := range typ.Fields {
			randomValue(t, r, b.FieldBuilder(k), f.Type)
		}
	default:
		t.Fatalf("no random %s for %T", typ, b)
	}
}

// randomLen is 0 to 7 bytes (inline in an array slot) or 8 to 40.
func randomLen(r *rand.Rand) int {
	if r.IntN(2) == 0 {
		return r.IntN(8)
	}
	return 8 + r.IntN(33)
}

func randomBytes(r *rand.Rand, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

// randomText is a STRING of randomLen bytes or a CHAR(n) of at most n
// bytes (what IndexedRow can hold), with no NUL (IndexedRow pads CHAR with
// them and drops them on reading).
func randomText(r *rand.Rand, typ types.DataType) string {
	limit := randomLen(r)
	if typ.Kind == types.KindChar {
		limit = r.IntN(typ.Length + 1)
	}
	var out []byte
	for {
		piece := []string{"a", "Z", "é", "日", "🙂", " ", "\t", "\x7f"}[r.IntN(8)]
		if typ.Kind == types.KindString && r.IntN(10) == 0 {
			piece = "\x00"
		}
		if len(out)+len(piece) > limit {
			return string(out)
		}
		out = append(out, piece...)
	}
}

// randomDecimal is an unscaled value of 1 to precision digits, either sign.
func randomDecimal(r *rand.Rand, precision int) decimal128.Num {
	v := new(big.Int)
	for d := 1 + r.IntN(precision); d > 0; d-- {
		v.Mul(v, big.NewInt(10))
		v.Add(v, big.NewInt(int64(r.IntN(10))))
	}
	if r.IntN(2) == 0 {
		v.Neg(v)
	}
	return decimal128.FromBigInt(v)
}

// appendRandomTime appends a TIME (whole milliseconds of the day, all Fluss
// keeps) or a TIMESTAMP of either sign.
func appendRandomTime(r *rand.Rand, b array.Builder, typ types.DataType) {
	unit := types.ArrowTimeUnit(typ.Precision)
	if typ.Kind == types.KindTime {
		ms := r.Int64N(86_400_000)
		switch unit {
		case arrow.Second:
			b.(*array.Time32Builder).Append(arrow.Time32(ms / 1000))
		case arrow.Millisecond:
			b.(*array.Time32Builder).Append(arrow.Time32(ms))
		case arrow.Microsecond:
			b.(*array.Time64Builder).Append(arrow.Time64(ms * 1000))
		default:
			b.(*array.Time64Builder).Append(arrow.Time64(ms * 1_000_000))
		}
		return
	}
	limit := map[arrow.TimeUnit]int64{arrow.Second: 1e11, arrow.Millisecond: 1e14, arrow.Microsecond: 1e17, arrow.Nanosecond: 4e18}[unit]
	b.(*array.TimestampBuilder).Append(arrow.Timestamp(r.Int64N(2*limit) - limit))
}
