package iggytest

import (
	"encoding/binary"
	"unicode/utf8"
)

// decoder reads a request payload the way the server's wire decoders do and
// records the error code the server would answer a malformed one with: a
// short buffer, bad UTF-8 or an unknown discriminant is InvalidCommand (3),
// a failed validation (empty or over-long name, numeric identifier not 4
// bytes) is InvalidFormat (4). The first error sticks; later reads return
// zero values.
type decoder struct {
	b   []byte
	pos int
	err uint32
}

func (d *decoder) fail(code uint32) {
	if d.err == 0 {
		d.err = code
	}
}

func (d *decoder) take(n int) []byte {
	if d.err != 0 {
		return nil
	}
	if n < 0 || n > len(d.b)-d.pos {
		d.fail(CodeInvalidCommand)
		return nil
	}
	v := d.b[d.pos : d.pos+n]
	d.pos += n
	return v
}

func (d *decoder) u8() uint8 {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if v := d.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if v := d.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

// str reads n bytes of UTF-8.
func (d *decoder) str(n int) string {
	v := d.take(n)
	if d.err != 0 {
		return ""
	}
	if !utf8.Valid(v) {
		d.fail(CodeInvalidCommand)
		return ""
	}
	return string(v)
}

// name reads a WireName: u8 length (1-255) and UTF-8 bytes.
func (d *decoder) name() string {
	n := int(d.u8())
	if d.err != 0 {
		return ""
	}
	if n == 0 {
		d.fail(CodeInvalidFormat)
		return ""
	}
	return d.str(n)
}

// ident reads a WireIdentifier: u8 kind (1 numeric, 2 string), u8 length, value.
func (d *decoder) ident() ident {
	kind := d.u8()
	n := int(d.u8())
	v := d.take(n)
	if d.err != 0 {
		return ident{}
	}
	switch kind {
	case 1:
		if n != 4 {
			d.fail(CodeInvalidFormat)
			return ident{}
		}
		return ident{numeric: true, id: binary.LittleEndian.Uint32(v)}
	case 2:
		if n == 0 {
			d.fail(CodeInvalidFormat)
			return ident{}
		}
		if !utf8.Valid(v) {
			d.fail(CodeInvalidCommand)
			return ident{}
		}
		return ident{name: string(v)}
	default:
		d.fail(CodeInvalidCommand)
		return ident{}
	}
}

// consumer reads a WireConsumer: u8 kind (1 consumer, 2 group) and an identifier.
func (d *decoder) consumer() (kind uint8, id ident) {
	kind = d.u8()
	if d.err == 0 && kind != 1 && kind != 2 {
		d.fail(CodeInvalidCommand)
	}
	id = d.ident()
	return kind, id
}

// optPartition reads the u8 flag + u32 partition pair of offset and poll
// requests.
func (d *decoder) optPartition() (uint32, bool) {
	flag := d.u8()
	p := d.u32()
	return p, flag == 1
}

// encoder builds a response payload.
type encoder struct{ b []byte }

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = binary.LittleEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, v) }

// name writes a u8-length-prefixed string.
func (e *encoder) name(s string) {
	e.b = append(e.b, uint8(len(s)))
	e.b = append(e.b, s...)
}

// str32 writes a u32-length-prefixed string.
func (e *encoder) str32(s string) {
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
}

// block writes a u32-length-prefixed byte block.
func (e *encoder) block(b []byte) {
	e.u32(uint32(len(b)))
	e.b = append(e.b, b...)
}

// rest returns the bytes not read yet (nil after an error).
func (d *decoder) rest() []byte {
	if d.err != 0 {
		return nil
	}
	v := d.b[d.pos:]
	d.pos = len(d.b)
	return v
}
