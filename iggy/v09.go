package iggy

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/zeebo/xxh3"
)

// v09 is the dialect of Iggy server 0.9 (binary protocol 0.11.0). Every
// frame, both ways, is a 256-byte header followed by a body; the header's
// size field counts both. Requests name an operation (Register for the
// login, NonReplicated plus a command code for reads and ping, or a
// replicated operation such as CreateStream or SendMessages) and carry the
// client id, the session of the login and a request number; replies echo
// the request number and the operation and carry an error status.
//
// Request numbers follow the released Iggy 0.9.0 SDK (crate iggy 0.11.0,
// src/vsr.rs encode_request_header and src/session.rs): the login carries
// 0; every replicated operation, metadata (consumer groups included),
// SendMessages and the consumer offset writes alike, takes the next number
// (1, 2, 3…), because the server deduplicates partition writes
// by request number and answers a send that repeats one with an empty body
// (iggy_binary_protocol 0.11.0, responses/messages/send_messages.rs);
// NonReplicated requests (ping, reads, polls) carry the current number
// without taking it. The pre-release server-0.9.0-edge.5 accepts the same.
//
// Sources: iggy_binary_protocol 0.11.0 (consensus/header.rs for the
// layouts, consensus/operation.rs, batch.rs) and iggy 0.11.0 (vsr.rs,
// session.rs), the crates of the Iggy 0.9.0 release; server-0.9.0-edge.5's
// core/server/src/dispatch.rs for how a server answers.
type v09 struct {
	client  [16]byte // random, non-zero, new for each login
	session uint64   // from the login reply; 0 before
	// next is the request number the next replicated operation takes
	// (then next+1). Pings, reads and polls carry it unchanged.
	next uint64
	// routes are the topics whose Balanced and MessagesKey sends this
	// connection resolved to a partition (see route).
	routes   map[string]*v09Route
	routeKey []byte  // the stream and topic of the last routed send
	routed   [4]byte // the partition id of the last routed send
	// groups are the consumer group assignments this session read, by
	// stream, topic and group (see pollAssigned).
	groups map[string]*v09Assignment
}

// newV09 returns a dialect that has not logged in yet.
func newV09() *v09 {
	v := &v09{next: 1}
	v.client = v09NewClientID()
	return v
}

// version tells which dialect this is.
func (*v09) version() Version { return Version09 }

var v09le = binary.LittleEndian

// v09Protocol is the binary protocol version this dialect speaks, packed as
// major<<20 | minor<<10 | patch (core/binary_protocol/src/version.rs).
const v09Protocol = 0<<20 | 11<<10 // | patch 0

// v09ClientVersion is what the login tells the server of this client's
// version (any 1 to 255 bytes).
const v09ClientVersion = "protocol-0.11.0"

// Header layout (consensus/header.rs: GenericHeader, RequestHeader,
// ReplyHeader, EvictionHeader).
const (
	v09HeaderBytes = 256
	v09OffSize     = 48  // u32: header + body
	v09OffCommand  = 60  // u8: 5 request, 8 reply, 13 eviction
	v09OffClient   = 128 // request: u128 client id
	v09OffReqSum   = 144 // request: u128 checksum of the body, 0 = none
	v09OffRequest  = 168 // request: u64 request number
	v09OffOp       = 176 // request: u8 operation
	v09OffSession  = 184 // request: u64 session
	v09OffCode     = 196 // request: u32 command code (NonReplicated only)
	v09OffReplyReq = 200 // reply: u64 echoed request number
	v09OffReplyOp  = 208 // reply: u8 echoed operation
	v09OffStatus   = 216 // reply: u32 error status, 0 = ok
	v09OffEvictMax = 144 // eviction: u32 newest accepted protocol
	v09OffEvictMin = 148 // eviction: u32 oldest accepted protocol
	v09OffReason   = 255 // eviction: u8 reason
)

// Header commands (consensus/command.rs).
const (
	v09CmdRequest  = 5
	v09CmdReply    = 8
	v09CmdEviction = 13
)

// Operations (consensus/operation.rs).
const (
	v09OpRegister      = 1
	v09OpNonReplicated = 2
	// v09OpCreateTopicAssigned is what a CreateTopic reply echoes: the
	// server replicates the topic as CreateTopicWithAssignments.
	v09OpCreateTopicAssigned = 64
	v09OpCreateStream        = 128
	v09OpDeleteStream        = 130
	v09OpCreateTopic         = 132
	v09OpCreateToken         = 146
	v09OpSendMessages        = 160
)

// Command codes of NonReplicated requests (codes.rs).
const (
	v09CodePing      = 1
	v09CodePoll      = 100
	v09CodeFlush     = 102
	v09CodeGetTopic  = 300
	v09CodeGetStream = 200
)

// Error statuses that mean "send the same request again".
const (
	v09TransientNotCommitted = 57 // outcome unknown; a replay is deduplicated for metadata
	v09TransientNotAccepted  = 58 // nothing was applied
)

// v09MaxFrameBytes is the largest frame a 0.9 server accepts by default
// ([message_bus] max_message_size = 64 MiB); a larger one makes it drop the
// connection, so sends refuse it up front.
const v09MaxFrameBytes = 64 << 20

// v09Zero is a zeroed block appended where a header starts.
var v09Zero [v09HeaderBytes]byte

// v09NewClientID returns a random non-zero client id.
func v09NewClientID() [16]byte {
	var id [16]byte
	for id == ([16]byte{}) {
		_, _ = rand.Read(id[:]) // never fails (crypto/rand, Go 1.24+)
	}
	return id
}

// appendHeader appends a request header for op with request number req;
// code is the command code of a NonReplicated request. The size is set by
// seal.
func (v *v09) appendHeader(b []byte, op uint8, code uint32, req uint64) []byte {
	h := len(b)
	b = append(b, v09Zero[:]...)
	b[h+v09OffCommand] = v09CmdRequest
	copy(b[h+v09OffClient:], v.client[:])
	v09le.PutUint64(b[h+v09OffRequest:], req)
	b[h+v09OffOp] = op
	if op != v09OpRegister {
		v09le.PutUint64(b[h+v09OffSession:], v.session)
	}
	if op == v09OpNonReplicated {
		v09le.PutUint32(b[h+v09OffCode:], code)
	}
	return b
}

// seal sets the size of the request b (header at b[0:256]) and, for the
// login and metadata operations, the checksum of its body, which lets the
// server tell a replay from a request number reused for other arguments.
func v09Seal(b []byte, stamp bool) []byte {
	v09le.PutUint32(b[v09OffSize:], uint32(len(b)))
	if stamp {
		v09le.PutUint64(b[v09OffReqSum:], xxh3.Hash(b[v09HeaderBytes:]))
	}
	return b
}

// claim returns the request number of a new replicated operation
// (metadata or a send).
func (v *v09) claim() uint64 {
	n := v.next
	v.next++
	return n
}

// exchange writes the request req and reads its reply, checking that the
// reply answers it (request number and operation). It returns the body,
// valid until the next read unless owned; for an error status it reads the
// body and returns a *ServerError.
func (v *v09) exchange(w *wire, req []byte, owned bool) ([]byte, error) {
	if err := w.write(req); err != nil {
		return nil, err
	}
	return v09ReadReply(w, v09le.Uint64(req[v09OffRequest:]), req[v09OffOp], owned)
}

// v09ReadReply reads the reply to request number req of operation op.
func v09ReadReply(w *wire, req uint64, op uint8, owned bool) ([]byte, error) {
	h, err := w.read(v09HeaderBytes)
	if err != nil {
		return nil, err
	}
	n, status, err := v09ParseReply(h, req, op)
	if err != nil {
		return nil, fmt.Errorf("iggy at %s: %w", w.addr, err)
	}
	var body []byte
	switch {
	case owned:
		body, err = w.readOwned(n)
	case n > 0:
		body, err = w.read(n)
	}
	if err != nil {
		return nil, err
	}
	if status != 0 {
		return nil, &ServerError{Code: status}
	}
	return body, nil
}

// v09ParseReply checks a reply header against the request it should answer
// and returns the body length and the status. An eviction is returned as a
// *v09Evicted.
func v09ParseReply(h []byte, req uint64, op uint8) (bodyLen int, status uint32, err error) {
	if len(h) < v09HeaderBytes {
		return 0, 0, fmt.Errorf("a reply header of %d bytes, not %d", len(h), v09HeaderBytes)
	}
	switch h[v09OffCommand] {
	case v09CmdReply:
	case v09CmdEviction:
		return 0, 0, v09Eviction(h)
	default:
		return 0, 0, fmt.Errorf("answered with a frame of command %d, not a reply (8)", h[v09OffCommand])
	}
	size := v09le.Uint32(h[v09OffSize:])
	if size < v09HeaderBytes || size > maxReplyBytes {
		return 0, 0, fmt.Errorf("sent a reply of size %d", size)
	}
	if got := v09le.Uint64(h[v09OffReplyReq:]); got != req {
		return 0, 0, fmt.Errorf("answered request %d while request %d was waiting", got, req)
	}
	if got := h[v09OffReplyOp]; got != op && (op != v09OpCreateTopic || got != v09OpCreateTopicAssigned) {
		return 0, 0, fmt.Errorf("answered operation %d to a request of operation %d", got, op)
	}
	return int(size) - v09HeaderBytes, v09le.Uint32(h[v09OffStatus:]), nil
}

// v09Result strips the result section `[count u32]{index u32, result u32}*`
// that starts the body of login and metadata replies. A non-zero result is
// the server's error code.
func v09Result(body []byte) ([]byte, error) {
	if len(body) < 4 {
		return nil, fmt.Errorf("a reply body of %d bytes has no result section", len(body))
	}
	count := v09le.Uint32(body)
	if count == 0 {
		return body[4:], nil
	}
	if uint64(count) > uint64(len(body)-4)/8 {
		return nil, fmt.Errorf("a result section of %d entries in a body of %d bytes", count, len(body))
	}
	if code := v09le.Uint32(body[8:]); code != 0 {
		return nil, &ServerError{Code: code}
	}
	return body[4+8*int(count):], nil
}

// v09Retry says which transient statuses a request may be sent again for.
type v09Retry uint8

const (
	v09NoRetry          v09Retry = iota
	v09RetryNotAccepted          // 58 only: nothing was applied
	v09RetryTransient            // 57 and 58: the server deduplicates the replay
)

// v09RetryPause is the wait before sending a transiently refused request
// again.
const v09RetryPause = 50 * time.Millisecond

// shouldRetry tells whether err is a transient status r allows a replay for.
func (r v09Retry) shouldRetry(err error) bool {
	switch CodeOf(err) {
	case v09TransientNotAccepted:
		return r != v09NoRetry
	case v09TransientNotCommitted:
		return r == v09RetryTransient
	}
	return false
}

// metadata sends the replicated request req and returns the payload after
// the reply's result section. A transient refusal is retried once with the
// same bytes (same request number), as the server's client table expects.
func (v *v09) metadata(w *wire, req []byte, retry v09Retry) ([]byte, error) {
	body, err := v.exchange(w, req, false)
	if err == nil {
		body, err = v09Result(body)
	}
	if retry.shouldRetry(err) {
		time.Sleep(v09RetryPause)
		if body, err = v.exchange(w, req, false); err == nil {
			body, err = v09Result(body)
		}
	}
	return body, err
}

// v09Evicted is an Eviction frame: the server ended the session. The
// connection is no longer usable.
type v09Evicted struct {
	reason   uint8
	min, max uint32 // accepted protocol window, with reason 14
}

// Eviction reasons (consensus/header.rs: EvictionReason).
const (
	v09EvictInvalidCredentials   = 9
	v09EvictInvalidToken         = 10
	v09EvictUserInactive         = 11
	v09EvictIncompatibleProtocol = 14
	v09EvictMalformedLogin       = 15
)

// v09EvictionReasons names the reasons for messages.
var v09EvictionReasons = [...]string{
	1: "no session", 2: "client release too low", 3: "client release too high",
	4: "invalid request operation", 5: "invalid request body", 6: "invalid request body size",
	7: "session too low", 8: "session release mismatch", 9: "invalid credentials",
	10: "invalid personal access token", 11: "user inactive", 12: "session error",
	13: "stale client", 14: "incompatible protocol", 15: "malformed login",
}

// v09Eviction reads an eviction header.
func v09Eviction(h []byte) *v09Evicted {
	return &v09Evicted{
		reason: h[v09OffReason],
		min:    v09le.Uint32(h[v09OffEvictMin:]),
		max:    v09le.Uint32(h[v09OffEvictMax:]),
	}
}

// Error says why the server ended the session.
func (e *v09Evicted) Error() string {
	if e.reason == v09EvictIncompatibleProtocol {
		return "the server ended the session: it accepts " + v09Window(e.min, e.max)
	}
	return fmt.Sprintf("the server ended the session (eviction reason %d: %s)", e.reason, e.reasonName())
}

// reasonName names the eviction reason.
func (e *v09Evicted) reasonName() string {
	if int(e.reason) < len(v09EvictionReasons) && v09EvictionReasons[e.reason] != "" {
		return v09EvictionReasons[e.reason]
	}
	return "unknown"
}

// loginError turns an eviction during login into what it means: a refused
// login (*ServerError with the 0.8-compatible code) or a server that does
// not accept protocol 0.11 (*UnsupportedServerError).
func (e *v09Evicted) loginError(addr string) error {
	switch e.reason {
	case v09EvictInvalidCredentials:
		return &ServerError{Code: CodeInvalidCredentials}
	case v09EvictInvalidToken:
		return &ServerError{Code: CodeInvalidToken}
	case v09EvictUserInactive:
		return &ServerError{Code: CodeUserInactive}
	case v09EvictIncompatibleProtocol:
		if e.min != 0 && e.min <= e.max {
			return &UnsupportedServerError{Addr: addr, Server: v09Window(e.min, e.max)}
		}
	case v09EvictMalformedLogin:
		return fmt.Errorf("iggy at %s refused the login as malformed (eviction reason 15); it does not read protocol %s logins", addr, v09FormatProtocol(v09Protocol))
	}
	return fmt.Errorf("iggy at %s: %w", addr, e)
}

// v09FormatProtocol renders a packed protocol version as major.minor.patch.
func v09FormatProtocol(p uint32) string {
	return fmt.Sprintf("%d.%d.%d", p>>20&1023, p>>10&1023, p&1023)
}

// v09Window describes an accepted protocol window and the Iggy release it
// most likely belongs to, e.g. "protocol 0.12.0 to 0.12.3 (Iggy 0.10 or
// later)".
func v09Window(min, max uint32) string {
	s := "protocol " + v09FormatProtocol(min)
	if max != min {
		s += " to " + v09FormatProtocol(max)
	}
	switch minor := max >> 10 & 1023; {
	case max>>20 != 0 || minor >= 12:
		return s + " (Iggy 0.10 or later)"
	case minor == 11:
		return s + " (Iggy 0.9)"
	}
	return s + " (a pre-release of Iggy 0.9)"
}

// errV09NoSession is a request that needs a login made before it.
var errV09NoSession = errors.New("the Iggy 0.9 connection is not logged in")
