package jsonrow

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// The structured path: values as encoding/json or Bloblang give them,
// read the way AppendJSON reads their JSON (AnyWriter's text).

// anyTopRow reads the row of AppendStructured.
func (b *RowBuilder) anyTopRow(v any, keysOnly bool) error {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return &DecodeError{Reason: "null, want an object (a row)"}
		}
		return &DecodeError{Value: b.anyText(v), Reason: "is " + anyKind(v) + ", want an object (a row)"}
	}
	return b.anyRow(b.root, 0, m, keysOnly)
}

// anyRow reads the fields of n from m into slots from base on.
func (b *RowBuilder) anyRow(n *dnode, base int32, m map[string]any, keysOnly bool) error {
	top := n == b.root
	found := 0
	for f, fn := range n.fields {
		v, ok := m[n.names[f]]
		skip := top && keysOnly && !b.isKey[f]
		if !ok {
			if !fn.nullable && !skip {
				return inField(&DecodeError{Type: fn.typ, Reason: "missing, and the type is NOT NULL"}, n, f, top)
			}
			continue
		}
		found++
		if skip {
			continue
		}
		if err := b.anyValue(fn, base+int32(f), v); err != nil {
			return inField(err, n, f, top)
		}
	}
	if found == len(m) || b.cfg.ignoreUnknown {
		return nil
	}
	var unknown []string
	for k := range m {
		if _, ok := n.index[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	return unknownKey(n, []byte(slices.Min(unknown)), top)
}

// anyValue reads v into slot si for n.
func (b *RowBuilder) anyValue(n *dnode, si int32, v any) error {
	err := b.anyScalar(n, si, v)
	if err == errNotScalar {
		err = b.anyNested(n, si, v)
	}
	if err == nil {
		return nil
	}
	if e, ok := err.(*DecodeError); ok && e.Type == "" {
		e.Type = n.typ
		if e.showValue {
			e.Value = b.anyText(v)
		}
	}
	return err
}

// errNotScalar sends anyValue on to anyNested.
var errNotScalar = errors.New("not a scalar")

// anyScalar reads the scalar Go values.
func (b *RowBuilder) anyScalar(n *dnode, si int32, v any) error {
	switch x := v.(type) {
	case nil:
		if !n.nullable {
			return nullErr()
		}
		return nil
	case string:
		return b.setString(n, si, unsafe.Slice(unsafe.StringData(x), len(x)))
	case bool:
		return b.setBool(n, si, x)
	case json.Number:
		if !validNumber(string(x)) {
			return bad("is not a valid JSON number")
		}
		return b.setNumber(n, si, unsafe.Slice(unsafe.StringData(string(x)), len(x)))
	case float64:
		return b.anyFloat(n, si, x, 64)
	case float32:
		return b.anyFloat(n, si, float64(x), 32)
	case []byte:
		return b.anyBytes(n, si, x)
	case time.Time:
		return b.anyTime(n, si, x)
	}
	if i, u, ok := anyInt(v); ok {
		return b.anyInteger(n, si, i, u)
	}
	return errNotScalar
}

// anyInt returns the value of a Go integer: as an int64, or when it is an
// unsigned value beyond int64, in u (u == 0 otherwise).
func anyInt(v any) (i int64, u uint64, ok bool) {
	switch x := v.(type) {
	case int:
		return int64(x), 0, true
	case int64:
		return x, 0, true
	case int32:
		return int64(x), 0, true
	case int16:
		return int64(x), 0, true
	case int8:
		return int64(x), 0, true
	case uint:
		return anyUint(uint64(x))
	case uint64:
		return anyUint(x)
	case uint32:
		return int64(x), 0, true
	case uint16:
		return int64(x), 0, true
	case uint8:
		return int64(x), 0, true
	}
	return 0, 0, false
}

func anyUint(x uint64) (int64, uint64, bool) {
	if x > math.MaxInt64 {
		return 0, x, true
	}
	return int64(x), 0, true
}

// anyInteger reads a Go integer (u set when beyond int64).
func (b *RowBuilder) anyInteger(n *dnode, si int32, i int64, u uint64) error {
	switch n.kind {
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		if u != 0 || i < n.lo || i > n.hi {
			return bad(fmt.Sprintf("is out of range [%d, %d]", n.lo, n.hi))
		}
		b.setScalar(si, i, 0)
		return nil
	}
	b.tmp = b.tmp[:0]
	if u != 0 {
		b.tmp = strconv.AppendUint(b.tmp, u, 10)
	} else {
		b.tmp = strconv.AppendInt(b.tmp, i, 10)
	}
	return b.setNumber(n, si, b.tmp)
}

// anyFloat reads a float64 or float32 (bits): as the JSON AnyWriter
// writes for it, its shortest text or "NaN", "Infinity", "-Infinity".
func (b *RowBuilder) anyFloat(n *dnode, si int32, f float64, bitSize int) error {
	switch {
	case n.kind == types.KindDouble && bitSize == 64:
		b.setScalar(si, int64(math.Float64bits(f)), 0)
		return nil
	case n.kind == types.KindFloat && bitSize == 32:
		b.setScalar(si, int64(math.Float32bits(float32(f))), 0)
		return nil
	}
	b.tmp = appendFloat(b.tmp[:0], f, bitSize)
	if b.tmp[0] == '"' {
		return b.setString(n, si, b.tmp[1:len(b.tmp)-1])
	}
	return b.setNumber(n, si, b.tmp)
}

// anyBytes reads a []byte: the bytes of BINARY and BYTES, else its base64
// text (what AnyWriter writes for it).
func (b *RowBuilder) anyBytes(n *dnode, si int32, x []byte) error {
	if n.kind != types.KindBinary && n.kind != types.KindBytes {
		b.tmp = base64.StdEncoding.AppendEncode(b.tmp[:0], x)
		return b.setString(n, si, b.tmp)
	}
	if n.kind == types.KindBinary && len(x) != n.length {
		return badLength(len(x), n.length)
	}
	start := len(b.text)
	b.text = append(b.text, x...)
	b.setScalar(si, int64(start), int64(len(b.text)))
	return nil
}

// anyTime reads a time.Time: the instant for TIMESTAMP_LTZ; the wall clock
// in its location for TIMESTAMP, DATE and TIME; else its RFC 3339 text.
func (b *RowBuilder) anyTime(n *dnode, si int32, t time.Time) error {
	_, off := t.Zone()
	local, nanos := t.Unix()+int64(off), int64(t.Nanosecond())
	switch n.kind {
	case types.KindTimestampLTZ:
		return b.setTimestamp(n, si, t.Unix(), nanos)
	case types.KindTimestamp:
		return b.setTimestamp(n, si, local, nanos)
	case types.KindDate:
		days, _ := floorDiv(local, 86400)
		return b.setDate(si, days)
	case types.KindTime:
		_, sec := floorDiv(local, 86400)
		b.setTime(n, si, sec*1000+nanos/1_000_000)
		return nil
	}
	b.tmp = t.AppendFormat(b.tmp[:0], time.RFC3339Nano)
	return b.setString(n, si, b.tmp)
}

// anyNested reads []any and map[string]any values.
func (b *RowBuilder) anyNested(n *dnode, si int32, v any) error {
	switch x := v.(type) {
	case []any:
		switch n.kind {
		case types.KindArray:
			return b.anyArray(n, si, x)
		case types.KindMap:
			return b.anyEntries(n, si, x)
		}
	case map[string]any:
		switch n.kind {
		case types.KindRow:
			base := b.newSlots(len(n.fields))
			b.setList(si, base, len(n.fields))
			return b.anyRow(n, base, x, false)
		case types.KindMap:
			return b.anyMapObject(n, si, x)
		}
	default:
		return &DecodeError{Reason: fmt.Sprintf("is a Go %T, which has no JSON form here", v)}
	}
	return bad("is " + anyKind(v) + ", " + n.want)
}

// anyArray reads an ARRAY.
func (b *RowBuilder) anyArray(n *dnode, si int32, x []any) error {
	var first, prev int32
	for k, v := range x {
		e := b.newSlots(1)
		if k == 0 {
			first = e
		} else {
			b.tape[prev].next = e
		}
		prev = e
		if err := b.anyValue(n.elem, e, v); err != nil {
			return inPath(err, "["+strconv.Itoa(k)+"]")
		}
	}
	b.setList(si, first, len(x))
	return nil
}

// anyEntries reads a MAP given as an array of {"key","value"} maps.
func (b *RowBuilder) anyEntries(n *dnode, si int32, x []any) error {
	var first, prev int32
	for k, v := range x {
		m, ok := v.(map[string]any)
		if !ok {
			return inPath(&DecodeError{Value: b.anyText(v), Reason: "is " + anyKind(v) + `, want a {"key":…,"value":…} object`}, "["+strconv.Itoa(k)+"]")
		}
		e := b.newSlots(2)
		if k == 0 {
			first = e
		} else {
			b.tape[prev].next = e
		}
		prev = e
		if err := b.anyEntry(n, e, m); err != nil {
			return inPath(err, "["+strconv.Itoa(k)+"]")
		}
	}
	b.setList(si, first, len(x))
	b.dedupe(n, si)
	return nil
}

// anyEntry reads one {"key","value"} map into slots e and e+1.
func (b *RowBuilder) anyEntry(n *dnode, e int32, m map[string]any) error {
	k, ok := m["key"]
	if !ok {
		return inPath(&DecodeError{Type: n.key.typ, Reason: "missing, and a MAP key is NOT NULL"}, ".key")
	}
	if err := b.anyValue(n.key, e, k); err != nil {
		return inPath(err, ".key")
	}
	v, ok := m["value"]
	if !ok && !n.val.nullable {
		return inPath(&DecodeError{Type: n.val.typ, Reason: "missing, and the type is NOT NULL"}, ".value")
	}
	return inPath(b.anyValue(n.val, e+1, v), ".value")
}

// anyMapObject reads a MAP given as a map, in key order (the order its
// JSON has).
func (b *RowBuilder) anyMapObject(n *dnode, si int32, x map[string]any) error {
	mark := len(b.sorted)
	for k := range x {
		b.sorted = append(b.sorted, k)
	}
	defer func() {
		clear(b.sorted[mark:])
		b.sorted = b.sorted[:mark]
	}()
	keys := b.sorted[mark:]
	slices.Sort(keys)
	var first, prev int32
	for k, key := range keys {
		e := b.newSlots(2)
		if k == 0 {
			first = e
		} else {
			b.tape[prev].next = e
		}
		prev = e
		kb := unsafe.Slice(unsafe.StringData(key), len(key))
		if err := b.setString(n.key, e, kb); err != nil {
			return inPath(keyErr(err, n, kb), ".key")
		}
		if err := b.anyValue(n.val, e+1, x[key]); err != nil {
			return inPath(err, "["+shorten(key)+"]")
		}
	}
	b.setList(si, first, len(keys))
	if !n.objectKeys {
		b.dedupe(n, si)
	}
	return nil
}

// anyText is the JSON text of v for an error.
func (b *RowBuilder) anyText(v any) string {
	if n, ok := v.(json.Number); ok && !validNumber(string(n)) {
		return shorten(string(n))
	}
	t, err := b.aw.Append(nil, v)
	if err != nil {
		return fmt.Sprintf("(a Go %T)", v)
	}
	return shorten(string(t))
}

// anyKind names the JSON kind of a structured value.
func anyKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string, []byte, time.Time:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
