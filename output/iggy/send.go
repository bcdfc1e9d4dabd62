package iggy

import (
	"encoding/binary"
	"fmt"
	"io"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
)

// Iggy 0.8 TCP framing of a SendMessages request (the same bytes the SDK's
// SendMessages writes): a u32 length (of what follows it), the u32 command
// code, then the command: a u32 length of the metadata (stream and topic
// identifiers, partitioning, message count), that metadata, an index of 16
// bytes per message whose second u32 is the cumulative size of the messages
// up to and including it, and the messages, each a 64-byte header followed
// by its payload and user headers. The answer is a u32 status, a u32 length
// and that many bytes.
const (
	sendMessagesCode = 101
	indexEntryBytes  = 16
	// keepBufBytes caps the request buffer a connection keeps between
	// requests.
	keepBufBytes = 4 << 20
)

// sendMessages sends one SendMessages request on the connection's socket,
// written into one buffer the connection reuses, and reads the answer. The
// SDK's SendMessages builds the same request in two fresh buffers of its
// size (one for the command, one for the frame); on a busy output that
// copying and allocation is a large part of the cost of a send. The caller
// holds the connection alone (the pool hands each to one batch), and c.do
// bounds the call with the timeout.
func (c *conn) sendMessages(sid, tid iggcon.Identifier, part iggcon.Partitioning, msgs []iggcon.IggyMessage) error {
	sock := c.socket()
	if sock == nil {
		return c.cl.SendMessages(sid, tid, part, msgs)
	}
	if len(part.Value) > 255 || (part.Kind != iggcon.Balanced && len(part.Value) == 0) {
		return ierror.ErrInvalidKeyValueLength
	}
	if len(msgs) == 0 {
		return ierror.ErrInvalidMessagesCount
	}
	size := 0
	for i := range msgs {
		size += iggcon.MessageHeaderSize + len(msgs[i].Payload) + len(msgs[i].UserHeaders)
	}
	metaLen := 2 + len(sid.Value) + 2 + len(tid.Value) + 2 + len(part.Value) + 4
	total := 8 + 4 + metaLen + len(msgs)*indexEntryBytes + size
	buf := c.wbuf[:0]
	if cap(buf) < total {
		buf = make([]byte, 0, total)
	}
	le := binary.LittleEndian
	buf = le.AppendUint32(buf, uint32(total-4))
	buf = le.AppendUint32(buf, sendMessagesCode)
	buf = le.AppendUint32(buf, uint32(metaLen))
	buf = append(buf, byte(sid.Kind), byte(len(sid.Value)))
	buf = append(buf, sid.Value...)
	buf = append(buf, byte(tid.Kind), byte(len(tid.Value)))
	buf = append(buf, tid.Value...)
	buf = append(buf, byte(part.Kind), byte(len(part.Value)))
	buf = append(buf, part.Value...)
	buf = le.AppendUint32(buf, uint32(len(msgs)))
	end := uint32(0)
	for i := range msgs {
		end += uint32(iggcon.MessageHeaderSize + len(msgs[i].Payload) + len(msgs[i].UserHeaders))
		buf = le.AppendUint32(buf, 0)
		buf = le.AppendUint32(buf, end)
		buf = le.AppendUint64(buf, 0)
	}
	for i := range msgs {
		m := &msgs[i]
		h := &m.Header
		buf = le.AppendUint64(buf, h.Checksum)
		buf = append(buf, h.Id[:]...)
		buf = le.AppendUint64(buf, h.Offset)
		buf = le.AppendUint64(buf, h.Timestamp)
		buf = le.AppendUint64(buf, h.OriginTimestamp)
		buf = le.AppendUint32(buf, uint32(len(m.UserHeaders)))
		buf = le.AppendUint32(buf, uint32(len(m.Payload)))
		buf = le.AppendUint64(buf, h.Reserved)
		buf = append(buf, m.Payload...)
		buf = append(buf, m.UserHeaders...)
	}
	if len(buf) != total {
		return fmt.Errorf("internal error: built a %d byte request, expected %d", len(buf), total)
	}
	if cap(buf) <= keepBufBytes {
		c.wbuf = buf
	} else {
		c.wbuf = nil
	}
	if _, err := sock.Write(buf); err != nil {
		return fmt.Errorf("writing to Iggy: %w", err)
	}
	var head [8]byte
	if _, err := io.ReadFull(sock, head[:]); err != nil {
		return fmt.Errorf("reading Iggy's answer: %w", err)
	}
	// Whatever the status, the answer's body is read, so that the next
	// request starts on a frame boundary.
	if n := le.Uint32(head[4:]); n > 0 {
		if n > 1<<20 {
			return fmt.Errorf("iggy answered a send with %d bytes, expected none", n)
		}
		if _, err := io.CopyN(io.Discard, sock, int64(n)); err != nil {
			return fmt.Errorf("reading Iggy's answer: %w", err)
		}
	}
	if status := le.Uint32(head[:4]); status != 0 {
		return ierror.FromCode(ierror.Code(status))
	}
	return nil
}
