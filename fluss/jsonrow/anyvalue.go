package jsonrow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// AnyWriter serialises structured values (what encoding/json decodes JSON
// into, what Bloblang mappings produce) as JSON with the canonical value
// forms of docs/json-mapping.md: object keys sorted (as encoding/json sorts
// them), no whitespace, strings escaped as appendString does (so neither
// '<', '>', '&' nor U+2028 are escaped), float64 and float32 in their
// shortest ECMAScript text with NaN and the infinities as the strings
// "NaN", "Infinity", "-Infinity", []byte as padded base64, json.Number as
// written (once checked). Other types go through encoding/json.
//
// It keeps a scratch slice for sorting keys; use one per goroutine.
type AnyWriter struct {
	keys []string
	// last is the sorted key set of the last top-level object, reused
	// while objects have the same keys (rows of one table); lastEnc holds
	// each key written as it precedes its value ({"a": then ,"b": ...),
	// key j at lastEnc[lastAt[j]:lastAt[j+1]]; vals the values of the
	// object being written, in that order.
	last    []string
	lastEnc []byte
	lastAt  []int
	vals    []any
	depth   int // of the object being written
}

// Append appends the JSON of v to dst.
func (w *AnyWriter) Append(dst []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(dst, null...), nil
	case string:
		return appendString(dst, t), nil
	case map[string]any:
		return w.appendObject(dst, t)
	case []any:
		dst = append(dst, '[')
		for j, e := range t {
			if j > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = w.Append(dst, e); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case bool:
		if t {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case json.Number:
		if !validNumber(string(t)) {
			return dst, fmt.Errorf("invalid number literal %q", string(t))
		}
		return append(dst, t...), nil
	case float64:
		return appendFloat(dst, t, 64), nil
	case float32:
		return appendFloat(dst, float64(t), 32), nil
	case []byte:
		return appendBase64(dst, t), nil
	}
	if d, ok := appendInteger(dst, v); ok {
		return d, nil
	}
	return appendOther(dst, v)
}

// sameKeys reports whether m has exactly the keys of w.last, and if so
// leaves m's values in w.vals in that order.
func (w *AnyWriter) sameKeys(m map[string]any) bool {
	if len(m) != len(w.last) || len(m) == 0 {
		return false
	}
	w.vals = w.vals[:0]
	for _, k := range w.last {
		v, ok := m[k]
		if !ok {
			clear(w.vals)
			return false
		}
		w.vals = append(w.vals, v)
	}
	return true
}

// remember makes keys (sorted) the key set of the next top-level objects.
func (w *AnyWriter) remember(keys []string) {
	w.last = append(w.last[:0], keys...)
	w.lastEnc, w.lastAt = w.lastEnc[:0], append(w.lastAt[:0], 0)
	for j, k := range keys {
		if j == 0 {
			w.lastEnc = append(w.lastEnc, '{')
		} else {
			w.lastEnc = append(w.lastEnc, ',')
		}
		w.lastEnc = append(appendString(w.lastEnc, k), ':')
		w.lastAt = append(w.lastAt, len(w.lastEnc))
	}
}

// appendObject writes a map with its keys in sorted order.
func (w *AnyWriter) appendObject(dst []byte, m map[string]any) ([]byte, error) {
	if w.depth == 0 && w.sameKeys(m) {
		return w.appendLast(dst)
	}
	start := len(w.keys)
	for k := range m {
		w.keys = append(w.keys, k)
	}
	keys := w.keys[start:]
	slices.Sort(keys)
	if w.depth == 0 {
		w.remember(keys)
	}
	w.depth++
	dst = append(dst, '{')
	var err error
	for j, k := range keys {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		// Nested objects append their keys after ours and cut back to
		// where they started, so keys stays intact.
		if dst, err = w.Append(dst, m[k]); err != nil {
			break
		}
	}
	w.depth--
	clear(w.keys[start:])
	w.keys = w.keys[:start]
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendLast writes a top-level object with the keys of the last one, its
// values in w.vals (sameKeys): the keys come encoded from lastEnc.
func (w *AnyWriter) appendLast(dst []byte) ([]byte, error) {
	w.depth++
	defer func() { w.depth-- }()
	var err error
	for j, v := range w.vals {
		dst = append(dst, w.lastEnc[w.lastAt[j]:w.lastAt[j+1]]...)
		if dst, err = w.Append(dst, v); err != nil {
			break
		}
	}
	clear(w.vals)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendInteger writes the Go integer types.
func appendInteger(dst []byte, v any) ([]byte, bool) {
	switch t := v.(type) {
	case int64:
		return strconv.AppendInt(dst, t, 10), true
	case int:
		return strconv.AppendInt(dst, int64(t), 10), true
	case int32:
		return strconv.AppendInt(dst, int64(t), 10), true
	case int16:
		return strconv.AppendInt(dst, int64(t), 10), true
	case int8:
		return strconv.AppendInt(dst, int64(t), 10), true
	case uint64:
		return strconv.AppendUint(dst, t, 10), true
	case uint:
		return strconv.AppendUint(dst, uint64(t), 10), true
	case uint32:
		return strconv.AppendUint(dst, uint64(t), 10), true
	case uint16:
		return strconv.AppendUint(dst, uint64(t), 10), true
	case uint8:
		return strconv.AppendUint(dst, uint64(t), 10), true
	}
	return dst, false
}

// appendOther writes any other value the way Benthos would: through
// encoding/json, without HTML escaping (time.Time as RFC 3339 text).
func appendOther(dst []byte, v any) ([]byte, error) {
	if t, ok := v.(time.Time); ok {
		return appendString(dst, t.Format(time.RFC3339Nano)), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, fmt.Errorf("serialising a %T as JSON: %w", v, err)
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// validNumber reports whether s is a JSON number.
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		if j := digits(s, i+1); j > i+1 {
			i = j
		} else {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
