package types

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits and defaults of the parameterised Fluss types.
const (
	MinDecimalPrecision     = 1
	MaxDecimalPrecision     = 38
	DefaultDecimalPrecision = 10
	DefaultDecimalScale     = 0

	MinLength     = 1
	MaxLength     = 1<<31 - 1
	DefaultLength = 1

	MaxTimePrecision             = 9
	DefaultTimePrecision         = 0
	DefaultTimestampPrecision    = 6
	DefaultTimestampLTZPrecision = 6
	maxNestingDepth              = 64
)

// DataType is a Fluss data type. The zero value is invalid; build types with
// the constructors (Int(), Decimal(10, 2), ArrayOf(...), ...), which return
// nullable types, or with ParseDataType.
type DataType struct {
	// Kind is the type root.
	Kind Kind
	// Nullable is true unless the type is declared NOT NULL.
	Nullable bool
	// Length of CHAR(n) and BINARY(n).
	Length int
	// Precision of DECIMAL(p,s), TIME(p), TIMESTAMP(p) and TIMESTAMP_LTZ(p).
	Precision int
	// Scale of DECIMAL(p,s).
	Scale int
	// Elem is the element type of ARRAY.
	Elem *DataType
	// Key and Value are the key and value types of MAP.
	Key, Value *DataType
	// Fields are the fields of ROW, in order.
	Fields []Field
	// HasFieldIDs records that the ROW's field ids are meaningful (they were
	// present in the JSON read, or set by the caller) and must be written to
	// JSON. Fluss 0.9+ writes them; older servers neither write nor read them.
	HasFieldIDs bool
}

// Field is one field of a ROW type.
type Field struct {
	Name        string
	Type        DataType
	Description string
	// ID is the field id (Fluss 0.9+); written to JSON only when the
	// enclosing ROW has HasFieldIDs set.
	ID int32
}

// Boolean returns a nullable BOOLEAN.
func Boolean() DataType { return DataType{Kind: KindBoolean, Nullable: true} }

// TinyInt returns a nullable TINYINT.
func TinyInt() DataType { return DataType{Kind: KindTinyInt, Nullable: true} }

// SmallInt returns a nullable SMALLINT.
func SmallInt() DataType { return DataType{Kind: KindSmallInt, Nullable: true} }

// Int returns a nullable INT.
func Int() DataType { return DataType{Kind: KindInt, Nullable: true} }

// BigInt returns a nullable BIGINT.
func BigInt() DataType { return DataType{Kind: KindBigInt, Nullable: true} }

// Float returns a nullable FLOAT.
func Float() DataType { return DataType{Kind: KindFloat, Nullable: true} }

// Double returns a nullable DOUBLE.
func Double() DataType { return DataType{Kind: KindDouble, Nullable: true} }

// Decimal returns a nullable DECIMAL(precision, scale).
func Decimal(precision, scale int) DataType {
	return DataType{Kind: KindDecimal, Nullable: true, Precision: precision, Scale: scale}
}

// Char returns a nullable CHAR(length).
func Char(length int) DataType { return DataType{Kind: KindChar, Nullable: true, Length: length} }

// String returns a nullable STRING.
func String() DataType { return DataType{Kind: KindString, Nullable: true} }

// Binary returns a nullable BINARY(length).
func Binary(length int) DataType { return DataType{Kind: KindBinary, Nullable: true, Length: length} }

// Bytes returns a nullable BYTES.
func Bytes() DataType { return DataType{Kind: KindBytes, Nullable: true} }

// Date returns a nullable DATE.
func Date() DataType { return DataType{Kind: KindDate, Nullable: true} }

// Time returns a nullable TIME(precision).
func Time(precision int) DataType {
	return DataType{Kind: KindTime, Nullable: true, Precision: precision}
}

// Timestamp returns a nullable TIMESTAMP(precision) (without time zone).
func Timestamp(precision int) DataType {
	return DataType{Kind: KindTimestamp, Nullable: true, Precision: precision}
}

// TimestampLTZ returns a nullable TIMESTAMP_LTZ(precision) (with local time zone).
func TimestampLTZ(precision int) DataType {
	return DataType{Kind: KindTimestampLTZ, Nullable: true, Precision: precision}
}

// ArrayOf returns a nullable ARRAY<elem>.
func ArrayOf(elem DataType) DataType {
	return DataType{Kind: KindArray, Nullable: true, Elem: &elem}
}

// MapOf returns a nullable MAP<key, value>.
func MapOf(key, value DataType) DataType {
	return DataType{Kind: KindMap, Nullable: true, Key: &key, Value: &value}
}

// RowOf returns a nullable ROW with the given fields. Field ids are
// assigned by position (as Fluss does for fields declared without ids).
func RowOf(fields ...Field) DataType {
	fs := make([]Field, len(fields))
	for i, f := range fields {
		f.ID = int32(i)
		fs[i] = f
	}
	return DataType{Kind: KindRow, Nullable: true, Fields: fs}
}

// NewField returns a ROW field.
func NewField(name string, t DataType) Field { return Field{Name: name, Type: t} }

// NotNull returns a copy of t declared NOT NULL.
func (t DataType) NotNull() DataType {
	t.Nullable = false
	return t
}

// WithNullable returns a copy of t with the given nullability.
func (t DataType) WithNullable(nullable bool) DataType {
	t.Nullable = nullable
	return t
}

// Clone returns a deep copy of t.
func (t DataType) Clone() DataType {
	if t.Elem != nil {
		e := t.Elem.Clone()
		t.Elem = &e
	}
	if t.Key != nil {
		k := t.Key.Clone()
		t.Key = &k
	}
	if t.Value != nil {
		v := t.Value.Clone()
		t.Value = &v
	}
	if t.Fields != nil {
		fs := make([]Field, len(t.Fields))
		for i, f := range t.Fields {
			f.Type = f.Type.Clone()
			fs[i] = f
		}
		t.Fields = fs
	}
	return t
}

// Equal reports whether t and o are the same type: same kind, nullability,
// parameters, nested types and ROW field names. Field descriptions and ids
// are ignored.
func (t DataType) Equal(o DataType) bool {
	if t.Kind != o.Kind || t.Nullable != o.Nullable {
		return false
	}
	switch t.Kind {
	case KindChar, KindBinary:
		return t.Length == o.Length
	case KindDecimal:
		return t.Precision == o.Precision && t.Scale == o.Scale
	case KindTime, KindTimestamp, KindTimestampLTZ:
		return t.Precision == o.Precision
	case KindArray:
		return eqPtr(t.Elem, o.Elem)
	case KindMap:
		return eqPtr(t.Key, o.Key) && eqPtr(t.Value, o.Value)
	case KindRow:
		if len(t.Fields) != len(o.Fields) {
			return false
		}
		for i := range t.Fields {
			if t.Fields[i].Name != o.Fields[i].Name || !t.Fields[i].Type.Equal(o.Fields[i].Type) {
				return false
			}
		}
	}
	return true
}

func eqPtr(a, b *DataType) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// Validate checks that the type is well formed: a known kind, parameters in
// range, nested types present and valid, ROW field names non-empty and unique.
func (t DataType) Validate() error { return t.validate(0) }

func (t DataType) validate(depth int) error {
	if depth > maxNestingDepth {
		return fmt.Errorf("type nesting deeper than %d", maxNestingDepth)
	}
	switch t.Kind {
	case KindBoolean, KindTinyInt, KindSmallInt, KindInt, KindBigInt, KindFloat, KindDouble,
		KindString, KindBytes, KindDate:
		return nil
	case KindChar, KindBinary:
		if t.Length < MinLength || t.Length > MaxLength {
			return fmt.Errorf("%s length %d out of range [%d, %d]", t.Kind, t.Length, MinLength, MaxLength)
		}
		return nil
	case KindDecimal:
		if t.Precision < MinDecimalPrecision || t.Precision > MaxDecimalPrecision {
			return fmt.Errorf("DECIMAL precision %d out of range [%d, %d]", t.Precision, MinDecimalPrecision, MaxDecimalPrecision)
		}
		if t.Scale < 0 || t.Scale > t.Precision {
			return fmt.Errorf("DECIMAL scale %d out of range [0, %d]", t.Scale, t.Precision)
		}
		return nil
	case KindTime, KindTimestamp, KindTimestampLTZ:
		if t.Precision < 0 || t.Precision > MaxTimePrecision {
			return fmt.Errorf("%s precision %d out of range [0, %d]", t.Kind, t.Precision, MaxTimePrecision)
		}
		return nil
	case KindArray:
		if t.Elem == nil {
			return fmt.Errorf("ARRAY without element type")
		}
		if err := t.Elem.validate(depth + 1); err != nil {
			return fmt.Errorf("ARRAY element: %w", err)
		}
		return nil
	case KindMap:
		if t.Key == nil || t.Value == nil {
			return fmt.Errorf("MAP without key or value type")
		}
		if err := t.Key.validate(depth + 1); err != nil {
			return fmt.Errorf("MAP key: %w", err)
		}
		if err := t.Value.validate(depth + 1); err != nil {
			return fmt.Errorf("MAP value: %w", err)
		}
		return nil
	case KindRow:
		seen := make(map[string]struct{}, len(t.Fields))
		for i, f := range t.Fields {
			if f.Name == "" {
				return fmt.Errorf("ROW field %d has an empty name", i)
			}
			if _, dup := seen[f.Name]; dup {
				return fmt.Errorf("ROW field %q appears twice", f.Name)
			}
			seen[f.Name] = struct{}{}
			if err := f.Type.validate(depth + 1); err != nil {
				return fmt.Errorf("ROW field %q: %w", f.Name, err)
			}
		}
		return nil
	default:
		return fmt.Errorf("invalid type kind %d", int(t.Kind))
	}
}

// String renders t in the Fluss type syntax, e.g. "DECIMAL(10, 2) NOT NULL",
// "MAP<STRING, ARRAY<INT>>" or "ROW<a INT, `b c` STRING>". ParseDataType
// reads it back.
func (t DataType) String() string {
	var b strings.Builder
	t.appendString(&b, 0)
	return b.String()
}

func (t DataType) appendString(b *strings.Builder, depth int) {
	if depth > maxNestingDepth {
		b.WriteString("...")
		return
	}
	switch t.Kind {
	case KindChar, KindBinary:
		b.WriteString(t.Kind.String())
		b.WriteByte('(')
		b.WriteString(strconv.Itoa(t.Length))
		b.WriteByte(')')
	case KindDecimal:
		b.WriteString("DECIMAL(")
		b.WriteString(strconv.Itoa(t.Precision))
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(t.Scale))
		b.WriteByte(')')
	case KindTime, KindTimestamp, KindTimestampLTZ:
		b.WriteString(t.Kind.String())
		b.WriteByte('(')
		b.WriteString(strconv.Itoa(t.Precision))
		b.WriteByte(')')
	case KindArray:
		b.WriteString("ARRAY<")
		if t.Elem != nil {
			t.Elem.appendString(b, depth+1)
		}
		b.WriteByte('>')
	case KindMap:
		b.WriteString("MAP<")
		if t.Key != nil {
			t.Key.appendString(b, depth+1)
		}
		b.WriteString(", ")
		if t.Value != nil {
			t.Value.appendString(b, depth+1)
		}
		b.WriteByte('>')
	case KindRow:
		b.WriteString("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(f.Name))
			b.WriteByte(' ')
			f.Type.appendString(b, depth+1)
			if f.Description != "" {
				b.WriteString(" '")
				b.WriteString(strings.ReplaceAll(f.Description, "'", "''"))
				b.WriteByte('\'')
			}
		}
		b.WriteByte('>')
	default:
		b.WriteString(t.Kind.String())
	}
	if !t.Nullable {
		b.WriteString(" NOT NULL")
	}
}

// quoteIdent returns name as is when it is a plain identifier that is not a
// keyword of the type syntax, otherwise wrapped in backticks with inner
// backticks doubled.
func quoteIdent(name string) string {
	plain := name != ""
	for i := 0; i < len(name) && plain; i++ {
		c := name[i]
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			plain = false
		}
	}
	if plain && !isReservedWord(name) {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func isReservedWord(s string) bool {
	switch upperASCII(s) {
	case "NOT", "NULL":
		return true
	}
	return false
}
