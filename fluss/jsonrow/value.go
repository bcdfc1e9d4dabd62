package jsonrow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/slab"
)

// valueFn returns the value at index i of the array it was bound to.
type valueFn func(i int) any

// Values builds rows of Arrow record batches as structured values: the
// value that decoding the row's canonical JSON (AppendRow) with
// json.Decoder.UseNumber would give, built straight from the columns
// without writing and parsing the text. A row is a map[string]any of its
// columns; BOOLEAN is a bool, TINYINT..BIGINT an int64, FLOAT and DOUBLE a
// json.Number holding the canonical text (or the string "NaN", "Infinity",
// "-Infinity"), CHAR and STRING a string, null a nil, and every other type
// the string (DECIMAL, DATE, TIME, TIMESTAMP, BYTES) or the decoded array
// or object of its canonical JSON. Serialised again by AppendAny, a row is
// its canonical JSON with the keys sorted.
//
// Like the Encoder it is compiled once and bound to each record batch; it
// is not safe for concurrent use.
type Values struct {
	e       *Encoder
	names   []string
	fns     []valueFn
	scratch []byte
	text    slab.Text // holds the bytes of the strings handed out

	// The boxes of the values handed out, one allocation per block of
	// values instead of one per value.
	ints    slab.Slab[int64]
	strs    slab.Slab[string]
	numbers slab.Slab[json.Number]
}

// NewValues returns a builder of structured rows for the encoder's schema.
// It binds the encoder itself: do not use e for other batches meanwhile.
func NewValues(e *Encoder) *Values {
	v := &Values{e: e, names: make([]string, len(e.cols)), fns: make([]valueFn, len(e.cols))}
	for c, f := range e.row.Fields {
		v.names[c] = f.Name
	}
	return v
}

// Bind prepares the builder for rows of rec (see Encoder.Bind).
func (v *Values) Bind(rec arrow.RecordBatch) error {
	if err := v.e.Bind(rec); err != nil {
		return err
	}
	for c, n := range v.e.cols {
		v.fns[c] = v.bindColumn(c, n, rec.Column(c))
	}
	return nil
}

// Row returns row i of the bound record batch as a new map of its columns.
func (v *Values) Row(i int) map[string]any {
	m := make(map[string]any, len(v.fns))
	for c, fn := range v.fns {
		m[v.names[c]] = fn(i)
	}
	return m
}

// bindColumn returns the value function of column c: direct for the common
// scalar types, through the column's canonical text for the others.
func (v *Values) bindColumn(c int, n *node, arr arrow.Array) valueFn {
	var fn valueFn
	switch n.t.Kind {
	case types.KindBoolean:
		if a, ok := arr.(*array.Boolean); ok {
			fn = func(i int) any { return a.Value(i) }
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		switch a := arr.(type) {
		case *array.Int8:
			fn = func(i int) any { return v.ints.Box(int64(a.Value(i))) }
		case *array.Int16:
			fn = func(i int) any { return v.ints.Box(int64(a.Value(i))) }
		case *array.Int32:
			fn = func(i int) any { return v.ints.Box(int64(a.Value(i))) }
		case *array.Int64:
			fn = func(i int) any { return v.ints.Box(a.Value(i)) }
		}
	case types.KindChar, types.KindString:
		if a, ok := arr.(*array.String); ok {
			fn = v.stringColumn(c, a)
		}
	}
	if fn == nil {
		fn = func(i int) any { return v.fromText(c, i) }
	}
	if arr.NullN() == 0 {
		return fn
	}
	return func(i int) any {
		if arr.IsNull(i) {
			return nil
		}
		return fn(i)
	}
}

// stringColumn returns the value function of a string column. Its values
// point into the batch's buffers, which are released (and may be reused)
// with the batch, so each is copied into the builder's own text; when the
// column is all ASCII (checked once per batch) no value needs a UTF-8 check.
func (v *Values) stringColumn(c int, a *array.String) valueFn {
	ascii := a.Len() > 0 && isASCII(a.ValueBytes()) // an empty array may have no offsets
	return func(i int) any {
		if s := a.Value(i); ascii || utf8.ValidString(s) {
			return v.strs.Box(v.text.String(unsafe.Slice(unsafe.StringData(s), len(s))))
		}
		return v.fromText(c, i)
	}
}

// fromText renders the canonical JSON of column c at row i and returns the
// value it decodes to.
func (v *Values) fromText(c, i int) any {
	v.scratch = v.e.bound[c](v.scratch[:0], i)
	t := v.scratch
	switch {
	case len(t) == 0:
		return nil
	case string(t) == "null":
		return nil
	case string(t) == "true":
		return true
	case string(t) == "false":
		return false
	case t[0] == '"' && bytes.IndexByte(t, '\\') < 0:
		return v.strs.Box(v.text.String(t[1 : len(t)-1]))
	case t[0] == '-' || (t[0] >= '0' && t[0] <= '9'):
		return v.numbers.Box(json.Number(v.text.String(t)))
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		// The encoder writes valid JSON; this would be a bug.
		panic(fmt.Sprintf("jsonrow: decoding own output %q: %v", t, err))
	}
	return out
}
