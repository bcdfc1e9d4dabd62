package types

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// JSON member names of Fluss's DataTypeJsonSerde, ColumnJsonSerde,
// SchemaJsonSerde and TableDescriptorJsonSerde.
const (
	jsonVersion = 1
)

// ---------------------------------------------------------------------------
// DataType

// ParseDataTypeJSON parses a Fluss data type JSON object, e.g.
// {"type":"DECIMAL","precision":10,"scale":2,"nullable":false}.
func ParseDataTypeJSON(b []byte) (DataType, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return DataType{}, fmt.Errorf("data type JSON: %w", err)
	}
	t, err := parseDataType(raw, 0)
	if err != nil {
		return DataType{}, fmt.Errorf("data type JSON: %w", err)
	}
	return t, nil
}

// MarshalJSON writes t as Fluss's data type JSON.
func (t DataType) MarshalJSON() ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t.AppendJSON(nil), nil
}

// UnmarshalJSON parses Fluss's data type JSON into t.
func (t *DataType) UnmarshalJSON(b []byte) error {
	v, err := ParseDataTypeJSON(b)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// AppendJSON appends t as Fluss's data type JSON to dst (no validation).
func (t DataType) AppendJSON(dst []byte) []byte { return t.appendJSON(dst, 0) }

func (t DataType) appendJSON(dst []byte, depth int) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendJSONString(dst, t.Kind.RootName())
	if !t.Nullable {
		dst = append(dst, `,"nullable":false`...)
	}
	if depth > maxNestingDepth {
		return append(dst, '}')
	}
	switch t.Kind {
	case KindChar, KindBinary:
		dst = append(dst, `,"length":`...)
		dst = strconv.AppendInt(dst, int64(t.Length), 10)
	case KindDecimal:
		dst = append(dst, `,"precision":`...)
		dst = strconv.AppendInt(dst, int64(t.Precision), 10)
		dst = append(dst, `,"scale":`...)
		dst = strconv.AppendInt(dst, int64(t.Scale), 10)
	case KindTime, KindTimestamp, KindTimestampLTZ:
		dst = append(dst, `,"precision":`...)
		dst = strconv.AppendInt(dst, int64(t.Precision), 10)
	case KindArray:
		dst = append(dst, `,"element_type":`...)
		dst = ptrOrInvalid(t.Elem).appendJSON(dst, depth+1)
	case KindMap:
		dst = append(dst, `,"key_type":`...)
		dst = ptrOrInvalid(t.Key).appendJSON(dst, depth+1)
		dst = append(dst, `,"value_type":`...)
		dst = ptrOrInvalid(t.Value).appendJSON(dst, depth+1)
	case KindRow:
		dst = append(dst, `,"fields":[`...)
		for i, f := range t.Fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = appendJSONString(dst, f.Name)
			dst = append(dst, `,"field_type":`...)
			dst = f.Type.appendJSON(dst, depth+1)
			if f.Description != "" {
				dst = append(dst, `,"description":`...)
				dst = appendJSONString(dst, f.Description)
			}
			if t.HasFieldIDs {
				dst = append(dst, `,"field_id":`...)
				dst = strconv.AppendInt(dst, int64(f.ID), 10)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

func ptrOrInvalid(p *DataType) DataType {
	if p == nil {
		return DataType{}
	}
	return *p
}

func parseDataType(raw json.RawMessage, depth int) (DataType, error) {
	if depth > maxNestingDepth {
		return DataType{}, fmt.Errorf("type nesting deeper than %d", maxNestingDepth)
	}
	obj, err := parseObject(raw)
	if err != nil {
		return DataType{}, err
	}
	var name string
	if err := requireMember(obj, "type", &name); err != nil {
		return DataType{}, err
	}
	kind, ok := KindFromRootName(name)
	if !ok {
		return DataType{}, fmt.Errorf("unknown type %q", name)
	}
	t := DataType{Kind: kind, Nullable: true}
	if v, ok := obj["nullable"]; ok {
		if err := json.Unmarshal(v, &t.Nullable); err != nil {
			return DataType{}, fmt.Errorf("%s: member \"nullable\": %w", name, err)
		}
	}
	switch kind {
	case KindChar, KindBinary:
		if t.Length, err = requireInt(obj, "length"); err != nil {
			return DataType{}, fmt.Errorf("%s: %w", name, err)
		}
	case KindDecimal:
		if t.Precision, err = requireInt(obj, "precision"); err != nil {
			return DataType{}, fmt.Errorf("%s: %w", name, err)
		}
		if t.Scale, err = requireInt(obj, "scale"); err != nil {
			return DataType{}, fmt.Errorf("%s: %w", name, err)
		}
	case KindTime, KindTimestamp, KindTimestampLTZ:
		if t.Precision, err = requireInt(obj, "precision"); err != nil {
			return DataType{}, fmt.Errorf("%s: %w", name, err)
		}
	case KindArray:
		e, err := parseNested(obj, "element_type", depth)
		if err != nil {
			return DataType{}, fmt.Errorf("ARRAY: %w", err)
		}
		t.Elem = &e
	case KindMap:
		k, err := parseNested(obj, "key_type", depth)
		if err != nil {
			return DataType{}, fmt.Errorf("MAP: %w", err)
		}
		v, err := parseNested(obj, "value_type", depth)
		if err != nil {
			return DataType{}, fmt.Errorf("MAP: %w", err)
		}
		t.Key, t.Value = &k, &v
	case KindRow:
		if err := parseRowFields(&t, obj, depth); err != nil {
			return DataType{}, fmt.Errorf("ROW: %w", err)
		}
	}
	if err := t.validate(depth); err != nil {
		return DataType{}, err
	}
	return t, nil
}

func parseNested(obj map[string]json.RawMessage, member string, depth int) (DataType, error) {
	v, ok := obj[member]
	if !ok || isNull(v) {
		return DataType{}, fmt.Errorf("missing member %q", member)
	}
	t, err := parseDataType(v, depth+1)
	if err != nil {
		return DataType{}, fmt.Errorf("%s: %w", member, err)
	}
	return t, nil
}

func parseRowFields(t *DataType, obj map[string]json.RawMessage, depth int) error {
	v, ok := obj["fields"]
	if !ok || isNull(v) {
		return fmt.Errorf("missing member \"fields\"")
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		return fmt.Errorf("member \"fields\": %w", err)
	}
	t.Fields = make([]Field, 0, len(raws))
	withID, withoutID := false, false
	for i, r := range raws {
		fo, err := parseObject(r)
		if err != nil {
			return fmt.Errorf("field %d: %w", i, err)
		}
		var f Field
		if err := requireMember(fo, "name", &f.Name); err != nil {
			return fmt.Errorf("field %d: %w", i, err)
		}
		if f.Type, err = parseNested(fo, "field_type", depth); err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
		if d, ok := fo["description"]; ok && !isNull(d) {
			if err := json.Unmarshal(d, &f.Description); err != nil {
				return fmt.Errorf("field %q: member \"description\": %w", f.Name, err)
			}
		}
		if _, ok := fo["field_id"]; ok {
			withID = true
			id, err := requireInt(fo, "field_id")
			if err != nil {
				return fmt.Errorf("field %q: %w", f.Name, err)
			}
			f.ID = int32(id)
		} else {
			withoutID = true
			f.ID = int32(i)
		}
		t.Fields = append(t.Fields, f)
	}
	if withID && withoutID {
		return fmt.Errorf("either every field or none must have a field_id")
	}
	t.HasFieldIDs = withID
	return nil
}

// ---------------------------------------------------------------------------
// helpers

func parseObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if isNull(raw) {
		return nil, fmt.Errorf("expected a JSON object, got null")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("expected a JSON object: %w", err)
	}
	return obj, nil
}

func isNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

func requireMember(obj map[string]json.RawMessage, name string, dst *string) error {
	v, ok := obj[name]
	if !ok || isNull(v) {
		return fmt.Errorf("missing member %q", name)
	}
	if err := json.Unmarshal(v, dst); err != nil {
		return fmt.Errorf("member %q: %w", name, err)
	}
	return nil
}

func requireInt(obj map[string]json.RawMessage, name string) (int, error) {
	v, ok := obj[name]
	if !ok || isNull(v) {
		return 0, fmt.Errorf("missing member %q", name)
	}
	var n int64
	if err := json.Unmarshal(v, &n); err != nil {
		return 0, fmt.Errorf("member %q: %w", name, err)
	}
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("member %q: %d out of the int32 range", name, n)
	}
	return int(n), nil
}

func checkVersion(obj map[string]json.RawMessage) error {
	if _, ok := obj["version"]; !ok {
		return nil
	}
	v, err := requireInt(obj, "version")
	if err != nil {
		return err
	}
	if v != jsonVersion {
		return fmt.Errorf("unsupported JSON version %d (want %d)", v, jsonVersion)
	}
	return nil
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

func appendCompact(dst []byte, raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(dst, "null"...)
	}
	return append(dst, buf.Bytes()...)
}

func appendStringArray(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

func appendStringMap(dst []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = appendJSONString(dst, m[k])
	}
	return append(dst, '}')
}
