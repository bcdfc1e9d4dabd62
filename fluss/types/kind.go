package types

import "strings"

// Kind identifies a Fluss data type root (Fluss's DataTypeRoot).
type Kind int8

// The Fluss type roots.
const (
	KindInvalid Kind = iota
	KindBoolean
	KindTinyInt
	KindSmallInt
	KindInt
	KindBigInt
	KindFloat
	KindDouble
	KindDecimal
	KindChar
	KindString
	KindBinary
	KindBytes
	KindDate
	KindTime
	KindTimestamp
	KindTimestampLTZ
	KindArray
	KindMap
	KindRow
	kindCount
)

// rootNames are the DataTypeRoot names used in the JSON "type" member.
var rootNames = [kindCount]string{
	KindInvalid:      "INVALID",
	KindBoolean:      "BOOLEAN",
	KindTinyInt:      "TINYINT",
	KindSmallInt:     "SMALLINT",
	KindInt:          "INTEGER",
	KindBigInt:       "BIGINT",
	KindFloat:        "FLOAT",
	KindDouble:       "DOUBLE",
	KindDecimal:      "DECIMAL",
	KindChar:         "CHAR",
	KindString:       "STRING",
	KindBinary:       "BINARY",
	KindBytes:        "BYTES",
	KindDate:         "DATE",
	KindTime:         "TIME_WITHOUT_TIME_ZONE",
	KindTimestamp:    "TIMESTAMP_WITHOUT_TIME_ZONE",
	KindTimestampLTZ: "TIMESTAMP_WITH_LOCAL_TIME_ZONE",
	KindArray:        "ARRAY",
	KindMap:          "MAP",
	KindRow:          "ROW",
}

// sqlNames are the names used by the type syntax (String and ParseDataType).
var sqlNames = [kindCount]string{
	KindInvalid:      "INVALID",
	KindBoolean:      "BOOLEAN",
	KindTinyInt:      "TINYINT",
	KindSmallInt:     "SMALLINT",
	KindInt:          "INT",
	KindBigInt:       "BIGINT",
	KindFloat:        "FLOAT",
	KindDouble:       "DOUBLE",
	KindDecimal:      "DECIMAL",
	KindChar:         "CHAR",
	KindString:       "STRING",
	KindBinary:       "BINARY",
	KindBytes:        "BYTES",
	KindDate:         "DATE",
	KindTime:         "TIME",
	KindTimestamp:    "TIMESTAMP",
	KindTimestampLTZ: "TIMESTAMP_LTZ",
	KindArray:        "ARRAY",
	KindMap:          "MAP",
	KindRow:          "ROW",
}

// String returns the type-syntax name of the kind ("INT", "TIMESTAMP_LTZ", ...).
func (k Kind) String() string {
	if k < 0 || k >= kindCount {
		return "INVALID"
	}
	return sqlNames[k]
}

// RootName returns the Fluss DataTypeRoot name used in JSON ("INTEGER",
// "TIMESTAMP_WITH_LOCAL_TIME_ZONE", ...).
func (k Kind) RootName() string {
	if k < 0 || k >= kindCount {
		return "INVALID"
	}
	return rootNames[k]
}

// KindFromRootName maps a DataTypeRoot name (as found in JSON) to a Kind.
// It returns KindInvalid and false for unknown names.
func KindFromRootName(name string) (Kind, bool) {
	for k := KindBoolean; k < kindCount; k++ {
		if rootNames[k] == name {
			return k, true
		}
	}
	return KindInvalid, false
}

// IsNested reports whether the kind is ARRAY, MAP or ROW.
func (k Kind) IsNested() bool { return k == KindArray || k == KindMap || k == KindRow }

// IsCharacterString reports whether values of the kind are character strings
// (CHAR or STRING).
func (k Kind) IsCharacterString() bool { return k == KindChar || k == KindString }

// HasPrecision reports whether the kind carries a precision (DECIMAL, TIME,
// TIMESTAMP, TIMESTAMP_LTZ).
func (k Kind) HasPrecision() bool {
	return k == KindDecimal || k == KindTime || k == KindTimestamp || k == KindTimestampLTZ
}

// HasLength reports whether the kind carries a length (CHAR, BINARY).
func (k Kind) HasLength() bool { return k == KindChar || k == KindBinary }

func upperASCII(s string) string { return strings.ToUpper(s) }
