package fluss

import (
	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// Names of the lower layers that a user of the client meets, re-exported
// so that a plugin needs only this package (and fluss/jsonrow to render
// rows).

// ChangeType is the kind of change a log row carries (ScanBatch rows).
type ChangeType = records.ChangeType

// The change types of Fluss logs.
const (
	AppendOnly   = records.AppendOnly   // a row of a log table ("+A")
	Insert       = records.Insert       // a new key of a primary-key table ("+I")
	UpdateBefore = records.UpdateBefore // the old row of an updated key ("-U")
	UpdateAfter  = records.UpdateAfter  // the new row of an updated key ("+U")
	Delete       = records.Delete       // the old row of a deleted key ("-D")
)

// Schema is a table's schema (TableInfo.Schema, Scanner.Schema).
type Schema = types.Schema

// UnknownColumnError is returned when a column name (ScanColumns, for one)
// does not exist in the table.
type UnknownColumnError = types.UnknownColumnError

// IsRetriable reports whether an error from this package is transient: the
// same call may succeed later (errcode.IsRetriable).
func IsRetriable(err error) bool { return errcode.IsRetriable(err) }
