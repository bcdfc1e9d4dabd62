package records

import "strconv"

// ChangeType is the kind of change a log row carries. Its values are the
// bytes of a log batch's change-type vector.
type ChangeType int8

// The change types of Fluss logs.
const (
	// AppendOnly marks a row of a log table ("+A").
	AppendOnly ChangeType = 0
	// Insert marks a new key of a primary-key table ("+I").
	Insert ChangeType = 1
	// UpdateBefore carries the old row of an updated key ("-U").
	UpdateBefore ChangeType = 2
	// UpdateAfter carries the new row of an updated key ("+U").
	UpdateAfter ChangeType = 3
	// Delete carries the old row of a deleted key ("-D").
	Delete ChangeType = 4
)

// String returns the short form Fluss prints: "+A", "+I", "-U", "+U" or "-D".
func (c ChangeType) String() string {
	switch c {
	case AppendOnly:
		return "+A"
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return "ChangeType(" + strconv.Itoa(int(c)) + ")"
}

// Valid reports whether c is one of the five change types.
func (c ChangeType) Valid() bool { return c >= AppendOnly && c <= Delete }
