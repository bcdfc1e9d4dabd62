package types

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// Arrow child field names used by the Fluss Java writer
// (common/utils/ArrowUtils.java#toArrowField).
const (
	ArrowListElementName = "element"
	ArrowMapEntriesName  = "entries"
	ArrowMapKeyName      = "key"
	ArrowMapValueName    = "value"
)

// ArrowSchema returns the Arrow schema of the ARROW log format body for the
// schema's columns, exactly as the Fluss Java writer declares it: one field
// per column in order, nullable = Fluss nullability, no metadata.
func (s *Schema) ArrowSchema() (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(s.Columns))
	for i, c := range s.Columns {
		f, err := ArrowField(c.Name, c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		fields[i] = f
	}
	return arrow.NewSchema(fields, nil), nil
}

// ArrowSchemaOfRow returns the Arrow schema of a ROW type's fields.
func ArrowSchemaOfRow(row DataType) (*arrow.Schema, error) {
	if row.Kind != KindRow {
		return nil, fmt.Errorf("arrow schema of %s: not a ROW type", row)
	}
	fields := make([]arrow.Field, len(row.Fields))
	for i, f := range row.Fields {
		af, err := ArrowField(f.Name, f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		fields[i] = af
	}
	return arrow.NewSchema(fields, nil), nil
}

// ArrowField returns the Arrow field Fluss writes for a column or nested
// field named name of type t.
func ArrowField(name string, t DataType) (arrow.Field, error) {
	at, err := ArrowType(t)
	if err != nil {
		return arrow.Field{}, err
	}
	return arrow.Field{Name: name, Type: at, Nullable: t.Nullable}, nil
}

// timeUnitForPrecision maps a TIME/TIMESTAMP precision to the Arrow unit
// Fluss uses: 0 s, 1–3 ms, 4–6 µs, 7–9 ns.
func timeUnitForPrecision(p int) arrow.TimeUnit {
	switch {
	case p <= 0:
		return arrow.Second
	case p <= 3:
		return arrow.Millisecond
	case p <= 6:
		return arrow.Microsecond
	default:
		return arrow.Nanosecond
	}
}

// ArrowTimeUnit returns the Arrow time unit Fluss uses for a TIME,
// TIMESTAMP or TIMESTAMP_LTZ type of the given precision.
func ArrowTimeUnit(precision int) arrow.TimeUnit { return timeUnitForPrecision(precision) }

// ArrowType returns the Arrow data type Fluss writes for t (§4.2 of the
// protocol reference):
//
//	BOOLEAN Bool; TINYINT..BIGINT Int8..Int64; FLOAT Float32; DOUBLE Float64;
//	CHAR/STRING Utf8; BINARY(n) FixedSizeBinary(n); BYTES Binary;
//	DECIMAL(p,s) Decimal128(p,s); DATE Date32;
//	TIME(p) Time32[s] (p=0), Time32[ms] (1–3), Time64[us] (4–6), Time64[ns] (7–9);
//	TIMESTAMP(p), TIMESTAMP_LTZ(p) Timestamp with the same units, no time zone;
//	ARRAY List with child "element"; MAP Map (keys unsorted) with a non-null
//	"entries" struct of a non-null "key" and a "value"; ROW Struct.
func ArrowType(t DataType) (arrow.DataType, error) { return arrowType(t, 0) }

func arrowType(t DataType, depth int) (arrow.DataType, error) {
	if depth > maxNestingDepth {
		return nil, fmt.Errorf("type nesting deeper than %d", maxNestingDepth)
	}
	switch t.Kind {
	case KindBoolean:
		return arrow.FixedWidthTypes.Boolean, nil
	case KindTinyInt:
		return arrow.PrimitiveTypes.Int8, nil
	case KindSmallInt:
		return arrow.PrimitiveTypes.Int16, nil
	case KindInt:
		return arrow.PrimitiveTypes.Int32, nil
	case KindBigInt:
		return arrow.PrimitiveTypes.Int64, nil
	case KindFloat:
		return arrow.PrimitiveTypes.Float32, nil
	case KindDouble:
		return arrow.PrimitiveTypes.Float64, nil
	case KindChar, KindString:
		return arrow.BinaryTypes.String, nil
	case KindBinary:
		if t.Length < MinLength {
			return nil, fmt.Errorf("BINARY length %d out of range", t.Length)
		}
		return &arrow.FixedSizeBinaryType{ByteWidth: t.Length}, nil
	case KindBytes:
		return arrow.BinaryTypes.Binary, nil
	case KindDecimal:
		if t.Precision < MinDecimalPrecision || t.Precision > MaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return nil, fmt.Errorf("invalid DECIMAL(%d, %d)", t.Precision, t.Scale)
		}
		return &arrow.Decimal128Type{Precision: int32(t.Precision), Scale: int32(t.Scale)}, nil
	case KindDate:
		return arrow.FixedWidthTypes.Date32, nil
	case KindTime:
		if t.Precision < 0 || t.Precision > MaxTimePrecision {
			return nil, fmt.Errorf("TIME precision %d out of range", t.Precision)
		}
		switch timeUnitForPrecision(t.Precision) {
		case arrow.Second:
			return arrow.FixedWidthTypes.Time32s, nil
		case arrow.Millisecond:
			return arrow.FixedWidthTypes.Time32ms, nil
		case arrow.Microsecond:
			return arrow.FixedWidthTypes.Time64us, nil
		default:
			return arrow.FixedWidthTypes.Time64ns, nil
		}
	case KindTimestamp, KindTimestampLTZ:
		if t.Precision < 0 || t.Precision > MaxTimePrecision {
			return nil, fmt.Errorf("%s precision %d out of range", t.Kind, t.Precision)
		}
		return &arrow.TimestampType{Unit: timeUnitForPrecision(t.Precision)}, nil
	case KindArray, KindMap, KindRow:
		return arrowNestedType(t, depth)
	default:
		return nil, fmt.Errorf("no Arrow type for type kind %d", int(t.Kind))
	}
}

// arrowNestedType is arrowType of ARRAY, MAP and ROW.
func arrowNestedType(t DataType, depth int) (arrow.DataType, error) {
	switch t.Kind {
	case KindArray:
		if t.Elem == nil {
			return nil, fmt.Errorf("ARRAY without element type")
		}
		et, err := arrowType(*t.Elem, depth+1)
		if err != nil {
			return nil, fmt.Errorf("ARRAY element: %w", err)
		}
		return arrow.ListOfField(arrow.Field{Name: ArrowListElementName, Type: et, Nullable: t.Elem.Nullable}), nil
	case KindMap:
		if t.Key == nil || t.Value == nil {
			return nil, fmt.Errorf("MAP without key or value type")
		}
		kt, err := arrowType(*t.Key, depth+1)
		if err != nil {
			return nil, fmt.Errorf("MAP key: %w", err)
		}
		vt, err := arrowType(*t.Value, depth+1)
		if err != nil {
			return nil, fmt.Errorf("MAP value: %w", err)
		}
		m := arrow.MapOfFields(
			arrow.Field{Name: ArrowMapKeyName, Type: kt, Nullable: false},
			arrow.Field{Name: ArrowMapValueName, Type: vt, Nullable: t.Value.Nullable},
		)
		m.KeysSorted = false
		return m, nil
	case KindRow:
		fields := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			ft, err := arrowType(f.Type, depth+1)
			if err != nil {
				return nil, fmt.Errorf("ROW field %q: %w", f.Name, err)
			}
			fields[i] = arrow.Field{Name: f.Name, Type: ft, Nullable: f.Type.Nullable}
		}
		return arrow.StructOf(fields...), nil
	}
	return nil, fmt.Errorf("no Arrow type for type kind %d", int(t.Kind))
}
