package iggytest

import "encoding/binary"

// Field accessors of a stored message, in either wire form (see
// storedMessage.raw).
//
// 0.8 message: checksum u64 | id u128 | offset u64 | timestamp u64 |
// origin timestamp u64 | user headers length u32 | payload length u32 |
// reserved u64 (64 bytes), payload, user headers.
//
// 0.9 frame: checksum u64 | id u128 | offset delta u32 | timestamp delta
// u32 | user headers length u32 | payload length u32 | reserved u64
// (48 bytes), payload, user headers.

func (m storedMessage) headerSize() int {
	if m.batch != nil {
		return frameHeaderSize
	}
	return messageHeaderSize
}

func (m storedMessage) checksum() uint64 { return binary.LittleEndian.Uint64(m.raw[0:8]) }
func (m storedMessage) id() []byte       { return m.raw[8:24] }

func (m storedMessage) lengths() (headers, payload uint32) {
	if m.batch != nil {
		return binary.LittleEndian.Uint32(m.raw[32:36]), binary.LittleEndian.Uint32(m.raw[36:40])
	}
	return binary.LittleEndian.Uint32(m.raw[48:52]), binary.LittleEndian.Uint32(m.raw[52:56])
}

func (m storedMessage) payload() []byte {
	_, pl := m.lengths()
	h := m.headerSize()
	return m.raw[h : h+int(pl)]
}

func (m storedMessage) userHeaders() []byte {
	hl, pl := m.lengths()
	start := m.headerSize() + int(pl)
	return m.raw[start : start+int(hl)]
}

// originTimestamp is the producer's timestamp: a 0.8 header field, or the
// batch's origin timestamp plus the frame's delta in 0.9.
func (m storedMessage) originTimestamp() uint64 {
	if m.batch != nil {
		return m.batch.origin + uint64(binary.LittleEndian.Uint32(m.raw[28:32]))
	}
	return binary.LittleEndian.Uint64(m.raw[40:48])
}

func (m storedMessage) reserved() uint64 {
	if m.batch != nil {
		return binary.LittleEndian.Uint64(m.raw[40:48])
	}
	return binary.LittleEndian.Uint64(m.raw[56:64])
}
