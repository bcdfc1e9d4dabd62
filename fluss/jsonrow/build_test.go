package jsonrow

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// kv is one MAP entry in test values.
type kv struct{ k, v any }

// appendAny appends a Go test value to a builder of the Arrow type Fluss
// uses for dt. Values: nil = null; bool; int64 for integers, DATE days and
// raw TIME/TIMESTAMP values in the Arrow unit; float64; string for
// CHAR/STRING and for DECIMAL ("-12.30"); []byte for BINARY/BYTES; []any for
// ARRAY and ROW; []kv for MAP.
func appendAny(b array.Builder, dt types.DataType, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch bb := b.(type) {
	case *array.BooleanBuilder:
		bb.Append(v.(bool))
	case *array.Int8Builder:
		bb.Append(int8(v.(int64)))
	case *array.Int16Builder:
		bb.Append(int16(v.(int64)))
	case *array.Int32Builder:
		bb.Append(int32(v.(int64)))
	case *array.Int64Builder:
		bb.Append(v.(int64))
	case *array.Float32Builder:
		bb.Append(float32(v.(float64)))
	case *array.Float64Builder:
		bb.Append(v.(float64))
	case *array.Decimal128Builder:
		n, err := decimal128.FromString(v.(string), int32(dt.Precision), int32(dt.Scale))
		if err != nil {
			return err
		}
		bb.Append(n)
	case *array.StringBuilder:
		bb.Append(v.(string))
	case *array.BinaryBuilder:
		bb.Append(v.([]byte))
	case *array.FixedSizeBinaryBuilder:
		bb.Append(v.([]byte))
	case *array.Date32Builder:
		bb.Append(arrow.Date32(v.(int64)))
	case *array.Time32Builder:
		bb.Append(arrow.Time32(v.(int64)))
	case *array.Time64Builder:
		bb.Append(arrow.Time64(v.(int64)))
	case *array.TimestampBuilder:
		bb.Append(arrow.Timestamp(v.(int64)))
	case *array.MapBuilder:
		bb.Append(true)
		for _, e := range v.([]kv) {
			if err := appendAny(bb.KeyBuilder(), *dt.Key, e.k); err != nil {
				return err
			}
			if err := appendAny(bb.ItemBuilder(), *dt.Value, e.v); err != nil {
				return err
			}
		}
	case *array.ListBuilder:
		bb.Append(true)
		for _, e := range v.([]any) {
			if err := appendAny(bb.ValueBuilder(), *dt.Elem, e); err != nil {
				return err
			}
		}
	case *array.StructBuilder:
		bb.Append(true)
		vals := v.([]any)
		for i, f := range dt.Fields {
			if err := appendAny(bb.FieldBuilder(i), f.Type, vals[i]); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("no test support for builder %T", b)
	}
	return nil
}

// appendNullStruct appends a null ROW: arrow-go needs the children to get a
// (null) slot too.
func appendNull(b array.Builder, dt types.DataType) {
	if sb, ok := b.(*array.StructBuilder); ok {
		sb.AppendNull()
		return
	}
	b.AppendNull()
}

// buildRecord builds a record batch of the schema's Arrow layout from rows
// of Go test values.
func buildRecord(t testing.TB, mem memory.Allocator, s *types.Schema, rows [][]any) arrow.RecordBatch {
	t.Helper()
	as, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	rb := array.NewRecordBuilder(mem, as)
	defer rb.Release()
	for r, row := range rows {
		for c, v := range row {
			if v == nil {
				appendNull(rb.Field(c), s.Columns[c].Type)
				continue
			}
			if err := appendAny(rb.Field(c), s.Columns[c].Type, v); err != nil {
				t.Fatalf("row %d column %q: %v", r, s.Columns[c].Name, err)
			}
		}
	}
	return rb.NewRecordBatch()
}
