package iggy

import (
	"fmt"
	"math"
	"math/big"
)

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

// HeaderField is a user header's key or value: its kind and its bytes.
type HeaderField struct {
	Kind  HeaderKind
	Value []byte
}

// Header is one user header.
type Header struct {
	Key, Value HeaderField
}

// headerSizes are the sizes of the fixed-size kinds (0: 1 to 255 bytes).
var headerSizes = [...]int{
	HeaderBool: 1, HeaderInt8: 1, HeaderUint8: 1, HeaderInt16: 2, HeaderUint16: 2,
	HeaderInt32: 4, HeaderUint32: 4, HeaderFloat: 4, HeaderInt64: 8, HeaderUint64: 8,
	HeaderDouble: 8, HeaderInt128: 16, HeaderUint128: 16,
}

// ParseHeaders reads a polled message's user header block: per header
// [kind u8][length u32][key][kind u8][length u32][value]. Kinds must be
// known, lengths 1 to 255 bytes and the size of a fixed-size kind. The
// fields' bytes alias b.
func ParseHeaders(b []byte) ([]Header, error) {
	var out []Header
	for pos := 0; pos < len(b); {
		var h Header
		var err error
		if h.Key, pos, err = parseHeaderField(b, pos); err != nil {
			return nil, fmt.Errorf("user header %d key: %w", len(out), err)
		}
		if h.Value, pos, err = parseHeaderField(b, pos); err != nil {
			return nil, fmt.Errorf("user header %d (%s) value: %w", len(out), h.Key, err)
		}
		out = append(out, h)
	}
	return out, nil
}

func parseHeaderField(b []byte, pos int) (HeaderField, int, error) {
	if len(b)-pos < 5 {
		return HeaderField{}, pos, fmt.Errorf("%d bytes left at byte %d, want at least 5", len(b)-pos, pos)
	}
	kind, n := HeaderKind(b[pos]), le.Uint32(b[pos+1:])
	switch {
	case kind < HeaderRaw || kind > HeaderDouble:
		return HeaderField{}, pos, fmt.Errorf("unknown kind %d at byte %d", kind, pos)
	case n == 0 || n > MaxHeaderPartBytes:
		return HeaderField{}, pos, fmt.Errorf("length %d at byte %d is outside 1 to %d", n, pos, MaxHeaderPartBytes)
	case headerSizes[kind] != 0 && int(n) != headerSizes[kind]:
		return HeaderField{}, pos, fmt.Errorf("kind %d holds %d bytes, not %d, at byte %d", kind, n, headerSizes[kind], pos)
	case uint64(n) > uint64(len(b)-pos-5):
		return HeaderField{}, pos, fmt.Errorf("%d bytes at byte %d run past the %d-byte block", n, pos, len(b))
	}
	end := pos + 5 + int(n)
	return HeaderField{Kind: kind, Value: b[pos+5 : end : end]}, end, nil
}

// Any is the field's value as a Go value: string for strings, []byte for
// raw bytes, bool, the integer and float types of the fixed-size kinds,
// and the decimal text of 128-bit integers.
func (f HeaderField) Any() any {
	v := f.Value
	if int(f.Kind) >= len(headerSizes) || (headerSizes[f.Kind] != 0 && len(v) != headerSizes[f.Kind]) {
		return append([]byte(nil), v...) // not what ParseHeaders returns
	}
	switch f.Kind {
	case HeaderString:
		return string(v)
	case HeaderBool:
		return v[0] != 0
	case HeaderInt8:
		return int8(v[0])
	case HeaderUint8:
		return v[0]
	case HeaderInt16:
		return int16(le.Uint16(v))
	case HeaderUint16:
		return le.Uint16(v)
	case HeaderInt32:
		return int32(le.Uint32(v))
	case HeaderUint32:
		return le.Uint32(v)
	case HeaderInt64:
		return int64(le.Uint64(v))
	case HeaderUint64:
		return le.Uint64(v)
	case HeaderFloat:
		return math.Float32frombits(le.Uint32(v))
	case HeaderDouble:
		return math.Float64frombits(le.Uint64(v))
	case HeaderInt128, HeaderUint128:
		return int128Text(v, f.Kind == HeaderInt128)
	}
	return append([]byte(nil), v...)
}

// int128Text renders 16 little-endian bytes as a decimal number.
func int128Text(v []byte, signed bool) string {
	be := make([]byte, 16)
	for i := range be {
		be[i] = v[15-i]
	}
	n := new(big.Int).SetBytes(be)
	if signed && v[15]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	return n.String()
}

// String renders the field as text (fmt's rendering of Any).
func (f HeaderField) String() string {
	if f.Kind == HeaderRaw {
		return string(f.Value)
	}
	return fmt.Sprint(f.Any())
}
