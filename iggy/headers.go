package iggy

// HeaderKind is the type of a user header's key or value. A header block
// is, per header, [kind u8][length u32][key bytes][kind u8][length u32]
// [value bytes], numbers little-endian; keys and values are 1 to 255 bytes
// and a block at most MaxUserHeadersBytes.
type HeaderKind uint8

// Header kinds on the wire.
const (
	HeaderRaw HeaderKind = iota + 1
	HeaderString
	HeaderBool
	HeaderInt8
	HeaderInt16
	HeaderInt32
	HeaderInt64
	HeaderInt128
	HeaderUint8
	HeaderUint16
	HeaderUint32
	HeaderUint64
	HeaderUint128
	HeaderFloat
	HeaderDouble
)

// MaxHeaderPartBytes is the longest header key or value.
const MaxHeaderPartBytes = 255
