package records

import (
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// Row formats (INDEXED, COMPACTED; fluss-protocol.md §4.5, §6.3) store one
// record per row. Their values are read by Fluss type, which the Arrow type
// does not always tell (CHAR and STRING are both Utf8), so each column gets a
// fieldSpec from its Fluss type, checked against the Arrow type it fills.

// Precision limits of the compact encodings (Decimal.isCompact,
// TimestampNtz/TimestampLtz.isCompact in the Java client).
const (
	maxCompactDecimalPrecision   = 18
	maxCompactTimestampPrecision = 3
	// maxDecimalBytes is the widest unscaled DECIMAL a Decimal128 holds.
	maxDecimalBytes = 16
)

// fieldSpec says how to read one column, nested field, array element, map
// key or map value of a row-format record.
type fieldSpec struct {
	name     string // for errors
	kind     types.Kind
	nullable bool
	length   int            // CHAR(n), BINARY(n)
	unit     arrow.TimeUnit // TIME, TIMESTAMP, TIMESTAMP_LTZ
	compact  bool           // DECIMAL p <= 18, TIMESTAMP(_LTZ) p <= 3
	fixed    int            // IndexedRow bytes of a fixed-length value; 0: variable
	slot     int            // BinaryArray element bytes
	width    int64          // Arrow bytes a value costs (budget), nested nulls included
	kids     []*fieldSpec   // ARRAY: element; MAP: key, value; ROW: fields
	nvar     int            // ROW: variable-length fields (IndexedRow header)
	// dataHint is the mean bytes per value of the column's last batch
	// (CHAR, STRING, BYTES, in 1/16 bytes), to size the next one's buffer:
	// growing it by doubling cost a tenth of a COMPACTED decode.
	dataHint atomic.Int64
}

// rowSpecs returns the specs of the columns of schema id, checked against
// the Arrow schema the plan loads.
func (d *Decoder) rowSpecs(schemaID int16, body *arrow.Schema) ([]*fieldSpec, error) {
	s, err := d.cfg.types(schemaID)
	if err != nil {
		return nil, err
	}
	if s == nil || len(s.Columns) != body.NumFields() {
		return nil, fmt.Errorf("type lookup gave %d columns, the Arrow schema has %d", columnCount(s), body.NumFields())
	}
	specs := make([]*fieldSpec, len(s.Columns))
	for i, c := range s.Columns {
		at, err := types.ArrowType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
		if !arrow.TypeEqual(at, body.Field(i).Type) {
			return nil, fmt.Errorf("column %q is %s, the Arrow schema has %s", c.Name, c.Type, body.Field(i).Type)
		}
		if specs[i], err = newFieldSpec(c.Name, c.Type, 0); err != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, err)
		}
	}
	return specs, nil
}

func columnCount(s *types.Schema) int {
	if s == nil {
		return 0
	}
	return len(s.Columns)
}

// newFieldSpec builds the spec of a value of type t.
func newFieldSpec(name string, t types.DataType, depth int) (*fieldSpec, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("nesting deeper than %d", maxNesting)
	}
	f := &fieldSpec{name: name, kind: t.Kind, nullable: t.Nullable, length: t.Length, slot: 8}
	switch t.Kind {
	case types.KindBoolean, types.KindTinyInt:
		f.fixed, f.slot, f.width = 1, 1, 2
	case types.KindSmallInt:
		f.fixed, f.slot, f.width = 2, 2, 3
	case types.KindInt, types.KindFloat, types.KindDate:
		f.fixed, f.slot, f.width = 4, 4, 5
	case types.KindTime:
		f.fixed, f.slot, f.unit = 4, 4, types.ArrowTimeUnit(t.Precision)
		f.width = 5
		if f.unit == arrow.Microsecond || f.unit == arrow.Nanosecond {
			f.width = 9
		}
	case types.KindBigInt, types.KindDouble:
		f.fixed, f.width = 8, 9
	case types.KindTimestamp, types.KindTimestampLTZ:
		f.unit, f.compact, f.width = types.ArrowTimeUnit(t.Precision), t.Precision <= maxCompactTimestampPrecision, 9
		f.fixed = 12
		if f.compact {
			f.fixed = 8
		}
	case types.KindDecimal:
		f.compact, f.width = t.Precision <= maxCompactDecimalPrecision, 17
		if f.compact {
			f.fixed = 8
		}
	case types.KindChar, types.KindBinary:
		if t.Length < types.MinLength {
			return nil, fmt.Errorf("%s length %d", t.Kind, t.Length)
		}
		f.fixed, f.width = t.Length, 5
		if t.Kind == types.KindBinary {
			f.width = int64(t.Length) + 1
		}
	case types.KindString, types.KindBytes:
		f.width = 5
	case types.KindArray, types.KindMap, types.KindRow:
		return f, f.nested(t, depth)
	default:
		return nil, fmt.Errorf("type %s has no row-format decoding", t)
	}
	return f, nil
}

// nested completes the spec of an ARRAY, MAP or ROW.
func (f *fieldSpec) nested(t types.DataType, depth int) error {
	add := func(name string, t *types.DataType) error {
		if t == nil {
			return fmt.Errorf("%s without %s type", f.kind, name)
		}
		k, err := newFieldSpec(name, *t, depth+1)
		if err != nil {
			return err
		}
		f.kids = append(f.kids, k)
		return nil
	}
	switch t.Kind {
	case types.KindArray:
		f.width = 5
		return add("element", t.Elem)
	case types.KindMap:
		f.width = 5
		if err := add("key", t.Key); err != nil {
			return err
		}
		return add("value", t.Value)
	}
	f.width = 1
	for i := range t.Fields {
		if err := add(t.Fields[i].Name, &t.Fields[i].Type); err != nil {
			return err
		}
		k := f.kids[len(f.kids)-1]
		f.width += k.width
		if k.fixed == 0 {
			f.nvar++
		}
	}
	return nil
}
