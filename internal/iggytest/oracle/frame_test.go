package oracle

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The 0.11.0 frame layout (iggy_binary_protocol 0.11.0,
// src/consensus/header.rs: RequestHeader, ReplyHeader). Every frame, both
// ways, is a 256-byte header and a body; the u32 at 48 is header + body.
const (
	headerBytes = 256
	offSize     = 48
	offCommand  = 60
	offClient   = 128 // request: u128
	offReqSum   = 144 // request: u128 request_checksum
	offRequest  = 168 // request: u64
	offOp       = 176 // request: u8 operation
	offSession  = 184 // request: u64
	offCode     = 196 // request: u32 command code (NonReplicated only; vsr.rs)

	offReplyReqSum = 128 // reply: echoed request_checksum
	offReplyClient = 160 // reply: u128
	offReplyOp     = 176 // reply: u64 op number
	offReplyCommit = 184 // reply: u64
	offReplyReq    = 200 // reply: echoed request number
	offReplyOper   = 208 // reply: echoed operation
	offReplyStatus = 216 // reply: u32 error code, 0 = ok
)

// Header commands (consensus/command.rs).
const (
	cmdRequest = 5
	cmdReply   = 8
)

// Operations (consensus/operation.rs).
const (
	opRegister              = 1
	opNonReplicated         = 2
	opCreateTopicAssignment = 64 // what a CreateTopic reply carries
	opCreateStream          = 128
	opCreateTopic           = 132
	opSendMessages          = 160
)

// Command codes of NonReplicated requests (codes.rs).
const (
	codePing            = 1
	codeClusterMetadata = 12
	codePoll            = 100
	codeGetStream       = 200
	codeGetTopic        = 300
)

var le = binary.LittleEndian

// headerFields names every byte of a request header.
var headerFields = []field{
	{"header.checksum", 0, 16}, {"header.checksum_body", 16, 32}, {"header.cluster", 32, 48},
	{"header.size", 48, 52}, {"header.view", 52, 56}, {"header.release", 56, 60},
	{"header.command", 60, 61}, {"header.replica", 61, 62}, {"header.reserved_frame", 62, 128},
	{"header.client", 128, 144}, {"header.request_checksum", 144, 160}, {"header.timestamp", 160, 168},
	{"header.request", 168, 176}, {"header.operation", 176, 177}, {"header.operation_padding", 177, 184},
	{"header.session", 184, 192}, {"header.user_id", 192, 196}, {"header.code", 196, 200},
	{"header.reserved", 200, 256},
}

// field is one named span [off, end) of a frame.
type field struct {
	name     string
	off, end int
}

// request is a request frame split into named fields.
type request struct {
	raw    []byte
	fields []field
	err    error // why the body did not decode; the rest of it is one field
}

func (r *request) op() uint8       { return r.raw[offOp] }
func (r *request) number() uint64  { return le.Uint64(r.raw[offRequest:]) }
func (r *request) session() uint64 { return le.Uint64(r.raw[offSession:]) }
func (r *request) body() []byte    { return r.raw[headerBytes:] }

// code is the command code of a NonReplicated request, else 0.
func (r *request) code() uint32 {
	if r.op() != opNonReplicated {
		return 0
	}
	return le.Uint32(r.raw[offCode:])
}

// kind names what the request does.
func (r *request) kind() string {
	switch r.op() {
	case opRegister:
		return "login"
	case opCreateStream:
		return "create stream"
	case opCreateTopic:
		return "create topic"
	case opSendMessages:
		return "send messages"
	case opNonReplicated:
		switch r.code() {
		case codePing:
			return "ping"
		case codeClusterMetadata:
			return "cluster metadata"
		case codePoll:
			return "poll messages"
		case codeGetStream:
			return "get stream"
		case codeGetTopic:
			return "get topic"
		}
		return fmt.Sprintf("code %d", r.code())
	}
	return fmt.Sprintf("operation %d", r.op())
}

// get returns the bytes of the named field, or nil.
func (r *request) get(name string) []byte {
	for _, f := range r.fields {
		if f.name == name {
			return r.raw[f.off:f.end]
		}
	}
	return nil
}

// String describes the request in one line.
func (r *request) String() string {
	return fmt.Sprintf("%s (request %d, session %#x, %d bytes)", r.kind(), r.number(), r.session(), len(r.raw))
}

// decodeRequest splits one whole request frame into named fields. A body
// that does not decode leaves its undecoded rest as the field "body.rest"
// and the reason in err.
func decodeRequest(raw []byte) (*request, error) {
	if len(raw) < headerBytes {
		return nil, fmt.Errorf("a request of %d bytes has no 256-byte header", len(raw))
	}
	if size := le.Uint32(raw[offSize:]); int(size) != len(raw) {
		return nil, fmt.Errorf("header.size says %d bytes, the frame has %d", size, len(raw))
	}
	r := &request{raw: raw, fields: append([]field(nil), headerFields...)}
	c := &cursor{r: r, pos: headerBytes}
	switch r.kind() {
	case "login":
		c.u32("login.protocol")
		c.name8("login.sdk_name")
		c.name8("login.sdk_version")
		c.name8("login.username")
		c.name8("login.password")
		c.take("login.context", int(c.u32("login.context_length")))
	case "create stream":
		c.name8("stream.name")
		c.options()
	case "get stream":
		c.identifier("stream")
	case "get topic":
		c.identifier("stream")
		c.identifier("topic")
	case "create topic":
		c.identifier("stream")
		c.u32("topic.partitions")
		c.name8("topic.name")
		c.options()
	case "send messages":
		c.send()
	case "poll messages":
		c.poll()
	case "ping", "cluster metadata":
	default:
		c.take("body", len(raw)-headerBytes)
	}
	if c.err == nil && c.pos != len(raw) {
		c.err = fmt.Errorf("%d bytes after the last field", len(raw)-c.pos)
	}
	if c.err != nil {
		r.err = c.err
		r.fields = append(r.fields, field{"body.rest", c.pos, len(raw)})
	}
	return r, nil
}

// cursor reads fields of a request body in order, naming each. After the
// first error it reads nothing.
type cursor struct {
	r   *request
	pos int
	err error
}

func (c *cursor) take(name string, n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || len(c.r.raw)-c.pos < n {
		c.err = fmt.Errorf("%s: %d bytes at byte %d, %d left", name, n, c.pos, len(c.r.raw)-c.pos)
		return nil
	}
	c.r.fields = append(c.r.fields, field{name, c.pos, c.pos + n})
	c.pos += n
	return c.r.raw[c.pos-n : c.pos]
}

func (c *cursor) u8(name string) uint8 {
	if b := c.take(name, 1); b != nil {
		return b[0]
	}
	return 0
}

func (c *cursor) u32(name string) uint32 {
	if b := c.take(name, 4); b != nil {
		return le.Uint32(b)
	}
	return 0
}

func (c *cursor) u64(name string) uint64 {
	if b := c.take(name, 8); b != nil {
		return le.Uint64(b)
	}
	return 0
}

// name8 reads [len u8][bytes].
func (c *cursor) name8(name string) {
	c.take(name, int(c.u8(name+".length")))
}

// identifier reads [kind u8][len u8][value].
func (c *cursor) identifier(name string) {
	c.u8(name + ".kind")
	c.take(name+".value", int(c.u8(name+".length")))
}

// options reads option entries to the end of the body, each a String key
// and a value, [kind u8][len u32][bytes] both (primitives/options.rs); the
// fields are named by the key.
func (c *cursor) options() {
	for i := 0; c.err == nil && c.pos < len(c.r.raw); i++ {
		first := len(c.r.fields)
		c.u8("option.key_kind")
		key := c.take("option.key", int(c.u32("option.key_length")))
		c.u8("option.value_kind")
		c.take("option.value", int(c.u32("option.value_length")))
		name := fmt.Sprintf("options[%s]", key)
		for j := first; j < len(c.r.fields); j++ {
			c.r.fields[j].name = strings.Replace(c.r.fields[j].name, "option", name, 1)
		}
	}
}

// Batch layout (iggy_binary_protocol 0.11.0 src/batch.rs).
const (
	batchHeaderBytes = 256
	frameHeaderBytes = 48
)

// send reads a SendMessages body: [metadata length u32][stream][topic]
// [partitioning kind u8, len u8, value][count u32], the 256-byte batch
// header, then each message frame (requests/messages/send_messages.rs).
func (c *cursor) send() {
	c.u32("metadata_length")
	c.identifier("stream")
	c.identifier("topic")
	c.u8("partitioning.kind")
	c.take("partitioning.value", int(c.u8("partitioning.length")))
	count := c.u32("messages_count")
	c.u64("batch.partition_id")
	c.u64("batch.base_offset")
	c.u64("batch.base_timestamp")
	c.u64("batch.origin_timestamp")
	c.u64("batch.length")
	c.u64("batch.checksum")
	c.u32("batch.message_count")
	c.take("batch.reserved", batchHeaderBytes-52)
	for i := 0; c.err == nil && c.pos < len(c.r.raw); i++ {
		m := fmt.Sprintf("message[%d].", i)
		c.u64(m + "checksum")
		c.take(m+"id", 16)
		c.u32(m + "offset_delta")
		c.u32(m + "timestamp_delta")
		headers := c.u32(m + "headers_length")
		payload := c.u32(m + "payload_length")
		c.u64(m + "reserved")
		c.take(m+"payload", int(payload))
		c.take(m+"headers", int(headers))
		if i >= int(count) && c.err == nil {
			c.err = fmt.Errorf("more message frames than the %d announced", count)
		}
	}
}

// poll reads a PollMessages body: [consumer kind u8][consumer][stream]
// [topic][has partition u8][partition u32][strategy kind u8][value u64]
// [count u32][auto commit u8] (requests/messages/poll_messages.rs).
func (c *cursor) poll() {
	c.u8("consumer.kind")
	c.identifier("consumer.id")
	c.identifier("stream")
	c.identifier("topic")
	c.u8("partition.present")
	c.u32("partition.id")
	c.u8("strategy.kind")
	c.u64("strategy.value")
	c.u32("count")
	c.u8("auto_commit")
}
