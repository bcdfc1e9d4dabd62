package types

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ParseSchemaJSON parses Fluss's schema JSON ({"version":1,"columns":[…],
// "primary_key":[…],…}). Primary-key columns are forced NOT NULL, as Fluss
// does when it builds a schema.
func ParseSchemaJSON(b []byte) (*Schema, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("schema JSON: %w", err)
	}
	s, err := parseSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("schema JSON: %w", err)
	}
	return s, nil
}

// MarshalJSON writes s as Fluss's schema JSON.
func (s *Schema) MarshalJSON() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s.AppendJSON(nil), nil
}

// UnmarshalJSON parses Fluss's schema JSON into s.
func (s *Schema) UnmarshalJSON(b []byte) error {
	v, err := ParseSchemaJSON(b)
	if err != nil {
		return err
	}
	*s = *v
	return nil
}

// AppendJSON appends s as Fluss's schema JSON to dst (no validation).
func (s *Schema) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"version":1,"columns":[`...)
	for i, c := range s.Columns {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = appendJSONString(dst, c.Name)
		dst = append(dst, `,"data_type":`...)
		dst = c.Type.AppendJSON(dst)
		if c.Comment != "" {
			dst = append(dst, `,"comment":`...)
			dst = appendJSONString(dst, c.Comment)
		}
		if len(c.AggFunction) > 0 {
			dst = append(dst, `,"agg_function":`...)
			dst = appendCompact(dst, c.AggFunction)
		}
		if s.HasColumnIDs {
			dst = append(dst, `,"id":`...)
			dst = strconv.AppendInt(dst, int64(c.ID), 10)
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if len(s.PrimaryKey) > 0 {
		dst = append(dst, `,"primary_key":`...)
		dst = appendStringArray(dst, s.PrimaryKey)
	}
	if len(s.AutoIncrementColumns) > 0 {
		dst = append(dst, `,"auto_increment_column":`...)
		dst = appendStringArray(dst, s.AutoIncrementColumns)
	}
	if s.HasColumnIDs {
		dst = append(dst, `,"highest_field_id":`...)
		dst = strconv.AppendInt(dst, int64(s.HighestFieldID), 10)
	}
	return append(dst, '}')
}

func parseSchema(raw json.RawMessage) (*Schema, error) {
	obj, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(obj); err != nil {
		return nil, err
	}
	cv, ok := obj["columns"]
	if !ok || isNull(cv) {
		return nil, fmt.Errorf("missing member \"columns\"")
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(cv, &raws); err != nil {
		return nil, fmt.Errorf("member \"columns\": %w", err)
	}
	s := &Schema{Columns: make([]Column, 0, len(raws))}
	withID, withoutID := false, false
	for i, r := range raws {
		c, hasID, err := parseColumn(r, i)
		if err != nil {
			return nil, err
		}
		if hasID {
			withID = true
		} else {
			withoutID = true
		}
		s.Columns = append(s.Columns, c)
	}
	if withID && withoutID {
		return nil, fmt.Errorf("either every column or none must have an id")
	}
	s.HasColumnIDs = withID
	if v, ok := obj["primary_key"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &s.PrimaryKey); err != nil {
			return nil, fmt.Errorf("member \"primary_key\": %w", err)
		}
		if len(s.PrimaryKey) == 0 {
			s.PrimaryKey = nil
		}
	}
	if v, ok := obj["auto_increment_column"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &s.AutoIncrementColumns); err != nil {
			return nil, fmt.Errorf("member \"auto_increment_column\": %w", err)
		}
		if len(s.AutoIncrementColumns) == 0 {
			s.AutoIncrementColumns = nil
		}
	}
	// highest_field_id belongs with column ids: without them (servers
	// before 0.9) it is checked but not kept, as it is never written back.
	if _, ok := obj["highest_field_id"]; ok {
		id, err := requireInt(obj, "highest_field_id")
		if err != nil {
			return nil, err
		}
		if withID {
			s.HighestFieldID = int32(id)
		}
	} else if withID {
		s.HighestFieldID = highestID(s)
	}
	s.normalize()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// parseColumn parses column i of a schema's "columns"; hasID says whether
// it carries an id (without one, its id is its index).
func parseColumn(r json.RawMessage, i int) (c Column, hasID bool, err error) {
	co, err := parseObject(r)
	if err != nil {
		return c, false, fmt.Errorf("column %d: %w", i, err)
	}
	if err := requireMember(co, "name", &c.Name); err != nil {
		return c, false, fmt.Errorf("column %d: %w", i, err)
	}
	dt, ok := co["data_type"]
	if !ok || isNull(dt) {
		return c, false, fmt.Errorf("column %q: missing member \"data_type\"", c.Name)
	}
	if c.Type, err = parseDataType(dt, 0); err != nil {
		return c, false, fmt.Errorf("column %q: %w", c.Name, err)
	}
	if v, ok := co["comment"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &c.Comment); err != nil {
			return c, false, fmt.Errorf("column %q: member \"comment\": %w", c.Name, err)
		}
	}
	if v, ok := co["agg_function"]; ok && !isNull(v) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return c, false, fmt.Errorf("column %q: member \"agg_function\": %w", c.Name, err)
		}
		c.AggFunction = json.RawMessage(buf.Bytes())
	}
	if _, ok := co["id"]; !ok {
		c.ID = int32(i)
		return c, false, nil
	}
	id, err := requireInt(co, "id")
	if err != nil {
		return c, true, fmt.Errorf("column %q: %w", c.Name, err)
	}
	c.ID = int32(id)
	return c, true, nil
}

func highestID(s *Schema) int32 {
	h := int32(-1)
	var walk func(t DataType)
	walk = func(t DataType) {
		for _, f := range t.Fields {
			if t.HasFieldIDs && f.ID > h {
				h = f.ID
			}
			walk(f.Type)
		}
		if t.Elem != nil {
			walk(*t.Elem)
		}
		if t.Key != nil {
			walk(*t.Key)
		}
		if t.Value != nil {
			walk(*t.Value)
		}
	}
	for _, c := range s.Columns {
		if c.ID > h {
			h = c.ID
		}
		walk(c.Type)
	}
	return h
}
