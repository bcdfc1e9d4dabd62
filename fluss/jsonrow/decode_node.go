package jsonrow

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// slot holds one parsed value of a row until the row is appended. What i
// and j hold depends on the type: integers, booleans (0/1), DATE days and
// TIME milliseconds in i; FLOAT/DOUBLE bits in i; DECIMAL's low and high
// words in i and j; TIMESTAMP seconds and nanoseconds in i and j; strings
// and binaries as the range text[i:j]; ARRAY and MAP the index of the
// first element (entry) in i and the count in j, elements linked by next
// (an entry is a key slot followed by its value slot); ROW the index of
// its first field in i, the fields being consecutive.
type slot struct {
	i, j  int64
	next  int32
	flags uint8
}

const (
	slotSet  = 1 << iota // the value is not null
	slotSeen             // its key appeared in the object
)

// dnode is the compiled reader of one Fluss type.
type dnode struct {
	kind     types.Kind
	nullable bool
	typ      string // the type as errors name it
	want     string // what JSON the type takes, for errors
	prec     int    // DECIMAL, TIME, TIMESTAMP precision
	scale    int
	length   int   // BINARY(n)
	lo, hi   int64 // integer range
	unit     arrow.TimeUnit
	elem     *dnode // ARRAY
	key, val *dnode // MAP
	fields   []*dnode
	names    []string
	index    map[string]int
	// objectKeys: MAP keys are CHAR/STRING, equal exactly when their text
	// is; binaryKeys: BINARY/BYTES keys, which Java compares by identity.
	objectKeys, binaryKeys bool

	flush func(si int32) // appends slot si to the node's Arrow builder
}

// compileDecoder builds the reader tree of t.
func compileDecoder(t types.DataType) *dnode {
	n := &dnode{kind: t.Kind, nullable: t.Nullable, typ: shorten(t.String()), want: wants(t.Kind),
		prec: t.Precision, scale: t.Scale, length: t.Length}
	switch t.Kind {
	case types.KindTinyInt:
		n.lo, n.hi = math.MinInt8, math.MaxInt8
	case types.KindSmallInt:
		n.lo, n.hi = math.MinInt16, math.MaxInt16
	case types.KindInt:
		n.lo, n.hi = math.MinInt32, math.MaxInt32
	case types.KindBigInt:
		n.lo, n.hi = math.MinInt64, math.MaxInt64
	case types.KindTime, types.KindTimestamp, types.KindTimestampLTZ:
		n.unit = types.ArrowTimeUnit(t.Precision)
	case types.KindArray:
		n.elem = compileDecoder(*t.Elem)
	case types.KindMap:
		n.key = compileDecoder(t.Key.NotNull()) // Fluss map keys are NOT NULL
		n.val = compileDecoder(*t.Value)
		n.objectKeys = t.Key.Kind.IsCharacterString()
		n.binaryKeys = t.Key.Kind == types.KindBinary || t.Key.Kind == types.KindBytes
	case types.KindRow:
		n.index = make(map[string]int, len(t.Fields))
		for i, f := range t.Fields {
			n.fields = append(n.fields, compileDecoder(f.Type))
			n.names = append(n.names, f.Name)
			n.index[f.Name] = i
		}
	}
	return n
}

// wants says what JSON values a kind takes.
func wants(k types.Kind) string {
	switch k {
	case types.KindBoolean:
		return "want true or false"
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		return "want an integer"
	case types.KindFloat, types.KindDouble:
		return `want a number, "NaN", "Infinity" or "-Infinity"`
	case types.KindDecimal:
		return "want a number or a string of one"
	case types.KindChar, types.KindString:
		return "want a string"
	case types.KindBinary, types.KindBytes:
		return "want a base64 string"
	case types.KindDate:
		return `want a "YYYY-MM-DD" string`
	case types.KindTime:
		return `want a "HH:MM[:SS[.fraction]]" string`
	case types.KindTimestamp:
		return `want a "YYYY-MM-DDTHH:MM[:SS[.fraction]]" string`
	case types.KindTimestampLTZ:
		return `want a "YYYY-MM-DDTHH:MM[:SS[.fraction]]" string with Z or an offset`
	case types.KindArray:
		return "want an array"
	case types.KindMap:
		return `want an object or an array of {"key":…,"value":…} objects`
	default:
		return "want an object"
	}
}

// bindRoot binds the columns of the root ROW to the record builder's fields.
func (n *dnode) bindRoot(b *RowBuilder, rb *array.RecordBuilder) error {
	for i, f := range n.fields {
		if err := f.bind(b, rb.Field(i)); err != nil {
			return fmt.Errorf("jsonrow: column %q: %w", n.names[i], err)
		}
	}
	return nil
}

// bind sets n.flush to append slots to ab, an Arrow builder of the type
// NewRowBuilder checked.
func (n *dnode) bind(b *RowBuilder, ab array.Builder) error {
	val, err := n.valueFn(b, ab)
	if err != nil {
		return err
	}
	n.flush = func(si int32) {
		s := &b.tape[si]
		if s.flags&slotSet == 0 {
			ab.AppendNull()
			return
		}
		val(s)
	}
	return nil
}

// valueFn returns the function appending a non-null slot to ab.
func (n *dnode) valueFn(b *RowBuilder, ab array.Builder) (func(s *slot), error) {
	switch bb := ab.(type) {
	case *array.BooleanBuilder:
		return func(s *slot) { bb.Append(s.i != 0) }, nil
	case *array.Int8Builder:
		return func(s *slot) { bb.Append(int8(s.i)) }, nil
	case *array.Int16Builder:
		return func(s *slot) { bb.Append(int16(s.i)) }, nil
	case *array.Int32Builder:
		return func(s *slot) { bb.Append(int32(s.i)) }, nil
	case *array.Int64Builder:
		return func(s *slot) { bb.Append(s.i) }, nil
	case *array.Float32Builder:
		return func(s *slot) { bb.Append(math.Float32frombits(uint32(s.i))) }, nil
	case *array.Float64Builder:
		return func(s *slot) { bb.Append(math.Float64frombits(uint64(s.i))) }, nil
	case *array.Decimal128Builder:
		return func(s *slot) { bb.Append(decimal128.New(s.j, uint64(s.i))) }, nil
	case *array.StringBuilder:
		return func(s *slot) { bb.BinaryBuilder.Append(b.text[s.i:s.j]) }, nil
	case *array.BinaryBuilder:
		return func(s *slot) { bb.Append(b.text[s.i:s.j]) }, nil
	case *array.FixedSizeBinaryBuilder:
		return func(s *slot) { bb.Append(b.text[s.i:s.j]) }, nil
	case *array.Date32Builder:
		return func(s *slot) { bb.Append(arrow.Date32(s.i)) }, nil
	case *array.Time32Builder:
		if n.unit == arrow.Second {
			return func(s *slot) { bb.Append(arrow.Time32(s.i / 1000)) }, nil
		}
		return func(s *slot) { bb.Append(arrow.Time32(s.i)) }, nil
	case *array.Time64Builder:
		per := int64(1000) // µs per ms
		if n.unit == arrow.Nanosecond {
			per = 1_000_000
		}
		return func(s *slot) { bb.Append(arrow.Time64(s.i * per)) }, nil
	case *array.TimestampBuilder:
		return func(s *slot) { bb.Append(arrow.Timestamp(unitValue(s.i, s.j, n.unit))) }, nil
	}
	return n.nestedFn(b, ab)
}

// unitValue is the instant sec+nanos/1e9 in the time unit (the caller
// checked that it fits, see fitsUnit).
func unitValue(sec, nanos int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return sec
	case arrow.Millisecond:
		return sec*1000 + nanos/1_000_000
	case arrow.Microsecond:
		return sec*1_000_000 + nanos/1000
	default:
		return sec*1_000_000_000 + nanos
	}
}

// nestedFn is valueFn of ARRAY, MAP and ROW builders.
func (n *dnode) nestedFn(b *RowBuilder, ab array.Builder) (func(s *slot), error) {
	switch bb := ab.(type) {
	case *array.ListBuilder:
		if err := n.elem.bind(b, bb.ValueBuilder()); err != nil {
			return nil, err
		}
		return func(s *slot) {
			bb.Append(true)
			e := int32(s.i)
			for k := s.j; k > 0; k-- {
				n.elem.flush(e)
				e = b.tape[e].next
			}
		}, nil
	case *array.MapBuilder:
		if err := n.key.bind(b, bb.KeyBuilder()); err != nil {
			return nil, err
		}
		if err := n.val.bind(b, bb.ItemBuilder()); err != nil {
			return nil, err
		}
		return func(s *slot) {
			bb.Append(true)
			e := int32(s.i)
			for k := s.j; k > 0; k-- {
				n.key.flush(e)
				n.val.flush(e + 1)
				e = b.tape[e].next
			}
		}, nil
	case *array.StructBuilder:
		for i, f := range n.fields {
			if err := f.bind(b, bb.FieldBuilder(i)); err != nil {
				return nil, err
			}
		}
		return func(s *slot) {
			bb.Append(true)
			for i, f := range n.fields {
				f.flush(int32(s.i) + int32(i))
			}
		}, nil
	}
	return nil, fmt.Errorf("no way to append %s values to an Arrow %s builder", n.typ, ab.Type())
}
