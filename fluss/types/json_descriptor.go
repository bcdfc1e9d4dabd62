package types

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// ParseTableDescriptorJSON parses Fluss's table descriptor JSON.
func ParseTableDescriptorJSON(b []byte) (*TableDescriptor, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("table descriptor JSON: %w", err)
	}
	d, err := parseDescriptor(raw)
	if err != nil {
		return nil, fmt.Errorf("table descriptor JSON: %w", err)
	}
	return d, nil
}

// MarshalJSON writes d as Fluss's table descriptor JSON, with every member
// the 0.8 and 0.9 coordinators require on input (partition_key, properties,
// custom_properties; bucket_key whenever bucket_count is set).
func (d *TableDescriptor) MarshalJSON() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d.AppendJSON(nil), nil
}

// UnmarshalJSON parses Fluss's table descriptor JSON into d.
func (d *TableDescriptor) UnmarshalJSON(b []byte) error {
	v, err := ParseTableDescriptorJSON(b)
	if err != nil {
		return err
	}
	*d = *v
	return nil
}

// Validate checks the schema and that partition and bucket keys are columns.
func (d *TableDescriptor) Validate() error {
	if err := d.Schema.Validate(); err != nil {
		return err
	}
	for _, k := range d.PartitionKeys {
		if d.Schema.ColumnIndex(k) < 0 {
			return fmt.Errorf("partition key %q is not a column", k)
		}
	}
	for _, k := range d.BucketKeys {
		if d.Schema.ColumnIndex(k) < 0 {
			return fmt.Errorf("bucket key %q is not a column", k)
		}
	}
	if d.BucketCount < 0 {
		return fmt.Errorf("negative bucket count %d", d.BucketCount)
	}
	return nil
}

// AppendJSON appends d as Fluss's table descriptor JSON to dst (no validation).
func (d *TableDescriptor) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"version":1,"schema":`...)
	dst = d.Schema.AppendJSON(dst)
	if d.Comment != "" {
		dst = append(dst, `,"comment":`...)
		dst = appendJSONString(dst, d.Comment)
	}
	dst = append(dst, `,"partition_key":`...)
	dst = appendStringArray(dst, d.PartitionKeys)
	if d.BucketKeys != nil || d.BucketCount > 0 {
		dst = append(dst, `,"bucket_key":`...)
		dst = appendStringArray(dst, d.BucketKeys)
	}
	if d.BucketCount > 0 {
		dst = append(dst, `,"bucket_count":`...)
		dst = strconv.AppendInt(dst, int64(d.BucketCount), 10)
	}
	dst = append(dst, `,"properties":`...)
	dst = appendStringMap(dst, d.Properties)
	dst = append(dst, `,"custom_properties":`...)
	dst = appendStringMap(dst, d.CustomProperties)
	return append(dst, '}')
}

func parseDescriptor(raw json.RawMessage) (*TableDescriptor, error) {
	obj, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	if err := checkVersion(obj); err != nil {
		return nil, err
	}
	sv, ok := obj["schema"]
	if !ok || isNull(sv) {
		return nil, fmt.Errorf("missing member \"schema\"")
	}
	s, err := parseSchema(sv)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	d := &TableDescriptor{Schema: *s}
	if v, ok := obj["comment"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &d.Comment); err != nil {
			return nil, fmt.Errorf("member \"comment\": %w", err)
		}
	}
	if v, ok := obj["partition_key"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &d.PartitionKeys); err != nil {
			return nil, fmt.Errorf("member \"partition_key\": %w", err)
		}
		if len(d.PartitionKeys) == 0 {
			d.PartitionKeys = nil
		}
	}
	if v, ok := obj["bucket_key"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &d.BucketKeys); err != nil {
			return nil, fmt.Errorf("member \"bucket_key\": %w", err)
		}
		if d.BucketKeys == nil {
			d.BucketKeys = []string{}
		}
	}
	if _, ok := obj["bucket_count"]; ok {
		n, err := requireInt(obj, "bucket_count")
		if err != nil {
			return nil, err
		}
		d.BucketCount = int32(n)
	}
	if v, ok := obj["properties"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &d.Properties); err != nil {
			return nil, fmt.Errorf("member \"properties\": %w", err)
		}
	}
	if v, ok := obj["custom_properties"]; ok && !isNull(v) {
		if err := json.Unmarshal(v, &d.CustomProperties); err != nil {
			return nil, fmt.Errorf("member \"custom_properties\": %w", err)
		}
	}
	if err := d.Validate(); err != nil {
		return nil, err
	}
	return d, nil
}
