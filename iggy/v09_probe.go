package iggy

import (
	"errors"
	"fmt"
	"io"
)

// v09From08 is what an Iggy 0.8 server answers to each 8-byte piece of a
// 0.9 ping: status 3 (InvalidCommand) and an empty body. The 0.8 server
// reads [u32 length][u32 code] frames and refuses a length below 4
// (core/server/src/tcp/connection_handler.rs and RequestFrame::
// payload_length at server-0.8.0); the first 48 bytes of a 0.9 header are
// zero, so it sends six such frames and then waits for a body of 252 bytes
// that never comes.
var v09From08 = [8]byte{3, 0, 0, 0, 0, 0, 0, 0}

// v09ProbeRequest is the request number of the probe's ping.
const v09ProbeRequest = 1

// probeV09 pings in the 0.9 dialect to find out what answers: isV08 when an
// Iggy 0.8 server refused the frame (the caller closes the connection and
// dials again for 0.8). It returns an *UnsupportedServerError when the
// server ended the session (a newer protocol), a *NotIggyError when the
// answer is not Iggy's, and otherwise leaves the connection at a frame
// boundary, ready for the login.
func probeV09(w *wire) (isV08 bool, err error) {
	v := &v09{client: v09NewClientID()}
	req := v09Seal(v.appendHeader(w.buf(v09HeaderBytes), v09OpNonReplicated, v09CodePing, v09ProbeRequest), false)
	if err := w.write(req); err != nil {
		return false, err
	}
	first, err := w.read(len(v09From08))
	if err != nil {
		return false, err
	}
	var h [v09HeaderBytes]byte
	copy(h[:], first)
	if [8]byte(h[:8]) == v09From08 {
		return true, nil
	}
	if n, err := io.ReadFull(w.nc, h[8:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isTimeout(err) {
			return false, &NotIggyError{Addr: w.addr, Detail: v09NotIggyDetail(h[:8+n])}
		}
		return false, fmt.Errorf("reading from Iggy at %s: %w", w.addr, err)
	}
	n, status, err := v09ClassifyProbe(h[:], w.addr)
	if err != nil {
		return false, err
	}
	if n > 0 {
		if _, err := w.read(n); err != nil {
			return false, err
		}
	}
	if status != 0 {
		return false, &ServerError{Code: status}
	}
	return false, nil
}

// v09ClassifyProbe reads the 256-byte answer h to the probe's ping: a ping
// reply (its body length and status), an eviction (*UnsupportedServerError)
// or anything else (*NotIggyError).
func v09ClassifyProbe(h []byte, addr string) (bodyLen int, status uint32, err error) {
	if len(h) >= v09HeaderBytes && h[v09OffCommand] == v09CmdEviction {
		e := v09Eviction(h)
		server := fmt.Sprintf("a protocol that ended the session on a protocol %s ping (eviction reason %d: %s)",
			v09FormatProtocol(v09Protocol), e.reason, e.reasonName())
		if e.min != 0 && e.min <= e.max {
			server = v09Window(e.min, e.max)
		}
		return 0, 0, &UnsupportedServerError{Addr: addr, Server: server}
	}
	n, status, err := v09ParseReply(h, v09ProbeRequest, v09OpNonReplicated)
	if err != nil {
		return 0, 0, &NotIggyError{Addr: addr, Detail: v09NotIggyDetail(h)}
	}
	return n, status, nil
}

// v09NotIggyDetail says what a non-Iggy server answered, quoting at most
// the first 64 bytes.
func v09NotIggyDetail(b []byte) string {
	const quote = 64
	if len(b) > quote {
		return fmt.Sprintf("it answered a ping with bytes that are not an Iggy reply: %q…", b[:quote])
	}
	return fmt.Sprintf("it answered a ping with bytes that are not an Iggy reply: %q", b)
}
