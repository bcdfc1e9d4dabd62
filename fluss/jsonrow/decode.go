package jsonrow

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// RowBuilder turns rows given as JSON objects (docs/json-mapping.md, §4
// "Reading JSON back") or as structured values into Arrow record batches of
// a Fluss table's schema: the inverse of the Encoder. It accepts everything
// the Encoder writes and what the Java fixture tool reads, with the same
// values (exceptions in the package's decode notes below).
//
// A row is parsed and checked in full before anything is appended to the
// Arrow builders, so a row that fails leaves the batch as it was. It is
// not safe for concurrent use.
//
// Decode notes: a missing column or ROW field is null (an error when it is
// NOT NULL); an unknown key is an error unless IgnoreUnknownKeys; keys of
// an object appear once. Integers must be exact (1.0 and 1e2 are integers,
// 1.5 is not) and in range. FLOAT and DOUBLE take numbers (correctly
// rounded; beyond the range they become infinite, as in Java) and the
// strings "NaN", "Infinity", "-Infinity". DECIMAL takes a number or a
// string in java.math.BigDecimal's syntax ("+1.5", ".5", "1e3", ASCII
// digits only), exact, at most p digits. CHAR and STRING take a string
// whatever its length (as the Java client does); invalid UTF-8 becomes
// U+FFFD and a lone UTF-16 surrogate escape '?', as in Java. BINARY(n) and
// BYTES take base64 (padding optional, as java.util.Base64). DATE, TIME,
// TIMESTAMP and TIMESTAMP_LTZ take java.time's ISO forms; fraction digits
// beyond the type's precision are cut (floor), TIME keeps at most
// milliseconds. A value outside what the Arrow column can hold (DATE
// beyond ±5.8 million years, TIMESTAMP(9) outside 1677..2262) is an error
// where Java would wrap. MAP takes an object (keys read as strings of the
// key type) or an array of {"key":…,"value":…} objects, in the order
// written; an equal key again replaces the value of the first (as a Java
// LinkedHashMap does), except BINARY/BYTES keys, which Java compares by
// identity.
type RowBuilder struct {
	row    types.DataType
	schema *arrow.Schema
	rb     *array.RecordBuilder
	root   *dnode
	cfg    builderConfig
	isKey  []bool // per column, for the Key appends
	rows   int
	// dataPerRow is, per column, the bytes per row of the string or binary
	// values of the last record (see Reserve).
	dataPerRow []int

	// per row, reused
	tape []slot  // parsed values; the columns are tape[:ncols]
	text []byte  // bytes of string and binary values
	tmp  []byte  // a string token being converted
	num  []byte  // digits of a number being converted
	key  []byte  // an object key being matched
	fps  []byte  // map key fingerprints
	fpAt []int32 // where each name or fingerprint in fps ends
	ents []int32 // the entries of the MAP being deduplicated
	// sorted holds the keys of the structured MAPs being read
	sorted []string
	aw     AnyWriter

	// the JSON being parsed
	data []byte
	pos  int
}

// builderConfig holds the options of a RowBuilder.
type builderConfig struct {
	mem           memory.Allocator
	ignoreUnknown bool
	keyColumns    []string
}

// BuilderOption configures a RowBuilder.
type BuilderOption func(*builderConfig)

// WithBuilderAllocator sets the allocator of the Arrow builders (default
// memory.DefaultAllocator).
func WithBuilderAllocator(mem memory.Allocator) BuilderOption {
	return func(c *builderConfig) { c.mem = mem }
}

// IgnoreUnknownKeys makes keys that name no column or ROW field be skipped
// instead of failing the row (the default).
func IgnoreUnknownKeys() BuilderOption {
	return func(c *builderConfig) { c.ignoreUnknown = true }
}

// WithKeyColumns names the primary-key columns the Key appends read
// (NewSchemaRowBuilder sets the schema's primary key).
func WithKeyColumns(names ...string) BuilderOption {
	return func(c *builderConfig) { c.keyColumns = append([]string(nil), names...) }
}

// NewRowBuilder compiles a builder of rows of the Fluss ROW type row (for
// a table: Schema.RowType()) into record batches of the Arrow schema
// schema, which must be the one Fluss uses for row (types.ArrowSchemaOfRow;
// nil derives it). The record batches carry schema itself.
func NewRowBuilder(row types.DataType, schema *arrow.Schema, opts ...BuilderOption) (*RowBuilder, error) {
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
	b := &RowBuilder{row: row, schema: schema, cfg: builderConfig{mem: memory.DefaultAllocator}}
	for _, o := range opts {
		o(&b.cfg)
	}
	if err := b.setKeys(); err != nil {
		return nil, err
	}
	for i, f := range row.Fields {
		want, err := types.ArrowType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("jsonrow: column %q: %w", f.Name, err)
		}
		if got := schema.Field(i).Type; !arrow.TypeEqual(got, want) {
			return nil, fmt.Errorf("jsonrow: column %q: arrow type %s is not %s, the type Fluss uses for %s", f.Name, got, want, f.Type)
		}
	}
	b.rb = array.NewRecordBuilder(b.cfg.mem, schema)
	b.root = compileDecoder(row)
	if err := b.root.bindRoot(b, b.rb); err != nil {
		b.rb.Release()
		return nil, err
	}
	return b, nil
}

// NewSchemaRowBuilder compiles a builder for rows of a Fluss table schema,
// into record batches of its Arrow schema (Schema.ArrowSchema, what
// fluss.Writer takes); the Key appends read its primary key.
func NewSchemaRowBuilder(s *types.Schema, opts ...BuilderOption) (*RowBuilder, error) {
	as, err := s.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("jsonrow: %w", err)
	}
	opts = append([]BuilderOption{WithKeyColumns(s.PrimaryKey...)}, opts...)
	return NewRowBuilder(s.RowType(), as, opts...)
}

// setKeys marks the key columns.
func (b *RowBuilder) setKeys() error {
	b.isKey = make([]bool, len(b.row.Fields))
	for _, k := range b.cfg.keyColumns {
		i := columnIndex(b.row, k)
		if i < 0 {
			return fmt.Errorf("jsonrow: key column %q is not a column", k)
		}
		b.isKey[i] = true
	}
	return nil
}

func columnIndex(row types.DataType, name string) int {
	for i, f := range row.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Schema returns the Arrow schema of the record batches.
func (b *RowBuilder) Schema() *arrow.Schema { return b.schema }

// Len returns the number of rows appended since the last NewRecord.
func (b *RowBuilder) Len() int { return b.rows }

// NewRecord returns the rows appended so far as a record batch (the caller
// releases it) and starts a new one.
func (b *RowBuilder) NewRecord() arrow.RecordBatch {
	if b.rows > 0 {
		b.noteDataPerRow()
	}
	b.rows = 0
	return b.rb.NewRecordBatch()
}

// dataBuilder is an Arrow builder of variable-length values (STRING,
// BYTES).
type dataBuilder interface {
	DataLen() int
	ReserveData(int)
}

// noteDataPerRow records the bytes per row of each column of
// variable-length values.
func (b *RowBuilder) noteDataPerRow() {
	if b.dataPerRow == nil {
		b.dataPerRow = make([]int, len(b.rb.Fields()))
	}
	for i, f := range b.rb.Fields() {
		if d, ok := f.(dataBuilder); ok {
			b.dataPerRow[i] = (d.DataLen() + b.rows - 1) / b.rows
		}
	}
}

// Reserve makes room in the Arrow builders for n more rows, with as many
// bytes of string and binary values per row as the last record had, so
// that a batch of known size is built without growing buffers row by row.
// It changes no value; rows may still be appended beyond n.
func (b *RowBuilder) Reserve(n int) {
	if n <= 0 {
		return
	}
	b.rb.Reserve(n)
	for i, per := range b.dataPerRow {
		if per > 0 {
			b.rb.Field(i).(dataBuilder).ReserveData(per * n)
		}
	}
}

// Release releases the Arrow builders (and rows not taken by NewRecord).
func (b *RowBuilder) Release() { b.rb.Release() }

// AppendJSON appends one row given as a JSON object. On error nothing is
// appended; the error is a *DecodeError.
func (b *RowBuilder) AppendJSON(data []byte) error { return b.appendJSON(data, false) }

// AppendJSONKey appends the primary key of a row given as a JSON object,
// for a delete: only the key columns are read (and required); the other
// columns are null, also when NOT NULL, and their values are skipped.
func (b *RowBuilder) AppendJSONKey(data []byte) error { return b.appendJSON(data, true) }

// AppendStructured appends one row given as a structured value: a
// map[string]any as Benthos's AsStructured gives, of the values
// encoding/json decodes to (with or without UseNumber) plus the Go integer
// types, float32, []byte (as its base64 string) and time.Time (an instant
// for TIMESTAMP_LTZ; its wall clock for DATE, TIME and TIMESTAMP; else its
// RFC 3339 text). It gives the same row as AppendJSON of the value's JSON
// (AnyWriter); maps are read in key order.
func (b *RowBuilder) AppendStructured(v any) error { return b.appendStructured(v, false) }

// AppendStructuredKey is AppendJSONKey for a structured value.
func (b *RowBuilder) AppendStructuredKey(v any) error { return b.appendStructured(v, true) }

func (b *RowBuilder) checkKeys(keysOnly bool) error {
	if keysOnly && len(b.cfg.keyColumns) == 0 {
		return &DecodeError{Reason: "no key columns: the table has no primary key (WithKeyColumns)"}
	}
	return nil
}

func (b *RowBuilder) appendJSON(data []byte, keysOnly bool) error {
	if err := b.checkKeys(keysOnly); err != nil {
		return err
	}
	b.startRow()
	b.data, b.pos = data, 0
	err := b.parseTopRow(keysOnly)
	b.data = nil
	if err != nil {
		return err
	}
	b.flushRow()
	return nil
}

func (b *RowBuilder) appendStructured(v any, keysOnly bool) error {
	if err := b.checkKeys(keysOnly); err != nil {
		return err
	}
	b.startRow()
	if err := b.anyTopRow(v, keysOnly); err != nil {
		return err
	}
	b.flushRow()
	return nil
}

// startRow resets the per-row state: the columns' slots, all null.
func (b *RowBuilder) startRow() {
	n := len(b.root.fields)
	if cap(b.tape) < n {
		b.tape = make([]slot, n, 2*n+16)
	}
	b.tape = b.tape[:n]
	clear(b.tape)
	b.text = b.text[:0]
}

// flushRow appends the parsed row to the Arrow builders.
func (b *RowBuilder) flushRow() {
	for c, f := range b.root.fields {
		f.flush(int32(c))
	}
	b.rows++
}

// DecodeError is a row that cannot be decoded: a value that does not fit
// its column, a missing NOT NULL column, an unknown key or invalid JSON.
type DecodeError struct {
	// Path names the column and, for a nested value, where in it:
	// address.zip, tags[3], attrs["k"], m[2].key. Empty for errors of the
	// row as a whole.
	Path string
	// Type is the Fluss type of the value at Path.
	Type string
	// Value is the JSON text of the value (at most about 60 bytes).
	Value string
	// Reason says what is wrong.
	Reason string

	showValue bool // Value is to be filled in with the value's text
}

// Error renders the error, e.g. jsonrow: column "price" (DECIMAL(10, 2)):
// "12.345" has 3 fraction digits, at most 2.
func (e *DecodeError) Error() string {
	var sb strings.Builder
	sb.WriteString("jsonrow: ")
	if e.Path != "" {
		fmt.Fprintf(&sb, "column %q (%s): ", e.Path, e.Type)
	}
	if e.Value != "" {
		sb.WriteString(e.Value)
		sb.WriteByte(' ')
	}
	sb.WriteString(e.Reason)
	return sb.String()
}

// maxShown is how many bytes of a value or type an error shows.
const maxShown = 60

// shorten cuts s to about maxShown bytes, at a UTF-8 boundary, marking the cut.
func shorten(s string) string {
	if len(s) <= maxShown {
		return s
	}
	cut := maxShown - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
