package types

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Column is one top-level column of a table schema.
type Column struct {
	Name string
	Type DataType
	// Comment is the column comment ("" = none).
	Comment string
	// ID is the column id (Fluss 0.9+); written to JSON only when the schema
	// has HasColumnIDs set.
	ID int32
	// AggFunction is the raw JSON of the column's aggregation function
	// ({"type":…,"parameters":…}, Fluss 0.9+), kept verbatim; nil = none.
	AggFunction json.RawMessage
}

// NewColumn returns a column with the given name and type.
func NewColumn(name string, t DataType) Column { return Column{Name: name, Type: t} }

// Schema is a Fluss table schema: ordered columns and an optional primary key.
type Schema struct {
	Columns []Column
	// PrimaryKey names the primary-key columns; empty for log tables.
	PrimaryKey []string
	// AutoIncrementColumns names auto-increment columns (Fluss 0.9+).
	AutoIncrementColumns []string
	// HighestFieldID is the highest field id in use (Fluss 0.9+); read and
	// written only when HasColumnIDs is set (0 otherwise).
	HighestFieldID int32
	// HasColumnIDs records that column ids (and highest_field_id) are
	// meaningful and must be written to JSON. The parser sets it when the
	// input carried ids. Servers before 0.9 neither write nor read ids; on
	// input a 0.9+ server assigns ids by position when none are sent.
	HasColumnIDs bool
}

// NewSchema builds a schema from columns and an optional primary key,
// assigns column ids by position, forces the primary-key columns NOT NULL
// (both as Fluss does) and validates it.
func NewSchema(columns []Column, primaryKey ...string) (*Schema, error) {
	s := &Schema{Columns: append([]Column(nil), columns...)}
	for i := range s.Columns {
		s.Columns[i].ID = int32(i)
	}
	if len(primaryKey) > 0 {
		s.PrimaryKey = append([]string(nil), primaryKey...)
	}
	s.normalize()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// MustSchema is NewSchema for tests and fixed declarations; it panics on error.
func MustSchema(columns []Column, primaryKey ...string) *Schema {
	s, err := NewSchema(columns, primaryKey...)
	if err != nil {
		panic(err)
	}
	return s
}

// normalize forces primary-key columns NOT NULL.
func (s *Schema) normalize() {
	for _, pk := range s.PrimaryKey {
		if i := s.ColumnIndex(pk); i >= 0 {
			s.Columns[i].Type.Nullable = false
		}
	}
}

// Validate checks column names (non-empty, unique), column types, and that
// primary-key and auto-increment columns exist.
func (s *Schema) Validate() error {
	if s == nil {
		return fmt.Errorf("nil schema")
	}
	if len(s.Columns) == 0 {
		return fmt.Errorf("schema has no columns")
	}
	seen := make(map[string]struct{}, len(s.Columns))
	for i, c := range s.Columns {
		if c.Name == "" {
			return fmt.Errorf("column %d has an empty name", i)
		}
		if _, dup := seen[c.Name]; dup {
			return fmt.Errorf("column %q appears twice", c.Name)
		}
		seen[c.Name] = struct{}{}
		if err := c.Type.Validate(); err != nil {
			return fmt.Errorf("column %q: %w", c.Name, err)
		}
	}
	pks := make(map[string]struct{}, len(s.PrimaryKey))
	for _, pk := range s.PrimaryKey {
		if _, ok := seen[pk]; !ok {
			return fmt.Errorf("primary key column %q is not a column", pk)
		}
		if _, dup := pks[pk]; dup {
			return fmt.Errorf("primary key column %q appears twice", pk)
		}
		pks[pk] = struct{}{}
	}
	for _, ai := range s.AutoIncrementColumns {
		if _, ok := seen[ai]; !ok {
			return fmt.Errorf("auto-increment column %q is not a column", ai)
		}
	}
	return nil
}

// ColumnIndex returns the position of the named column, or -1.
func (s *Schema) ColumnIndex(name string) int {
	for i := range s.Columns {
		if s.Columns[i].Name == name {
			return i
		}
	}
	return -1
}

// Column returns the named column.
func (s *Schema) Column(name string) (Column, bool) {
	if i := s.ColumnIndex(name); i >= 0 {
		return s.Columns[i], true
	}
	return Column{}, false
}

// ColumnNames returns the column names in order.
func (s *Schema) ColumnNames() []string {
	names := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		names[i] = c.Name
	}
	return names
}

// HasPrimaryKey reports whether the schema declares a primary key.
func (s *Schema) HasPrimaryKey() bool { return len(s.PrimaryKey) > 0 }

// RowType returns the ROW type of the schema's columns (nullable flag false,
// as Fluss row types of tables are NOT NULL; field ids are the column ids).
func (s *Schema) RowType() DataType {
	fields := make([]Field, len(s.Columns))
	for i, c := range s.Columns {
		fields[i] = Field{Name: c.Name, Type: c.Type, Description: c.Comment, ID: c.ID}
	}
	return DataType{Kind: KindRow, Nullable: false, Fields: fields, HasFieldIDs: s.HasColumnIDs}
}

// Clone returns a deep copy of s.
func (s *Schema) Clone() *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.Columns = make([]Column, len(s.Columns))
	for i, col := range s.Columns {
		col.Type = col.Type.Clone()
		if col.AggFunction != nil {
			col.AggFunction = append(json.RawMessage(nil), col.AggFunction...)
		}
		c.Columns[i] = col
	}
	c.PrimaryKey = cloneStrings(s.PrimaryKey)
	c.AutoIncrementColumns = cloneStrings(s.AutoIncrementColumns)
	return &c
}

func cloneStrings(in []string) []string {
	if in == nil {
		return nil
	}
	return append([]string{}, in...)
}

// ProjectionIndices returns the positions of the named columns, in the
// order given. An unknown or repeated name is an error that names it.
func (s *Schema) ProjectionIndices(names []string) ([]int, error) {
	idx := make([]int, len(names))
	seen := make(map[string]struct{}, len(names))
	for i, n := range names {
		j := s.ColumnIndex(n)
		if j < 0 {
			return nil, &UnknownColumnError{Column: n, Columns: s.ColumnNames()}
		}
		if _, dup := seen[n]; dup {
			return nil, fmt.Errorf("column %q is selected twice", n)
		}
		seen[n] = struct{}{}
		idx[i] = j
	}
	return idx, nil
}

// Project returns a schema of the named columns in the given order. The
// primary key is kept only when every primary-key column is selected.
// An unknown or repeated name is an error that names it.
func (s *Schema) Project(names []string) (*Schema, error) {
	idx, err := s.ProjectionIndices(names)
	if err != nil {
		return nil, err
	}
	return s.ProjectIndices(idx)
}

// ProjectIndices returns a schema of the columns at the given positions,
// in the given order. The primary key is kept only when every primary-key
// column is selected.
func (s *Schema) ProjectIndices(idx []int) (*Schema, error) {
	p := &Schema{
		Columns:        make([]Column, len(idx)),
		HighestFieldID: s.HighestFieldID,
		HasColumnIDs:   s.HasColumnIDs,
	}
	for i, j := range idx {
		if j < 0 || j >= len(s.Columns) {
			return nil, fmt.Errorf("column index %d out of range [0, %d)", j, len(s.Columns))
		}
		p.Columns[i] = s.Columns[j]
	}
	keep := len(s.PrimaryKey) > 0
	for _, pk := range s.PrimaryKey {
		if p.ColumnIndex(pk) < 0 {
			keep = false
			break
		}
	}
	if keep {
		p.PrimaryKey = cloneStrings(s.PrimaryKey)
	}
	for _, ai := range s.AutoIncrementColumns {
		if p.ColumnIndex(ai) >= 0 {
			p.AutoIncrementColumns = append(p.AutoIncrementColumns, ai)
		}
	}
	return p, nil
}

// UnknownColumnError is returned when a column name does not exist.
type UnknownColumnError struct {
	Column  string
	Columns []string
}

func (e *UnknownColumnError) Error() string {
	return fmt.Sprintf("unknown column %q (columns: %s)", e.Column, strings.Join(e.Columns, ", "))
}

// String renders the schema as "(a INT NOT NULL, b STRING, PRIMARY KEY (a))".
func (s *Schema) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, c := range s.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.Name))
		b.WriteByte(' ')
		b.WriteString(c.Type.String())
	}
	if len(s.PrimaryKey) > 0 {
		b.WriteString(", PRIMARY KEY (")
		for i, pk := range s.PrimaryKey {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(pk))
		}
		b.WriteByte(')')
	}
	b.WriteByte(')')
	return b.String()
}
