package jsonrow

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// appendFn appends the value at index i of the array it was bound to.
type appendFn func(dst []byte, i int) []byte

// Encoder appends rows of Arrow record batches as canonical JSON objects.
// It is not safe for concurrent use; use one per goroutine.
type Encoder struct {
	row    types.DataType
	schema *arrow.Schema
	cols   []*node
	keys   [][]byte // `{"a":` for column 0, `,"b":` for the others
	bound  []appendFn
	rec    arrow.RecordBatch
}

// node is the compiled writer of one Fluss type.
type node struct {
	t      types.DataType
	elem   *node   // ARRAY
	key    *node   // MAP
	value  *node   // MAP
	fields []*node // ROW
	keys   [][]byte
	// objectMap: MAP with character-string keys, rendered as a JSON object
	objectMap bool
}

// NewEncoder compiles an encoder for rows of the Fluss ROW type row (for a
// table: Schema.RowType(), or the projected schema's). schema is the Arrow
// schema of the record batches to encode; when nil it is derived from row
// with types.ArrowSchemaOfRow. The Arrow schema must have one field per row
// field, in the same order.
func NewEncoder(row types.DataType, schema *arrow.Schema) (*Encoder, error) {
	if row.Kind != types.KindRow {
		return nil, fmt.Errorf("jsonrow: row type must be a ROW, got %s", row)
	}
	if err := row.Validate(); err != nil {
		return nil, fmt.Errorf("jsonrow: %w", err)
	}
	if schema == nil {
		s, err := types.ArrowSchemaOfRow(row)
		if err != nil {
			return nil, fmt.Errorf("jsonrow: %w", err)
		}
		schema = s
	}
	if schema.NumFields() != len(row.Fields) {
		return nil, fmt.Errorf("jsonrow: arrow schema has %d fields, row type has %d", schema.NumFields(), len(row.Fields))
	}
	e := &Encoder{row: row, schema: schema}
	for i, f := range row.Fields {
		n, err := compile(f.Type, schema.Field(i).Type)
		if err != nil {
			return nil, fmt.Errorf("jsonrow: column %q: %w", f.Name, err)
		}
		e.cols = append(e.cols, n)
		e.keys = append(e.keys, objectKey(f.Name, i == 0, '{'))
	}
	e.bound = make([]appendFn, len(e.cols))
	e.unbind()
	return e, nil
}

// NewSchemaEncoder compiles an encoder for the columns of a Fluss schema,
// with the Arrow schema Fluss writes for it (Schema.ArrowSchema).
func NewSchemaEncoder(s *types.Schema) (*Encoder, error) {
	as, err := s.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("jsonrow: %w", err)
	}
	return NewEncoder(s.RowType(), as)
}

// objectKey returns the precomputed bytes written before a member value.
func objectKey(name string, first bool, open byte) []byte {
	var k []byte
	if first {
		k = append(k, open)
	} else {
		k = append(k, ',')
	}
	k = appendString(k, name)
	return append(k, ':')
}

func writeNull(dst []byte, _ int) []byte { return append(dst, null...) }

// unbind makes every column render null until the next successful Bind.
func (e *Encoder) unbind() {
	for i := range e.bound {
		e.bound[i] = writeNull
	}
	e.rec = nil
}

// Bind prepares the encoder for rows of rec. It must be called before
// AppendRow and again for every new record batch. It does not retain rec:
// the caller keeps rec alive (unreleased) while encoding its rows. Until a
// Bind succeeds, AppendRow renders every column as null.
func (e *Encoder) Bind(rec arrow.RecordBatch) error {
	if int(rec.NumCols()) != len(e.cols) {
		e.unbind()
		return fmt.Errorf("jsonrow: record batch has %d columns, encoder has %d", rec.NumCols(), len(e.cols))
	}
	for i, n := range e.cols {
		fn, err := n.bind(rec.Column(i), 0)
		if err != nil {
			e.unbind()
			return fmt.Errorf("jsonrow: column %q: %w", e.row.Fields[i].Name, err)
		}
		e.bound[i] = fn
	}
	e.rec = rec
	return nil
}

// AppendRow appends row i of the bound record batch as a JSON object
// ({"col":value,...}, columns in order, no whitespace) to dst and returns
// the extended buffer. i must be in [0, NumRows).
func (e *Encoder) AppendRow(dst []byte, i int) []byte {
	if len(e.cols) == 0 {
		return append(dst, '{', '}')
	}
	for c, fn := range e.bound {
		dst = append(dst, e.keys[c]...)
		dst = fn(dst, i)
	}
	return append(dst, '}')
}

// AppendValue appends the JSON value of column col at row i of the bound
// record batch.
func (e *Encoder) AppendValue(dst []byte, col, i int) []byte {
	return e.bound[col](dst, i)
}

// AppendRecordRow binds rec when it is not the batch bound last and then
// appends row i. Binding costs a few allocations per batch, never per row.
func (e *Encoder) AppendRecordRow(dst []byte, rec arrow.RecordBatch, i int) ([]byte, error) {
	if rec != e.rec {
		if err := e.Bind(rec); err != nil {
			return dst, err
		}
	}
	if i < 0 || int64(i) >= rec.NumRows() {
		return dst, fmt.Errorf("jsonrow: row %d out of range [0, %d)", i, rec.NumRows())
	}
	return e.AppendRow(dst, i), nil
}

// RowType returns the Fluss row type the encoder was built for.
func (e *Encoder) RowType() types.DataType { return e.row }

// compile checks that the Arrow type can carry the Fluss type and builds the
// writer tree.
func compile(t types.DataType, at arrow.DataType) (*node, error) {
	n := &node{t: t}
	bad := func() (*node, error) {
		return nil, fmt.Errorf("arrow type %s cannot carry Fluss type %s", at, t)
	}
	switch t.Kind {
	case types.KindBoolean:
		if at.ID() != arrow.BOOL {
			return bad()
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		switch at.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		default:
			return bad()
		}
	case types.KindFloat, types.KindDouble:
		switch at.ID() {
		case arrow.FLOAT32, arrow.FLOAT64:
		default:
			return bad()
		}
	case types.KindDecimal:
		dt, ok := at.(*arrow.Decimal128Type)
		if !ok {
			return bad()
		}
		if int(dt.Scale) != t.Scale {
			return nil, fmt.Errorf("arrow %s has scale %d, Fluss %s has %d", at, dt.Scale, t, t.Scale)
		}
	case types.KindChar, types.KindString:
		switch at.ID() {
		case arrow.STRING, arrow.LARGE_STRING:
		default:
			return bad()
		}
	case types.KindBinary, types.KindBytes:
		switch at.ID() {
		case arrow.FIXED_SIZE_BINARY, arrow.BINARY, arrow.LARGE_BINARY:
		default:
			return bad()
		}
	case types.KindDate:
		if at.ID() != arrow.DATE32 {
			return bad()
		}
	case types.KindTime:
		switch at.ID() {
		case arrow.TIME32, arrow.TIME64:
		default:
			return bad()
		}
	case types.KindTimestamp, types.KindTimestampLTZ:
		if at.ID() != arrow.TIMESTAMP {
			return bad()
		}
	case types.KindArray, types.KindMap, types.KindRow:
		return compileNested(n, at, bad)
	default:
		return nil, fmt.Errorf("unsupported Fluss type %s", t)
	}
	return n, nil
}

// compileNested is compile of ARRAY, MAP and ROW: it compiles the children
// into n.
func compileNested(n *node, at arrow.DataType, bad func() (*node, error)) (*node, error) {
	t := n.t
	switch t.Kind {
	case types.KindArray:
		lt, ok := at.(*arrow.ListType)
		if !ok {
			return bad()
		}
		e, err := compile(*t.Elem, lt.Elem())
		if err != nil {
			return nil, fmt.Errorf("element: %w", err)
		}
		n.elem = e
	case types.KindMap:
		mt, ok := at.(*arrow.MapType)
		if !ok {
			return bad()
		}
		k, err := compile(*t.Key, mt.KeyType())
		if err != nil {
			return nil, fmt.Errorf("key: %w", err)
		}
		v, err := compile(*t.Value, mt.ItemType())
		if err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		n.key, n.value = k, v
		n.objectMap = t.Key.Kind.IsCharacterString()
	case types.KindRow:
		st, ok := at.(*arrow.StructType)
		if !ok || st.NumFields() != len(t.Fields) {
			return bad()
		}
		for i, f := range t.Fields {
			c, err := compile(f.Type, st.Field(i).Type)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			n.fields = append(n.fields, c)
			n.keys = append(n.keys, objectKey(f.Name, i == 0, '{'))
		}
	}
	return n, nil
}

var null = []byte("null")

// nullable wraps fn with the null check of arr, when arr has nulls.
func nullable(arr arrow.Array, fn appendFn) appendFn {
	if arr.NullN() == 0 {
		return fn
	}
	return func(dst []byte, i int) []byte {
		if arr.IsNull(i) {
			return append(dst, null...)
		}
		return fn(dst, i)
	}
}

func typeMismatch(arr arrow.Array, t types.DataType) error {
	return fmt.Errorf("array of type %s cannot carry Fluss type %s", arr.DataType(), t)
}

// bind returns the writer of values of arr.
func (n *node) bind(arr arrow.Array, depth int) (appendFn, error) {
	t := n.t
	switch t.Kind {
	case types.KindBoolean:
		a, ok := arr.(*array.Boolean)
		if !ok {
			return nil, typeMismatch(arr, t)
		}
		return nullable(arr, func(dst []byte, i int) []byte {
			if a.Value(i) {
				return append(dst, "true"...)
			}
			return append(dst, "false"...)
		}), nil
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		switch a := arr.(type) {
		case *array.Int8:
			return nullable(arr, func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(a.Value(i)), 10) }), nil
		case *array.Int16:
			return nullable(arr, func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(a.Value(i)), 10) }), nil
		case *array.Int32:
			return nullable(arr, func(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(a.Value(i)), 10) }), nil
		case *array.Int64:
			return nullable(arr, func(dst []byte, i int) []byte { return strconv.AppendInt(dst, a.Value(i), 10) }), nil
		}
	case types.KindFloat, types.KindDouble:
		bitSize := 64
		if t.Kind == types.KindFloat {
			bitSize = 32
		}
		switch a := arr.(type) {
		case *array.Float32:
			return nullable(arr, func(dst []byte, i int) []byte { return appendFloat(dst, float64(a.Value(i)), 32) }), nil
		case *array.Float64:
			return nullable(arr, func(dst []byte, i int) []byte { return appendFloat(dst, a.Value(i), bitSize) }), nil
		}
	case types.KindDecimal:
		a, ok := arr.(*array.Decimal128)
		if !ok {
			return nil, typeMismatch(arr, t)
		}
		scale := int(a.DataType().(*arrow.Decimal128Type).Scale)
		return nullable(arr, func(dst []byte, i int) []byte {
			v := a.Value(i)
			return appendDecimal(dst, v.HighBits(), v.LowBits(), scale)
		}), nil
	case types.KindChar, types.KindString:
		switch a := arr.(type) {
		case *array.String:
			return nullable(arr, func(dst []byte, i int) []byte { return appendString(dst, a.Value(i)) }), nil
		case *array.LargeString:
			return nullable(arr, func(dst []byte, i int) []byte { return appendString(dst, a.Value(i)) }), nil
		}
	case types.KindBinary, types.KindBytes:
		switch a := arr.(type) {
		case *array.FixedSizeBinary:
			return nullable(arr, func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }), nil
		case *array.Binary:
			return nullable(arr, func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }), nil
		case *array.LargeBinary:
			return nullable(arr, func(dst []byte, i int) []byte { return appendBase64(dst, a.Value(i)) }), nil
		}
	case types.KindDate:
		return bindDate(arr, t)
	case types.KindTime:
		return n.bindTime(arr)
	case types.KindTimestamp, types.KindTimestampLTZ:
		return n.bindTimestamp(arr)
	case types.KindArray:
		return n.bindArray(arr, depth)
	case types.KindMap:
		return n.bindMap(arr, depth)
	case types.KindRow:
		return n.bindRow(arr, depth)
	}
	return nil, typeMismatch(arr, t)
}

func bindDate(arr arrow.Array, t types.DataType) (appendFn, error) {
	a, ok := arr.(*array.Date32)
	if !ok {
		return nil, typeMismatch(arr, t)
	}
	cache := &dateCache{}
	return nullable(arr, func(dst []byte, i int) []byte {
		dst = append(dst, '"')
		dst = cache.appendDate(dst, int64(a.Value(i)))
		return append(dst, '"')
	}), nil
}

func (n *node) bindArray(arr arrow.Array, depth int) (appendFn, error) {
	t := n.t
	a, ok := arr.(*array.List)
	if !ok {
		return nil, typeMismatch(arr, t)
	}
	elem, err := n.elem.bind(a.ListValues(), depth+1)
	if err != nil {
		return nil, fmt.Errorf("element: %w", err)
	}
	return nullable(arr, func(dst []byte, i int) []byte {
		start, end := a.ValueOffsets(i)
		dst = append(dst, '[')
		for j := start; j < end; j++ {
			if j > start {
				dst = append(dst, ',')
			}
			dst = elem(dst, int(j))
		}
		return append(dst, ']')
	}), nil
}

func (n *node) bindMap(arr arrow.Array, depth int) (appendFn, error) {
	t := n.t
	a, ok := arr.(*array.Map)
	if !ok {
		return nil, typeMismatch(arr, t)
	}
	keys, items := a.Keys(), a.Items()
	val, err := n.value.bind(items, depth+1)
	if err != nil {
		return nil, fmt.Errorf("value: %w", err)
	}
	key, err := n.key.bind(keys, depth+1)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	ms := &mapScratch{}
	objectMap := n.objectMap
	return nullable(arr, func(dst []byte, i int) []byte {
		start, end := a.ValueOffsets(i)
		return ms.appendMap(dst, key, val, int(start), int(end), objectMap)
	}), nil
}

func (n *node) bindRow(arr arrow.Array, depth int) (appendFn, error) {
	t := n.t
	a, ok := arr.(*array.Struct)
	if !ok || a.NumField() != len(n.fields) {
		return nil, typeMismatch(arr, t)
	}
	fns := make([]appendFn, len(n.fields))
	for k, f := range n.fields {
		fn, err := f.bind(a.Field(k), depth+1)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", t.Fields[k].Name, err)
		}
		fns[k] = fn
	}
	keys := n.keys
	if len(fns) == 0 {
		return nullable(arr, func(dst []byte, i int) []byte { return append(dst, '{', '}') }), nil
	}
	return nullable(arr, func(dst []byte, i int) []byte {
		for k, fn := range fns {
			dst = append(dst, keys[k]...)
			dst = fn(dst, i)
		}
		return append(dst, '}')
	}), nil
}

// bindTime binds a TIME(p) column. Fluss TIME values are milliseconds of
// the day: like the Java reader (ArrowTimeColumnVector) the Arrow value is
// converted to a 32-bit millisecond count (seconds ×1000, micro- and
// nanoseconds divided, truncating), then taken modulo one day and rendered
// "HH:MM:SS" plus p fraction digits (digits below the millisecond are zero).
func (n *node) bindTime(arr arrow.Array) (appendFn, error) {
	p := n.t.Precision
	var millisOf func(i int) int32
	switch a := arr.(type) {
	case *array.Time32:
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Second {
			millisOf = func(i int) int32 { return int32(a.Value(i)) * 1000 }
		} else {
			millisOf = func(i int) int32 { return int32(a.Value(i)) }
		}
	case *array.Time64:
		div := int64(1000)
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Nanosecond {
			div = 1_000_000
		}
		millisOf = func(i int) int32 { return int32(int64(a.Value(i)) / div) }
	default:
		return nil, typeMismatch(arr, n.t)
	}
	return nullable(arr, func(dst []byte, i int) []byte {
		_, ms := floorDiv(int64(millisOf(i)), 86_400_000)
		dst = append(dst, '"')
		dst = appendClock(dst, ms/1000, ms%1000*1_000_000, p)
		return append(dst, '"')
	}), nil
}

func unitNanos(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e9
	case arrow.Millisecond:
		return 1e6
	case arrow.Microsecond:
		return 1e3
	default:
		return 1
	}
}

// bindTimestamp binds a TIMESTAMP(p) or TIMESTAMP_LTZ(p) column: epoch
// values in the Arrow unit, rendered as UTC wall-clock time with p fraction
// digits, plus "Z" for TIMESTAMP_LTZ.
func (n *node) bindTimestamp(arr arrow.Array) (appendFn, error) {
	a, ok := arr.(*array.Timestamp)
	if !ok {
		return nil, typeMismatch(arr, n.t)
	}
	p := n.t.Precision
	ltz := n.t.Kind == types.KindTimestampLTZ
	per := int64(1e9) / unitNanos(a.DataType().(*arrow.TimestampType).Unit) // values per second
	mul := unitNanos(a.DataType().(*arrow.TimestampType).Unit)
	cache := &dateCache{}
	return nullable(arr, func(dst []byte, i int) []byte {
		sec, sub := floorDiv(int64(a.Value(i)), per)
		dst = append(dst, '"')
		dst = cache.appendTimestamp(dst, sec, sub*mul, p)
		if ltz {
			dst = append(dst, 'Z')
		}
		return append(dst, '"')
	}), nil
}
