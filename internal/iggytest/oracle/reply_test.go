package oracle

import "github.com/zeebo/xxh3"

// The peer's replies, encoded from what the 0.11.0 SDK decodes (paths in
// iggy_binary_protocol-0.11.0/src unless said otherwise). If the SDK
// accepts them, they are in the released layout.

// What the peer tells of itself at login.
const (
	peerUserID   = 1
	peerSession  = 0x1_0000_0002 // above 32 bits, so a truncated session shows
	peerProtocol = 11 << 10      // 0.11.0, packed major<<20 | minor<<10 | patch
	peerVersion  = "0.9.0"
	peerCreated  = 1_760_000_000_000_000 // created_at of streams, topics and partitions (µs)
)

// Error codes the peer answers with (iggy_common-0.11.0 src/error/iggy_error.rs).
const (
	errInvalidCommand      = 3
	errInvalidFormat       = 4
	errFeatureUnavailable  = 5
	errStreamNameExists    = 1012
	errTopicNameExists     = 2013
	errPartitionNotFound   = 3007
	errTopicIDNotFound     = 2010
	errStreamIDNotFound    = 1009
	compressionNone        = 1 // CompressionAlgorithm::None (types/compression)
	headerKindString       = 2 // HeaderKind codes (types/message/user_headers.rs)
	headerKindUint64       = 12
	confirmationBytes      = 20
	pollReplyHeaderBytes   = 16
	resultSectionOKPayload = 4 // [count u32 = 0]
)

// replyHeader is the header of the reply to req (consensus/header.rs:
// ReplyHeader): it echoes the request checksum, client, request number
// and, unless told otherwise, the operation; n is the body length.
func replyHeader(req *request, operation uint8, op uint64, status uint32, n int) []byte {
	h := make([]byte, headerBytes, headerBytes+n)
	le.PutUint32(h[offSize:], uint32(headerBytes+n))
	h[offCommand] = cmdReply
	copy(h[offReplyReqSum:offReplyReqSum+16], req.raw[offReqSum:offReqSum+16])
	copy(h[offReplyClient:offReplyClient+16], req.raw[offClient:offClient+16])
	le.PutUint64(h[offReplyOp:], op)
	le.PutUint64(h[offReplyCommit:], op)
	le.PutUint64(h[offReplyReq:], req.number())
	h[offReplyOper] = operation
	le.PutUint32(h[offReplyStatus:], status)
	return h
}

// resultOK starts a metadata or login reply body: the result section with
// no entries, which means success (vsr.rs: split_metadata_result).
func resultOK() []byte { return make([]byte, resultSectionOKPayload, 256) }

// appendName appends [len u8]s (WireName).
func appendName(b []byte, s string) []byte { return append(append(b, byte(len(s))), s...) }

// appendBlock appends a u32-prefixed option block (encode_options_prefixed).
func appendBlock(b, block []byte) []byte {
	return append(le.AppendUint32(b, uint32(len(block))), block...)
}

// appendOption appends one option entry: a String key and a value of kind.
func appendOption(b []byte, key string, kind byte, value []byte) []byte {
	b = append(le.AppendUint32(append(b, headerKindString), uint32(len(key))), key...)
	return append(le.AppendUint32(append(b, kind), uint32(len(value))), value...)
}

// loginReply is the login payload after the result section:
// [user_id u32][session u64][server protocol u32][len u8]server version
// (responses/users/login_register.rs).
func loginReply() []byte {
	b := le.AppendUint32(resultOK(), peerUserID)
	b = le.AppendUint64(b, peerSession)
	b = le.AppendUint32(b, peerProtocol)
	return appendName(b, peerVersion)
}

// appendStream appends a stream (responses/streams/stream_response.rs and
// get_stream.rs): [id u32][created u64][topics u32][size u64][messages u64]
// [len u8]name[options block], then each topic's header, no partitions.
func appendStream(b []byte, s *peerStream) []byte {
	b = le.AppendUint32(b, s.id)
	b = le.AppendUint64(b, peerCreated)
	b = le.AppendUint32(b, uint32(len(s.topics)))
	b = le.AppendUint64(b, 0)
	b = le.AppendUint64(b, s.messages())
	b = appendBlock(appendName(b, s.name), nil)
	for _, t := range s.topics {
		b = appendTopicHeader(b, t)
	}
	return b
}

// appendTopicHeader appends a topic's 50-byte fixed part, name and option
// blocks (responses/streams/get_stream.rs: TopicHeader): [id u32][created
// u64][partitions u32][message expiry u64][compression u8][max size u64]
// [size u64][messages u64][len u8]name[explicit options][derived options].
func appendTopicHeader(b []byte, t *peerTopic) []byte {
	b = le.AppendUint32(b, t.id)
	b = le.AppendUint64(b, peerCreated)
	b = le.AppendUint32(b, uint32(len(t.parts)))
	b = le.AppendUint64(b, t.expiry)
	b = append(b, compressionNone)
	b = le.AppendUint64(b, t.maxSize)
	b = le.AppendUint64(b, t.size())
	b = le.AppendUint64(b, t.messages())
	b = appendName(b, t.name)
	return appendBlock(appendBlock(b, t.explicit), t.derived)
}

// appendTopic appends a topic and its partitions, 40 bytes each
// (responses/topics/get_topic.rs: PartitionResponse): [id u32][created
// u64][segments u32][current offset u64][size u64][messages u64].
func appendTopic(b []byte, t *peerTopic) []byte {
	b = appendTopicHeader(b, t)
	for i, p := range t.parts {
		b = le.AppendUint32(b, uint32(i))
		b = le.AppendUint64(b, peerCreated)
		b = le.AppendUint32(b, 1)
		b = le.AppendUint64(b, p.currentOffset())
		b = le.AppendUint64(b, p.size())
		b = le.AppendUint64(b, p.next)
	}
	return b
}

// sendReceipt is [count u32 = 1]{stream u32, topic u32, partition u32,
// base offset u64} (responses/messages/send_messages.rs).
func sendReceipt(stream, topic, partition uint32, base uint64) []byte {
	b := le.AppendUint32(make([]byte, 0, 4+confirmationBytes), 1)
	b = le.AppendUint32(le.AppendUint32(le.AppendUint32(b, stream), topic), partition)
	return le.AppendUint64(b, base)
}

// storeBatch turns a sent batch into the stored one a poll serves: the
// partition id at 0, base offset and base timestamp filled in, the batch
// checksum computed again over them.
func storeBatch(sent []byte, partition uint32, base, stamp uint64) []byte {
	b := append([]byte(nil), sent...)
	le.PutUint64(b, uint64(partition))
	le.PutUint64(b[batchBaseOffset:], base)
	le.PutUint64(b[batchBaseTime:], stamp)
	if starts, err := batchFrames(b); err == nil {
		le.PutUint64(b[batchChecksum:], batchSum(b, starts))
	}
	return b
}

// pollReply is [partition u32][current offset u64][count u32] and then the
// stored batches (responses/messages/poll_messages.rs).
func pollReply(partition uint32, current uint64, count uint32, batches [][]byte) []byte {
	b := le.AppendUint32(make([]byte, 0, pollReplyHeaderBytes), partition)
	b = le.AppendUint32(le.AppendUint64(b, current), count)
	for _, batch := range batches {
		b = append(b, batch...)
	}
	return b
}

// stampOK says whether a request checksum (u128 at 144) is zero or the
// XXH3-64 of the body widened to 128 bits (vsr.rs: encode_request_header;
// the server verifies any non-zero stamp).
func stampOK(r *request) bool {
	lo, hi := le.Uint64(r.raw[offReqSum:]), le.Uint64(r.raw[offReqSum+8:])
	return lo == 0 && hi == 0 || hi == 0 && lo == xxh3.Hash(r.body())
}
