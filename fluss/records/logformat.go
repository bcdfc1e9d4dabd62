package records

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// LogFormat is a table's log format, its table.log.format property. It says
// what the records area of a log batch holds.
type LogFormat string

// The log formats of Fluss tables.
const (
	// LogFormatArrow: an optional change-type vector and one Arrow IPC
	// RecordBatch message (the default).
	LogFormatArrow LogFormat = "ARROW"
	// LogFormatIndexed: one record per row, each an int32 length, a
	// change-type byte and an IndexedRow.
	LogFormatIndexed LogFormat = "INDEXED"
	// LogFormatCompacted: one record per row, each an int32 length, a
	// change-type byte and a CompactedRow.
	LogFormatCompacted LogFormat = "COMPACTED"
)

// ParseLogFormat maps a table.log.format value (any case; "" is the
// default, ARROW) to a LogFormat.
func ParseLogFormat(s string) (LogFormat, error) {
	switch f := LogFormat(strings.ToUpper(strings.TrimSpace(s))); f {
	case "":
		return LogFormatArrow, nil
	case LogFormatArrow, LogFormatIndexed, LogFormatCompacted:
		return f, nil
	}
	return "", fmt.Errorf("fluss/records: unknown log format %q (want ARROW, INDEXED or COMPACTED)", s)
}

// isRow reports whether f stores rows (INDEXED, COMPACTED) rather than
// Arrow columns.
func (f LogFormat) isRow() bool { return f == LogFormatIndexed || f == LogFormatCompacted }

// TypeLookup returns the Fluss schema of the rows a table wrote under
// schemaID: the same columns, in the same order, as SchemaLookup's Arrow
// schema of that id. The row formats need the Fluss types, which say more
// than the Arrow ones (an INDEXED CHAR(n) is n bytes, a STRING is not).
type TypeLookup func(schemaID int16) (*types.Schema, error)

// WithLogFormat sets the log format of the batches (default ARROW). INDEXED
// and COMPACTED need lookup, which gives the Fluss schema of each schema id.
// Row-format batches decode into the same Arrow records as ARROW batches of
// the same rows: the same schema, projection, change types and offsets.
// Servers cannot project row formats, so WithProjectionPushedDown(true) is
// refused with them; WithProjection is applied locally.
func WithLogFormat(format LogFormat, lookup TypeLookup) Option {
	return func(c *config) { c.format, c.types = format, lookup }
}

// checkFormat validates the log format options of cfg.
func (c *config) checkFormat() error {
	switch {
	case c.format == "":
		c.format = LogFormatArrow
	case c.format != LogFormatArrow && !c.format.isRow():
		return fmt.Errorf("fluss/records: unknown log format %q", string(c.format))
	}
	if !c.format.isRow() {
		return nil
	}
	if c.types == nil {
		return fmt.Errorf("fluss/records: log format %s needs a type lookup", c.format)
	}
	if c.pushedDown {
		return errors.New("fluss/records: servers cannot project " + string(c.format) + " logs; the projection must be applied locally")
	}
	return nil
}
