package iggytest

import (
	"encoding/binary"
	"io"
)

// The 0.8 framing: request [u32 length = 4 + payload][u32 code][payload],
// response [u32 status][u32 length][payload].

// serveFrames08 reads 0.8 requests from c until the stream ends, a write
// fails or a fault drops the connection. Like server 0.8.0, a length below
// 4 is answered with InvalidCommand and the next 8 bytes are read as the
// next header; so a 256-byte 0.9 header gets one InvalidCommand per leading
// 8-byte group whose length is 0, then its size field (bytes 48-51) is read
// as a length and the server waits for that many bytes.
func (s *Server) serveFrames08(c *conn) {
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return
		}
		length := binary.LittleEndian.Uint32(hdr[0:4])
		code := Command(binary.LittleEndian.Uint32(hdr[4:8]))
		if length < 4 {
			c.busy.Store(true)
			if !respond08(c, CodeInvalidCommand, nil) {
				return
			}
			continue
		}
		plen := int64(length) - 4
		if plen > int64(s.opts.MaxFrameSize) {
			return
		}
		if code != CmdSendMessages && plen > maxControlPayload {
			if _, err := io.CopyN(io.Discard, c.r, plen); err != nil {
				return
			}
			c.busy.Store(true)
			if !respond08(c, CodeInvalidCommand, nil) {
				return
			}
			continue
		}
		payload, err := readPayload(c.r, int(plen))
		if err != nil {
			return
		}
		c.busy.Store(true)
		if c.stopping.Load() && c.isClosed() {
			return // a graceful stop said goodbye while the request arrived
		}
		if !s.request08(c, code, payload) {
			return
		}
	}
}

// request08 runs one 0.8 request through the faults and its handler and
// answers it. It returns false when the connection must be closed.
func (s *Server) request08(c *conn, code Command, payload []byte) bool {
	v := s.admit(c, code)
	switch {
	case v.drop:
		return false
	case v.fail:
		return respond08(c, v.failCode, nil)
	}
	var status uint32
	var body []byte
	if code == CmdSendMessages {
		// Parse, validate and copy without the lock; only the append holds it.
		// c.authed is written only by this goroutine.
		req, st := prepareSend08(c.authed, payload)
		if st == CodeOK {
			s.mu.Lock()
			st = s.commitSend(req)
			s.mu.Unlock()
		}
		status = st
	} else {
		s.mu.Lock()
		status, body = s.handle08(c, code, payload)
		s.mu.Unlock()
	}
	if v.dropAfter {
		return false
	}
	return respond08(c, status, body)
}

// respond08 answers the request being handled.
func respond08(c *conn, status uint32, body []byte) bool {
	return c.send(header08(status, len(body)), body)
}

// header08 returns the 8-byte header of a response with an n-byte body.
func header08(status uint32, n int) []byte {
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, 8), status)
	return binary.LittleEndian.AppendUint32(b, uint32(n))
}
