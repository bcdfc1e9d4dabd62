package iggytest

import (
	"encoding/binary"
	"unicode/utf8"
)

// Sessions of the 0.9 front end: the Register login, Logout, and the
// client table that deduplicates metadata operations by request number
// (consensus/src/client_table.rs, server/src/dispatch.rs, auth.rs).

// vsrState is the 0.9 session state, guarded by Server.mu.
type vsrState struct {
	// op is the metadata log position: every Register, Logout, metadata
	// operation (committed or refused by its result) and disconnect takes
	// the next one. A Register's op is the session it hands out.
	op      uint64
	clients map[u128]*vsrClient
}

// vsrClient is a client table entry.
type vsrClient struct {
	epoch     uint64 // the session of its latest Register
	conn      *conn  // the connection bound to it
	watermark uint64 // the highest request number committed
	replies   []cachedReply
	// sent is the highest request number of a send stored for this
	// client: a send that does not go above it is a duplicate.
	sent uint64
}

// duplicateSend tells whether a send of request number req repeats one
// this client has already had stored, and records req otherwise. A
// released 0.9.0 server deduplicates partition writes by request number
// (apache/iggy #3959) and answers a duplicate with an empty body
// (iggy_binary_protocol 0.11.0, responses/messages/send_messages.rs); a
// lockstep client's sends only go up, so this models it per client.
func (e *vsrClient) duplicateSend(req uint64) bool {
	if req <= e.sent {
		return true
	}
	e.sent = req
	return false
}

// cachedReply is a committed metadata reply kept for replays.
type cachedReply struct {
	request  uint64
	checksum u128
	frame    []byte
}

func newVSRState() vsrState { return vsrState{clients: map[u128]*vsrClient{}} }

// disconnect ends the session bound to c, as the server's disconnect
// logout does.
func (v *vsrState) disconnect(c *conn) {
	if c.session == 0 {
		return
	}
	if e := v.clients[c.vsrClient]; e != nil && e.conn == c {
		delete(v.clients, c.vsrClient)
		v.op++
	}
	c.session, c.vsrClient, c.authed = 0, u128{}, false
}

// replay looks a metadata request up in its client's table: a request
// number above the watermark is new (ok, nil); one already committed gets
// its cached reply, or RequestAlreadyApplied once the reply aged out; one
// that reuses a number for other arguments is dropped (drop).
func (e *vsrClient) replay(h reqHeader) (frame []byte, status uint32, drop bool) {
	if h.request > e.watermark {
		return nil, CodeOK, false
	}
	conflict := func(sum u128) bool { return !sum.isZero() && !h.checksum.isZero() && sum != h.checksum }
	for _, r := range e.replies {
		if r.request == h.request {
			if conflict(r.checksum) {
				return nil, CodeOK, true
			}
			return r.frame, CodeOK, false
		}
	}
	return nil, CodeRequestAlreadyApplied, false
}

// remember records a committed reply.
func (e *vsrClient) remember(h reqHeader, frame []byte) {
	e.watermark = max(e.watermark, h.request)
	e.replies = append(e.replies, cachedReply{request: h.request, checksum: h.checksum, frame: frame})
	if len(e.replies) > replyRingCapacity {
		e.replies = e.replies[1:]
	}
}

// login09 is a decoded Register body: [protocol u32][len u8]sdk name
// [len u8]sdk version, then [len u8]username[len u8]password or
// [len u8]token, then [u32 context length][context].
type login09 struct {
	protocol           uint32
	username, password string
	token              string
}

// decodeLoginPrefix reads the ClientVersionInfo prefix and returns the
// rest of the body.
func decodeLoginPrefix(body []byte) (uint32, []byte, bool) {
	if len(body) < 4 {
		return 0, nil, false
	}
	protocol := binary.LittleEndian.Uint32(body)
	rest := body[4:]
	for range 2 { // sdk name, sdk version
		if _, r, ok := wireName(rest); ok {
			rest = r
		} else {
			return 0, nil, false
		}
	}
	return protocol, rest, true
}

// decodeLogin09 decodes a username/password Register body.
func decodeLogin09(body []byte) (login09, bool) {
	protocol, rest, ok := decodeLoginPrefix(body)
	if !ok {
		return login09{}, false
	}
	user, rest, ok := wireName(rest)
	if !ok || len(rest) < 1 || len(rest) < 1+int(rest[0]) || !utf8.Valid(rest[1:1+int(rest[0])]) {
		return login09{}, false
	}
	pass := string(rest[1 : 1+int(rest[0])])
	if !skipContext(rest[1+int(rest[0]):]) {
		return login09{}, false
	}
	return login09{protocol: protocol, username: user, password: pass}, true
}

// decodeTokenLogin09 decodes a personal-access-token Register body.
func decodeTokenLogin09(body []byte) (login09, bool) {
	protocol, rest, ok := decodeLoginPrefix(body)
	if !ok || len(rest) < 1 || len(rest) < 1+int(rest[0]) || !utf8.Valid(rest[1:1+int(rest[0])]) {
		return login09{}, false
	}
	tok := string(rest[1 : 1+int(rest[0])])
	if !skipContext(rest[1+int(rest[0]):]) {
		return login09{}, false
	}
	return login09{protocol: protocol, token: tok}, true
}

// skipContext checks the [u32 length][UTF-8 context] that ends a login.
func skipContext(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	n := uint64(binary.LittleEndian.Uint32(b))
	return n == 0 || uint64(len(b)-4) >= n && utf8.Valid(b[4:4+n])
}

// wireName reads a WireName: [len u8, 1-255] UTF-8 bytes.
func wireName(b []byte) (string, []byte, bool) {
	if len(b) < 1 || b[0] == 0 || len(b) < 1+int(b[0]) || !utf8.Valid(b[1:1+int(b[0])]) {
		return "", nil, false
	}
	return string(b[1 : 1+int(b[0])]), b[1+int(b[0]):], true
}
