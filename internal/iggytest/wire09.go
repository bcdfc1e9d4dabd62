package iggytest

import (
	"encoding/binary"
	"io"

	"github.com/zeebo/xxh3"
)

// The 0.9 framing (binary_protocol consensus/header.rs): every frame, both
// ways, is a 256-byte header and a body; the u32 at 48 is the whole size.
//
// Request:  client u128 @128, request checksum u128 @144 (0: none),
// timestamp u64 @160, request number u64 @168, operation u8 @176, session
// u64 @184, user id u32 @192, command code u32 @196 (NonReplicated only).
// Reply:    request checksum @128, client @160, op @176, commit @184,
// timestamp @192, request number @200, operation @208, status u32 @216.
// Eviction: client @128, accepted protocol window max u32 @144 and min
// @148 (reason 14 only), reason u8 @255; header only.
// Both copy cluster (u128 @32), view @52, release @56 and replica @61 of
// the request (an eviction zeroes them).

// Header commands (consensus/command.rs).
const (
	command09Request  = 5
	command09Reply    = 8
	command09Eviction = 13
	command09Max      = 29 // the highest a header may carry
)

// Operations (consensus/operation.rs).
const (
	opRegister           = 1
	opNonReplicated      = 2
	opLogout             = 3
	opCreateTopicAssign  = 64 // what a CreateTopic reply carries
	opCreatePartsAssign  = 65 // what a CreatePartitions reply carries
	opCreateStream       = 128
	opUpdateStream       = 129
	opDeleteStream       = 130
	opCreateTopic        = 132
	opUpdateTopic        = 133
	opDeleteTopic        = 134
	opCreatePartitions   = 136
	opDeletePartitions   = 137
	opCreateGroup        = 139
	opDeleteGroup        = 140
	opCreatePAT          = 146
	opDeletePAT          = 147
	opJoinGroup          = 148
	opLeaveGroup         = 149
	opSendMessages       = 160
	opStoreConsumerOff   = 161
	opDeleteConsumerOff  = 162
	opPartitionPlaneBase = 160 // operations from here on go to a partition
)

// opCommands maps the replicated operations to their command codes
// (binary_protocol dispatch.rs COMMAND_TABLE).
var opCommands = map[uint8]Command{
	128: CmdCreateStream, 129: CmdUpdateStream, 130: CmdDeleteStream, 131: CmdPurgeStream,
	132: CmdCreateTopic, 133: CmdUpdateTopic, 134: CmdDeleteTopic, 135: CmdPurgeTopic,
	136: CmdCreatePartitions, 137: CmdDeletePartitions, 138: CmdDeleteSegments,
	139: CmdCreateConsumerGroup, 140: CmdDeleteConsumerGroup, 141: CmdCreateUser,
	142: CmdUpdateUser, 143: CmdDeleteUser, 144: CmdChangePassword, 145: CmdUpdatePermissions,
	146: CmdCreatePersonalAccessToken, 147: CmdDeletePersonalAccessToken,
	148: CmdJoinConsumerGroup, 149: CmdLeaveConsumerGroup,
	160: CmdSendMessages, 161: CmdStoreConsumerOffset, 162: CmdDeleteConsumerOffset,
}

// reqHeader is a decoded 0.9 request header.
type reqHeader struct {
	raw      []byte // the 256 header bytes
	client   u128
	checksum u128 // request checksum; zero: none
	request  uint64
	op       uint8
	session  uint64
	code     uint32 // command code of a NonReplicated request
}

// validOperation reports whether b is an Operation discriminant.
func validOperation(b uint8) bool {
	return b <= opLogout || b >= 64 && b <= 68 || b >= 128 && b <= 149 || b >= 160 && b <= 162
}

// parseRequest09 decodes and validates a request header as
// RequestHeader::validate does; ok is false for one the server drops
// without an answer.
func parseRequest09(raw []byte) (reqHeader, bool) {
	h := reqHeader{raw: raw}
	copy(h.client[:], raw[128:144])
	copy(h.checksum[:], raw[144:160])
	h.request = binary.LittleEndian.Uint64(raw[168:176])
	h.op = raw[176]
	h.session = binary.LittleEndian.Uint64(raw[184:192])
	h.code = binary.LittleEndian.Uint32(raw[196:200])
	switch {
	case raw[60] != command09Request, !validOperation(h.op), h.op == 0, h.client.isZero():
		return h, false
	case h.op == opRegister:
		return h, h.session == 0 && h.request == 0
	case h.op == opNonReplicated:
		return h, true
	}
	return h, h.session > 0 && h.request > 0
}

// checksumOK verifies the request checksum: XXH3-64 of the body, widened to
// u128; a zero checksum is not checked.
func (h reqHeader) checksumOK(body []byte) bool {
	if h.checksum.isZero() {
		return true
	}
	var want u128
	binary.LittleEndian.PutUint64(want[:], xxh3.Hash(body))
	return h.checksum == want
}

// reply09 builds a reply header for a body of n bytes.
func reply09(h reqHeader, client u128, op, commit uint64, operation uint8, status uint32, n int) []byte {
	b := make([]byte, headerSize09)
	copy(b[32:48], h.raw[32:48]) // cluster
	copy(b[52:60], h.raw[52:60]) // view, release
	b[61] = h.raw[61]            // replica
	binary.LittleEndian.PutUint32(b[48:52], uint32(headerSize09+n))
	b[60] = command09Reply
	copy(b[128:144], h.checksum[:])
	copy(b[160:176], client[:])
	binary.LittleEndian.PutUint64(b[176:184], op)
	binary.LittleEndian.PutUint64(b[184:192], commit)
	copy(b[192:200], h.raw[160:168]) // timestamp
	binary.LittleEndian.PutUint64(b[200:208], h.request)
	b[208] = operation
	binary.LittleEndian.PutUint32(b[216:220], status)
	return b
}

// eviction09 builds an Eviction frame; max and min are the accepted
// protocol window of reason 14 (zero otherwise).
func eviction09(client u128, reason uint8, max, min uint32) []byte {
	b := make([]byte, headerSize09)
	binary.LittleEndian.PutUint32(b[48:52], headerSize09)
	b[60] = command09Eviction
	copy(b[128:144], client[:])
	binary.LittleEndian.PutUint32(b[144:148], max)
	binary.LittleEndian.PutUint32(b[148:152], min)
	b[255] = reason
	return b
}

// serveFrames09 reads 0.9 frames from c until the stream ends, a write
// fails or a fault drops the connection. As in server 0.9.0 a frame whose
// size is below 256 or above the limit, or whose command byte is no
// command, ends the connection; anything shorter than a header (a 0.8
// request) is just waited on.
func (s *Server) serveFrames09(c *conn) {
	for {
		hdr := make([]byte, headerSize09)
		if _, err := io.ReadFull(c.r, hdr); err != nil {
			return
		}
		size := int64(binary.LittleEndian.Uint32(hdr[48:52]))
		if size < headerSize09 || size > int64(s.opts.MaxFrameSize) || hdr[60] > command09Max {
			return
		}
		body, err := readPayload(c.r, int(size-headerSize09))
		if err != nil {
			return
		}
		c.busy.Store(true)
		if c.stopping.Load() && c.isClosed() {
			return
		}
		if !s.request09(c, hdr, body) {
			return
		}
	}
}

// request09 runs one 0.9 frame through the faults and its handler and
// answers it (or not, as the server would). It returns false when the
// connection must be closed.
func (s *Server) request09(c *conn, raw, body []byte) bool {
	h, ok := parseRequest09(raw)
	if !ok {
		return c.idle() // not a request, or an invalid header: dropped
	}
	var v verdict
	if cmd, ok := s.command09(h, body); ok {
		v = s.admit(c, cmd)
	}
	switch {
	case v.drop:
		return false
	case v.fail:
		return c.send(reply09(h, c.transportID(), h.session, s.commit09(), h.op, v.failCode, 0))
	}
	answer := s.dispatch09(c, h, body)
	if v.dropAfter {
		return false
	}
	if answer == nil {
		return c.idle()
	}
	return c.send(answer...)
}

// command09 is the command a request counts and matches faults as.
func (s *Server) command09(h reqHeader, body []byte) (Command, bool) {
	switch h.op {
	case opNonReplicated:
		return Command(h.code), true
	case opRegister:
		if _, ok := decodeLogin09(body); ok {
			return CmdLoginUser, true
		}
		return CmdLoginWithPersonalAccessToken, true
	case opLogout:
		return CmdLogoutUser, true
	}
	cmd, ok := opCommands[h.op]
	return cmd, ok
}

// transportID is the connection's id as a 0.9 server puts it in replies it
// sends before (or without) a login.
func (c *conn) transportID() u128 {
	var id u128
	binary.LittleEndian.PutUint32(id[:], c.clientID)
	id[15] = 0x80 // the server mints these; keep them apart from client ids
	return id
}

// commit09 is the metadata commit number replies carry.
func (s *Server) commit09() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.vsr.op
}
