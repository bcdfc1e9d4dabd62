package records

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// KV values (what a primary-key table stores per key in its RocksDB KV
// store, and so in its KV snapshots): the schema id the row was written
// with, an int16 little-endian, then one row in the table's table.kv.format,
// COMPACTED (the default) or INDEXED (ValueEncoder/ValueDecoder in the Java
// server). Fluss 1.0 may put a tag before the schema id (KVValueLayout).

// KVValueHeaderSize is the size of a KV value's schema id.
const KVValueHeaderSize = 2

// KVValueLayout is the physical layout of the values in a primary-key
// table's RocksDB store, and so in its KV snapshots: the table property
// table.kv.value-layout-version of Fluss 1.0 (apache/fluss#3621, row TTL),
// which the server sets itself; tables without it use KVValueLayoutPlain.
// The layout is storage-only: lookup replies and the changelog carry plain
// rows whatever the table's layout.
type KVValueLayout int8

// The KV value layouts of Fluss 1.0.
const (
	// KVValueLayoutPlain (version 1): the int16 little-endian schema id,
	// then the row.
	KVValueLayoutPlain KVValueLayout = 1
	// KVValueLayoutTagged (version 2, tables that need a per-row tag, such
	// as row TTL's reference timestamp): a big-endian int64 tag, then the
	// plain layout. The decoder skips the tag.
	KVValueLayoutTagged KVValueLayout = 2
)

// kvValueTagSize is the size of the tag of KVValueLayoutTagged.
const kvValueTagSize = 8

// ParseKVValueLayout parses a table.kv.value-layout-version value: "" (the
// property is absent) or 1 is KVValueLayoutPlain, 2 is KVValueLayoutTagged;
// the layout names PLAIN and TAGGED are accepted too (any case). Other
// values are an error naming the property.
func ParseKVValueLayout(s string) (KVValueLayout, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "1", "PLAIN":
		return KVValueLayoutPlain, nil
	case "2", "TAGGED":
		return KVValueLayoutTagged, nil
	}
	return 0, fmt.Errorf("fluss/records: unknown %s %q (this reader knows 1, PLAIN, and 2, TAGGED)", types.PropKVValueLayout, s)
}

// String returns the layout's name: "PLAIN" or "TAGGED".
func (l KVValueLayout) String() string {
	switch l {
	case KVValueLayoutPlain:
		return "PLAIN"
	case KVValueLayoutTagged:
		return "TAGGED"
	}
	return fmt.Sprintf("KVValueLayout(%d)", int8(l))
}

// WithKVValueLayout sets the layout of the values a ValueDecoder reads
// (default KVValueLayoutPlain). Log decoders ignore it.
func WithKVValueLayout(l KVValueLayout) Option { return func(c *config) { c.valueLayout = l } }

// ParseKVFormat maps a table.kv.format value (any case; "" is the default,
// COMPACTED) to the LogFormat of the same row encoding.
func ParseKVFormat(s string) (LogFormat, error) {
	switch f := LogFormat(strings.ToUpper(strings.TrimSpace(s))); f {
	case "":
		return LogFormatCompacted, nil
	case LogFormatIndexed, LogFormatCompacted:
		return f, nil
	}
	return "", fmt.Errorf("fluss/records: unknown kv format %q (want COMPACTED or INDEXED)", s)
}

// ValueDecoder decodes KV values into Arrow record batches of a reader's
// schema: the table schema of one schema id (the latest, usually), projected
// with WithProjection (indices into that schema, in output order). Values of
// other schema ids are read with their own schema and mapped to the reader's
// columns by column id (by name when a schema has no ids), as the log
// scanner does: a column the value's schema lacks (added later) is null, a
// column it has with another type is an error.
//
// Of the decoder Options, WithAllocator, WithProjection, WithKVValueLayout
// and WithMaxBatchBytes (the Arrow bytes of the rows between two Flushes)
// apply; the others are ignored. A ValueDecoder is not safe for concurrent
// use.
type ValueDecoder struct {
	lookup TypeLookup
	format LogFormat
	cfg    config
	schema *types.Schema // the reader's schema, unprojected
	proj   []int         // output column -> index in schema
	out    *arrow.Schema
	dec    rowDec        // its budget counts the Arrow bytes since the last Flush
	cols   []*colBuilder // per output column
	rows   int64
	plans  map[int16]*valuePlan
	err    error // sticky: a row failed halfway through the builders
}

// valuePlan reads the values of one schema id.
type valuePlan struct {
	specs []*fieldSpec  // per column of the value's schema
	cols  []*colBuilder // per column of the value's schema: its output builder or nil
	nvar  int           // variable-length columns (IndexedRow header)
	nulls []*colBuilder // output columns the value's schema lacks
}

// NewValueDecoder returns a decoder of the KV values of a table whose rows
// are in format (LogFormatCompacted or LogFormatIndexed, see ParseKVFormat),
// into records of schema id schemaID (looked up with lookup).
func NewValueDecoder(lookup TypeLookup, schemaID int16, format LogFormat, opts ...Option) (*ValueDecoder, error) {
	if lookup == nil {
		return nil, errors.New("fluss/records: NewValueDecoder needs a type lookup")
	}
	if !format.isRow() {
		return nil, fmt.Errorf("fluss/records: kv format %q is not a row format (want COMPACTED or INDEXED)", string(format))
	}
	cfg := config{mem: memory.DefaultAllocator, maxBytes: DefaultMaxBatchBytes, valueLayout: KVValueLayoutPlain}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxBytes <= 0 {
		return nil, fmt.Errorf("fluss/records: max batch bytes %d must be positive", cfg.maxBytes)
	}
	if cfg.valueLayout != KVValueLayoutPlain && cfg.valueLayout != KVValueLayoutTagged {
		return nil, fmt.Errorf("fluss/records: unknown kv value layout %v", cfg.valueLayout)
	}
	schema, err := lookup(schemaID)
	if err != nil {
		return nil, fmt.Errorf("fluss/records: schema id %d: %w", schemaID, err)
	}
	if schema == nil {
		return nil, fmt.Errorf("fluss/records: schema id %d: lookup returned no schema", schemaID)
	}
	d := &ValueDecoder{lookup: lookup, format: format, cfg: cfg, schema: schema, plans: map[int16]*valuePlan{},
		dec: rowDec{format: format, acc: rowBudget{limit: cfg.maxBytes}}}
	if err := d.initOutput(); err != nil {
		return nil, fmt.Errorf("fluss/records: schema id %d: %w", schemaID, err)
	}
	return d, nil
}

// initOutput checks the projection and builds the output schema and
// builders.
func (d *ValueDecoder) initOutput() error {
	d.proj = d.cfg.projection
	if d.proj == nil {
		d.proj = make([]int, len(d.schema.Columns))
		for i := range d.proj {
			d.proj[i] = i
		}
	}
	seen := map[int]bool{}
	fields := make([]arrow.Field, len(d.proj))
	specs := make([]*fieldSpec, len(d.proj))
	for j, i := range d.proj {
		if i < 0 || i >= len(d.schema.Columns) {
			return fmt.Errorf("projection column index %d out of range: the schema has %d columns", i, len(d.schema.Columns))
		}
		if seen[i] {
			return fmt.Errorf("projection names column index %d twice", i)
		}
		seen[i] = true
		c := &d.schema.Columns[i]
		f, err := types.ArrowField(c.Name, c.Type)
		if err != nil {
			return fmt.Errorf("column %q: %w", c.Name, err)
		}
		if specs[j], err = newFieldSpec(c.Name, c.Type, 0); err != nil {
			return fmt.Errorf("column %q: %w", c.Name, err)
		}
		fields[j] = f
	}
	// The fields the log path's Arrow schemas have (types.Schema.ArrowSchema).
	d.out = arrow.NewSchema(fields, nil)
	d.cols = make([]*colBuilder, len(d.proj))
	for j := range d.proj {
		d.cols[j] = newColBuilder(specs[j], d.out.Field(j).Type, d.cfg.mem, &d.dec.acc)
	}
	return nil
}

// Schema returns the Arrow schema of the records Flush returns.
func (d *ValueDecoder) Schema() *arrow.Schema { return d.out }

// Len returns the number of values appended since the last Flush.
func (d *ValueDecoder) Len() int64 { return d.rows }

// plan returns the plan of the values of schema id.
func (d *ValueDecoder) plan(schemaID int16) (*valuePlan, error) {
	if p, ok := d.plans[schemaID]; ok {
		return p, nil
	}
	s, err := d.lookup(schemaID)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", schemaID, err)
	}
	if s == nil {
		return nil, fmt.Errorf("schema id %d: lookup returned no schema", schemaID)
	}
	p := &valuePlan{specs: make([]*fieldSpec, len(s.Columns)), cols: make([]*colBuilder, len(s.Columns))}
	for i, c := range s.Columns {
		if p.specs[i], err = newFieldSpec(c.Name, c.Type, 0); err != nil {
			return nil, fmt.Errorf("schema id %d: column %q: %w", schemaID, c.Name, err)
		}
		if p.specs[i].fixed == 0 {
			p.nvar++
		}
	}
	byID := s.HasColumnIDs && d.schema.HasColumnIDs
	for j, i := range d.proj {
		want := &d.schema.Columns[i]
		k := columnIndex(s, want, byID)
		if k < 0 {
			p.nulls = append(p.nulls, d.cols[j])
			continue
		}
		if !s.Columns[k].Type.Equal(want.Type) {
			return nil, fmt.Errorf("column %q is %s in schema id %d and %s in the reader's schema",
				want.Name, s.Columns[k].Type, schemaID, want.Type)
		}
		p.cols[k] = d.cols[j]
	}
	d.plans[schemaID] = p
	return p, nil
}

// columnIndex returns the index in s of column c (by id, else by name), or -1.
func columnIndex(s *types.Schema, c *types.Column, byID bool) int {
	for i := range s.Columns {
		if byID && s.Columns[i].ID == c.ID || !byID && s.Columns[i].Name == c.Name {
			return i
		}
	}
	return -1
}

// Append decodes one KV value (the tag if the layout has one, the schema id
// and the row) and adds it as the next row. A value that cannot be decoded
// is an error wrapping ErrInvalidBatch (ErrTooLarge past the size limit); a
// lookup failure is returned as is. After an error that interrupted a row,
// the decoder keeps failing: release it.
func (d *ValueDecoder) Append(value []byte) error {
	if d.err != nil {
		return d.err
	}
	if d.cfg.valueLayout == KVValueLayoutTagged {
		if len(value) < kvValueTagSize+KVValueHeaderSize {
			return fmt.Errorf("%w: kv value of %d bytes, shorter than the tag and schema id of the %v layout",
				ErrInvalidBatch, len(value), d.cfg.valueLayout)
		}
		value = value[kvValueTagSize:]
	}
	if len(value) < KVValueHeaderSize {
		return fmt.Errorf("%w: kv value of %d bytes, shorter than its schema id", ErrInvalidBatch, len(value))
	}
	schemaID := int16(binary.LittleEndian.Uint16(value))
	p, err := d.plan(schemaID)
	if err != nil {
		return err
	}
	// Check the row before it touches the builders: a bad row is refused
	// whole and the decoder stays usable.
	check := &rowDec{format: d.format, acc: rowBudget{limit: d.cfg.maxBytes}}
	if err := check.row(p.specs, nil, p.nvar, value[KVValueHeaderSize:]); err != nil {
		return fmt.Errorf("%w: kv value (schema id %d): %s row: %w", ErrInvalidBatch, schemaID, d.format, err)
	}
	if err := d.dec.row(p.specs, p.cols, p.nvar, value[KVValueHeaderSize:]); err != nil {
		d.err = fmt.Errorf("%w: kv value (schema id %d): %s row: %w", ErrInvalidBatch, schemaID, d.format, err)
		return d.err
	}
	for _, c := range p.nulls {
		c.appendNull()
	}
	d.rows++
	if d.dec.acc.over() {
		d.err = d.dec.acc.err()
		return d.err
	}
	return nil
}

// Flush returns the rows appended since the last Flush as one record (no
// rows: a record of 0 rows) and starts a new one. The caller releases it.
func (d *ValueDecoder) Flush() (arrow.RecordBatch, error) {
	if d.err != nil {
		return nil, d.err
	}
	arrs := make([]arrow.Array, len(d.cols))
	for j, c := range d.cols {
		arrs[j] = c.newArray()
	}
	rec := array.NewRecordBatch(d.out, arrs, d.rows)
	for _, a := range arrs {
		a.Release()
	}
	d.rows, d.dec.acc.used = 0, 0
	return rec, nil
}

// Release frees the builders. The decoder cannot be used afterwards.
func (d *ValueDecoder) Release() {
	for _, c := range d.cols {
		c.release()
	}
	d.cols = nil
	if d.err == nil {
		d.err = errors.New("fluss/records: value decoder released")
	}
}
