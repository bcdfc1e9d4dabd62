package e2e

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"

	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// IDHex renders a message id (little-endian u128 bytes) as 0x + 32 hex digits.
func IDHex(id [16]byte) string {
	var be [16]byte
	for i := range id {
		be[i] = id[15-i]
	}
	return "0x" + hex.EncodeToString(be[:])
}

// HeaderValue renders a header value by its kind.
func HeaderValue(f iggytest.HeaderField) string {
	v := f.Value
	switch f.Kind {
	case iggytest.HeaderString:
		return strconv.Quote(string(v))
	case iggytest.HeaderBool:
		return strconv.FormatBool(len(v) == 1 && v[0] != 0)
	case iggytest.HeaderInt8:
		return strconv.Itoa(int(int8(v[0])))
	case iggytest.HeaderInt16:
		return strconv.Itoa(int(int16(binary.LittleEndian.Uint16(v))))
	case iggytest.HeaderInt32:
		return strconv.Itoa(int(int32(binary.LittleEndian.Uint32(v))))
	case iggytest.HeaderInt64:
		return strconv.FormatInt(int64(binary.LittleEndian.Uint64(v)), 10)
	case iggytest.HeaderUint8:
		return strconv.Itoa(int(v[0]))
	case iggytest.HeaderUint16:
		return strconv.Itoa(int(binary.LittleEndian.Uint16(v)))
	case iggytest.HeaderUint32:
		return strconv.FormatUint(uint64(binary.LittleEndian.Uint32(v)), 10)
	case iggytest.HeaderUint64:
		return strconv.FormatUint(binary.LittleEndian.Uint64(v), 10)
	case iggytest.HeaderFloat:
		return strconv.FormatFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(v))), 'g', -1, 32)
	case iggytest.HeaderDouble:
		return strconv.FormatFloat(math.Float64frombits(binary.LittleEndian.Uint64(v)), 'g', -1, 64)
	}
	return "0x" + hex.EncodeToString(v)
}
