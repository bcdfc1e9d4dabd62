package types

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestArrowType(t *testing.T) {
	cases := []struct {
		fluss string
		want  arrow.DataType
	}{
		{"BOOLEAN", arrow.FixedWidthTypes.Boolean},
		{"TINYINT", arrow.PrimitiveTypes.Int8},
		{"SMALLINT", arrow.PrimitiveTypes.Int16},
		{"INT", arrow.PrimitiveTypes.Int32},
		{"BIGINT", arrow.PrimitiveTypes.Int64},
		{"FLOAT", arrow.PrimitiveTypes.Float32},
		{"DOUBLE", arrow.PrimitiveTypes.Float64},
		{"DECIMAL(10, 2)", &arrow.Decimal128Type{Precision: 10, Scale: 2}},
		{"DECIMAL(38, 0)", &arrow.Decimal128Type{Precision: 38, Scale: 0}},
		{"DECIMAL(3, 3)", &arrow.Decimal128Type{Precision: 3, Scale: 3}},
		{"CHAR(5)", arrow.BinaryTypes.String},
		{"STRING", arrow.BinaryTypes.String},
		{"BINARY(7)", &arrow.FixedSizeBinaryType{ByteWidth: 7}},
		{"BYTES", arrow.BinaryTypes.Binary},
		{"DATE", arrow.FixedWidthTypes.Date32},
		{"TIME(0)", &arrow.Time32Type{Unit: arrow.Second}},
		{"TIME(1)", &arrow.Time32Type{Unit: arrow.Millisecond}},
		{"TIME(3)", &arrow.Time32Type{Unit: arrow.Millisecond}},
		{"TIME(4)", &arrow.Time64Type{Unit: arrow.Microsecond}},
		{"TIME(6)", &arrow.Time64Type{Unit: arrow.Microsecond}},
		{"TIME(7)", &arrow.Time64Type{Unit: arrow.Nanosecond}},
		{"TIME(9)", &arrow.Time64Type{Unit: arrow.Nanosecond}},
		{"TIMESTAMP(0)", &arrow.TimestampType{Unit: arrow.Second}},
		{"TIMESTAMP(2)", &arrow.TimestampType{Unit: arrow.Millisecond}},
		{"TIMESTAMP(3)", &arrow.TimestampType{Unit: arrow.Millisecond}},
		{"TIMESTAMP(5)", &arrow.TimestampType{Unit: arrow.Microsecond}},
		{"TIMESTAMP(6)", &arrow.TimestampType{Unit: arrow.Microsecond}},
		{"TIMESTAMP(8)", &arrow.TimestampType{Unit: arrow.Nanosecond}},
		{"TIMESTAMP(9)", &arrow.TimestampType{Unit: arrow.Nanosecond}},
		{"TIMESTAMP_LTZ(0)", &arrow.TimestampType{Unit: arrow.Second}},
		{"TIMESTAMP_LTZ(3)", &arrow.TimestampType{Unit: arrow.Millisecond}},
		{"TIMESTAMP_LTZ(6)", &arrow.TimestampType{Unit: arrow.Microsecond}},
		{"TIMESTAMP_LTZ(9)", &arrow.TimestampType{Unit: arrow.Nanosecond}},
		{"ARRAY<INT>", arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Int32, Nullable: true})},
		{"ARRAY<INT NOT NULL>", arrow.ListOfField(arrow.Field{Name: "element", Type: arrow.PrimitiveTypes.Int32, Nullable: false})},
		{"MAP<STRING, INT>", arrow.MapOfFields(arrow.Field{Name: "key", Type: arrow.BinaryTypes.String}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Int32, Nullable: true})},
		{"MAP<INT, BIGINT NOT NULL>", arrow.MapOfFields(arrow.Field{Name: "key", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "value", Type: arrow.PrimitiveTypes.Int64})},
		{"ROW<a INT NOT NULL, b STRING>", arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})},
	}
	for _, c := range cases {
		got, err := ArrowType(MustParseDataType(c.fluss))
		if err != nil {
			t.Fatalf("%s: %v", c.fluss, err)
		}
		if !arrow.TypeEqual(got, c.want) || got.String() != c.want.String() {
			t.Errorf("%s: arrow %s, want %s", c.fluss, got, c.want)
		}
		if ts, ok := got.(*arrow.TimestampType); ok && ts.TimeZone != "" {
			t.Errorf("%s: time zone %q, want none", c.fluss, ts.TimeZone)
		}
	}
}

// TestArrowNestedLayout checks the child names and nullability the Java
// writer uses, beyond what arrow.TypeEqual compares.
func TestArrowNestedLayout(t *testing.T) {
	s := MustSchema([]Column{
		NewColumn("id", BigInt()),
		NewColumn("tags", ArrayOf(String().NotNull())),
		NewColumn("m", MapOf(String(), ArrayOf(Int()))),
		NewColumn("r", RowOf(NewField("x", Int().NotNull()), NewField("y", MapOf(Int(), Double().NotNull()))).NotNull()),
	}, "id")
	as, err := s.ArrowSchema()
	if err != nil {
		t.Fatal(err)
	}
	if as.NumFields() != 4 || as.Metadata().Len() != 0 {
		t.Fatalf("schema %s", as)
	}
	if f := as.Field(0); f.Name != "id" || f.Nullable || f.Type.ID() != arrow.INT64 {
		t.Errorf("id field %v", f)
	}
	tags := as.Field(1)
	lt := tags.Type.(*arrow.ListType)
	if !tags.Nullable || lt.ElemField().Name != "element" || lt.ElemField().Nullable {
		t.Errorf("tags field %v elem %v", tags, lt.ElemField())
	}
	mt := as.Field(2).Type.(*arrow.MapType)
	entries := mt.ElemField()
	if mt.KeysSorted || entries.Name != "entries" || entries.Nullable {
		t.Errorf("map entries %v sorted %v", entries, mt.KeysSorted)
	}
	if k := mt.KeyField(); k.Name != "key" || k.Nullable {
		t.Errorf("map key %v", k)
	}
	if v := mt.ItemField(); v.Name != "value" || !v.Nullable || v.Type.(*arrow.ListType).ElemField().Name != "element" {
		t.Errorf("map value %v", v)
	}
	r := as.Field(3)
	st := r.Type.(*arrow.StructType)
	if r.Nullable || st.Field(0).Name != "x" || st.Field(0).Nullable || st.Field(1).Name != "y" || !st.Field(1).Nullable {
		t.Errorf("row %v", r)
	}
	if inner := st.Field(1).Type.(*arrow.MapType); inner.ItemField().Nullable || inner.KeyField().Nullable {
		t.Errorf("row.y %v", inner)
	}
}

func TestArrowTypeErrors(t *testing.T) {
	for _, dt := range []DataType{
		{},
		{Kind: KindDecimal, Precision: 0},
		{Kind: KindBinary},
		{Kind: KindTime, Precision: 10},
		{Kind: KindArray},
		{Kind: KindMap, Key: &DataType{Kind: KindInt}},
		RowOf(NewField("a", DataType{Kind: KindTimestamp, Precision: -1})),
	} {
		if _, err := ArrowType(dt); err == nil {
			t.Errorf("ArrowType(%#v): no error", dt)
		}
	}
	s := &Schema{Columns: []Column{{Name: "bad", Type: DataType{Kind: KindArray}}}}
	if _, err := s.ArrowSchema(); err == nil || !strings.Contains(err.Error(), `column "bad"`) {
		t.Errorf("ArrowSchema error %v", err)
	}
	if _, err := ArrowSchemaOfRow(Int()); err == nil {
		t.Error("ArrowSchemaOfRow(INT): no error")
	}
}
