package iggy

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/zeebo/xxh3"
)

// Message batch layout (core/binary_protocol/src/batch.rs).
const (
	v09BatchHeaderBytes = 256
	v09FrameHeaderBytes = 48
	// Batch header fields.
	v09BatchBaseOffset = 8
	v09BatchBaseTime   = 16
	v09BatchOrigin     = 24
	v09BatchLength     = 32
	v09BatchChecksum   = 40
	v09BatchCount      = 48
	// v09BatchSummed is how many leading header bytes the batch checksum
	// covers: partition, base offset, base timestamp, origin timestamp and
	// length (bytes 0..40), then the count (48..52) follows them.
	v09BatchSummed = 40
	// Message frame header fields: checksum u64, id u128, offset delta u32,
	// timestamp delta u32, user headers length u32, payload length u32,
	// reserved u64.
	v09FrameID          = 8
	v09FrameOffsetDelta = 24
	v09FrameTimeDelta   = 28
	v09FrameHeadersLen  = 32
	v09FramePayloadLen  = 36
)

// send sends one batch (operation 160) and returns where it landed.
// A status 58 (the server did not accept the batch, so nothing was
// written) is retried once with the same bytes; 57 is not, as it leaves
// the outcome open and a replay could store the batch twice.
func (v *v09) send(w *wire, b *Batch) ([]Appended, error) {
	if v.session == 0 {
		return nil, errV09NoSession
	}
	if _, err := v09SendSize(b, b.Partitioning); err != nil {
		return nil, err
	}
	part, err := v.route(w, b)
	if err != nil {
		return nil, err
	}
	req, err := v.encodeSend(w, b, part)
	if err != nil {
		return nil, err
	}
	body, err := v.exchange(w, req, false)
	if v09RetryNotAccepted.shouldRetry(err) {
		time.Sleep(v09RetryPause)
		body, err = v.exchange(w, req, false)
	}
	if err != nil {
		if part.Kind != b.Partitioning.Kind && CodeOf(err) == CodeResourceNotFound {
			v.forgetRoute() // the partition it chose is gone: read the count again
		}
		return nil, err
	}
	app, err := v09DecodeSendReply(body)
	if err != nil {
		return nil, fmt.Errorf("iggy at %s: send request %d: %w", w.addr, v09le.Uint64(req[v09OffRequest:]), err)
	}
	return app, nil
}

// encodeSend builds the SendMessages request in w's buffer in one pass:
// header; [metadata length u32][stream][topic][partitioning][count u32];
// a 256-byte batch header; then per message a 48-byte frame header, the
// payload and the user headers (payload first). Each frame's XXH3-64
// checksum covers its bytes from 8 on; the batch checksum covers the batch
// header fields and then every frame checksum. Messages with an all-zero id
// get a random one, as 0.9 servers keep ids as sent. part is the
// partitioning sent, b's own or the partition route chose for it.
func (v *v09) encodeSend(w *wire, b *Batch, part Partitioning) ([]byte, error) {
	n, err := v09SendSize(b, part)
	if err != nil {
		return nil, err
	}
	count := len(b.Messages)
	meta := b.Stream.wireLen() + b.Topic.wireLen() + 2 + len(part.Value) + 4
	// Room past the request for the bytes the batch checksum covers.
	buf := w.buf(n + v09BatchSummed + 4 + 8*count)
	buf = v.appendHeader(buf, v09OpSendMessages, 0, v.claim())
	buf = v09le.AppendUint32(buf, uint32(meta))
	buf = part.appendTo(b.Topic.appendTo(b.Stream.appendTo(buf)))
	buf = v09le.AppendUint32(buf, uint32(count))
	batch := len(buf)
	buf = append(buf, v09Zero[:v09BatchHeaderBytes]...)
	for i := range b.Messages {
		buf = v09AppendFrame(buf, &b.Messages[i], uint32(i))
	}
	bh := buf[batch : batch+v09BatchHeaderBytes]
	v09le.PutUint64(bh[v09BatchOrigin:], b.OriginTimestamp)
	v09le.PutUint64(bh[v09BatchLength:], uint64(len(buf)-batch))
	v09le.PutUint32(bh[v09BatchCount:], uint32(count))
	v09le.PutUint64(bh[v09BatchChecksum:], v09BatchSum(buf[batch:], count))
	return v09Seal(buf, false), nil
}

// v09SendSize checks a batch and returns the size of its request with
// partitioning part.
func v09SendSize(b *Batch, part Partitioning) (int, error) {
	if len(b.Messages) == 0 {
		return 0, errors.New("a batch needs at least one message")
	}
	if err := checkIDs(b.Stream, b.Topic); err != nil {
		return 0, err
	}
	switch p := part; {
	case p.Kind == PartitionBalanced && len(p.Value) == 0,
		p.Kind == PartitionByID && len(p.Value) == 4,
		p.Kind == PartitionByKey && len(p.Value) > 0 && len(p.Value) <= MaxKeyBytes:
	default:
		return 0, fmt.Errorf("invalid partitioning (kind %d, %d bytes)", p.Kind, len(p.Value))
	}
	n := v09HeaderBytes + 4 + b.Stream.wireLen() + b.Topic.wireLen() + 2 + len(part.Value) + 4 + v09BatchHeaderBytes
	for i := range b.Messages {
		m := &b.Messages[i]
		n += v09FrameHeaderBytes + len(m.Payload) + len(m.UserHeaders)
		if n > v09MaxFrameBytes {
			return 0, fmt.Errorf("the batch of %d messages is larger than the %d bytes an Iggy 0.9 server accepts in one request by default; send smaller batches", len(b.Messages), v09MaxFrameBytes)
		}
	}
	return n, nil
}

// v09AppendFrame appends message m as the index-th frame of a batch.
func v09AppendFrame(buf []byte, m *Message, index uint32) []byte {
	f := len(buf)
	buf = append(buf, v09Zero[:v09FrameHeaderBytes]...)
	h := buf[f : f+v09FrameHeaderBytes]
	if m.ID == ([16]byte{}) {
		v09le.PutUint64(h[v09FrameID:], rand.Uint64())
		v09le.PutUint64(h[v09FrameID+8:], rand.Uint64()|1) // never all zero
	} else {
		copy(h[v09FrameID:], m.ID[:])
	}
	v09le.PutUint32(h[v09FrameOffsetDelta:], index)
	// The timestamp delta stays 0: every message has the batch's origin
	// timestamp.
	v09le.PutUint32(h[v09FrameHeadersLen:], uint32(len(m.UserHeaders)))
	v09le.PutUint32(h[v09FramePayloadLen:], uint32(len(m.Payload)))
	buf = append(append(buf, m.Payload...), m.UserHeaders...)
	v09le.PutUint64(buf[f:], xxh3.Hash(buf[f+8:]))
	return buf
}

// v09BatchSum computes the checksum of the batch at the start of batch
// (header, then count frames), using the spare capacity past the batch for
// the bytes it covers, so that nothing is allocated.
func v09BatchSum(batch []byte, count int) uint64 {
	s := batch[len(batch):len(batch):cap(batch)]
	s = append(s, batch[:v09BatchSummed]...)
	s = append(s, batch[v09BatchCount:v09BatchCount+4]...)
	for p := v09BatchHeaderBytes; count > 0; count-- {
		s = append(s, batch[p:p+8]...)
		p += v09FrameHeaderBytes + int(v09le.Uint32(batch[p+v09FramePayloadLen:])) + int(v09le.Uint32(batch[p+v09FrameHeadersLen:]))
	}
	return xxh3.Hash(s)
}

// errV09DuplicateSend is a send answered with an empty body: Iggy 0.9
// answers so a request it classified as a duplicate of one it has seen,
// and stores nothing of it. Every send takes a new request number, so the
// batch is not in Iggy; the error is not a *ServerError, so the connection
// is closed and its batch sent again on a new login.
var errV09DuplicateSend = errors.New("answered with an empty body, which Iggy 0.9 gives a request it takes for a duplicate of an earlier one: the batch was not stored")

// v09DecodeSendReply reads [count u32]{stream u32, topic u32, partition u32,
// base offset u64}*. Count 0 is a stored batch whose offsets the server
// does not report; an empty body is errV09DuplicateSend.
func v09DecodeSendReply(b []byte) ([]Appended, error) {
	if len(b) == 0 {
		return nil, errV09DuplicateSend
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("%d bytes, at least 4 expected", len(b))
	}
	count := v09le.Uint32(b)
	if uint64(len(b)-4) != uint64(count)*20 {
		return nil, fmt.Errorf("%d confirmations in %d bytes", count, len(b)-4)
	}
	if count == 0 {
		return nil, nil
	}
	app := make([]Appended, count)
	for i := range app {
		e := b[4+20*i:]
		app[i] = Appended{Partition: v09le.Uint32(e[8:]), BaseOffset: v09le.Uint64(e[12:])}
	}
	return app, nil
}

// poll reads messages (code 100, body as in 0.8, see appendPollBody) of
// r.Partition, or, with r.Assigned, of the next partition of the group
// member's assignment (pollAssigned). A partition the member does not own
// reads as no messages, as in 0.8.
func (v *v09) poll(w *wire, r *PollRequest) (*Polled, error) {
	if r.Assigned {
		return v.pollAssigned(w, r)
	}
	p, err := v.pollPartition(w, r, r.Partition)
	if err == nil && v09Fenced(p) {
		return &Polled{}, nil
	}
	return p, err
}

// pollPartition polls one partition.
func (v *v09) pollPartition(w *wire, r *PollRequest, partition uint32) (*Polled, error) {
	b := v.appendHeader(w.buf(v09HeaderBytes+pollBodyLen(r)), v09OpNonReplicated, v09CodePoll, v.next)
	body, err := v.exchange(w, v09Seal(appendPollBody(b, r, partition, false), false), true)
	if err != nil {
		return nil, err
	}
	p, err := v09DecodePolled(body)
	if err != nil {
		return nil, fmt.Errorf("iggy at %s: poll reply: %w", w.addr, err)
	}
	return p, nil
}

// v09DecodePolled reads a poll reply: [partition u32][current offset u64]
// [count u32], then stored batches in the send layout, their headers filled
// in by the server (base offset, base timestamp). The messages' payloads
// and headers are slices of body, which poll reads into a buffer of its
// own.
func v09DecodePolled(body []byte) (*Polled, error) {
	if len(body) < 16 {
		return nil, fmt.Errorf("%d bytes, at least 16 expected", len(body))
	}
	count := v09le.Uint32(body[12:])
	if uint64(count) > uint64(len(body)-16)/v09FrameHeaderBytes {
		return nil, fmt.Errorf("%d messages cannot fit in %d bytes", count, len(body)-16)
	}
	p := &Polled{
		Partition:     v09le.Uint32(body),
		CurrentOffset: v09le.Uint64(body[4:]),
		Messages:      make([]PolledMessage, 0, count),
	}
	for pos := 16; pos < len(body); {
		end, err := v09DecodeBatch(body, pos, p)
		if err != nil {
			return nil, err
		}
		pos = end
	}
	if len(p.Messages) != int(count) {
		return nil, fmt.Errorf("%d messages announced, %d found", count, len(p.Messages))
	}
	return p, nil
}

// v09DecodeBatch reads the stored batch at body[pos:], appends its
// messages to p and returns where the batch ends.
func v09DecodeBatch(body []byte, pos int, p *Polled) (int, error) {
	if len(body)-pos < v09BatchHeaderBytes {
		return 0, fmt.Errorf("a batch header at byte %d runs past the %d-byte reply", pos, len(body))
	}
	h := body[pos : pos+v09BatchHeaderBytes]
	size := v09le.Uint64(h[v09BatchLength:])
	if size < v09BatchHeaderBytes || size > uint64(len(body)-pos) {
		return 0, fmt.Errorf("a batch of %d bytes at byte %d of a %d-byte reply", size, pos, len(body))
	}
	end := pos + int(size)
	base, stamp, origin := v09le.Uint64(h[v09BatchBaseOffset:]), v09le.Uint64(h[v09BatchBaseTime:]), v09le.Uint64(h[v09BatchOrigin:])
	want, found := v09le.Uint32(h[v09BatchCount:]), uint32(0)
	for f := pos + v09BatchHeaderBytes; f < end; found++ {
		if end-f < v09FrameHeaderBytes {
			return 0, fmt.Errorf("a message header at byte %d runs past its batch", f)
		}
		fh := body[f : f+v09FrameHeaderBytes]
		payload, headers := uint64(v09le.Uint32(fh[v09FramePayloadLen:])), uint64(v09le.Uint32(fh[v09FrameHeadersLen:]))
		if payload+headers > uint64(end-f-v09FrameHeaderBytes) {
			return 0, fmt.Errorf("a message at byte %d runs past its batch", f)
		}
		m := PolledMessage{
			Offset:          base + uint64(v09le.Uint32(fh[v09FrameOffsetDelta:])),
			Timestamp:       stamp,
			OriginTimestamp: origin + uint64(v09le.Uint32(fh[v09FrameTimeDelta:])),
			ID:              [16]byte(fh[v09FrameID : v09FrameID+16]),
			Checksum:        v09le.Uint64(fh),
		}
		at := f + v09FrameHeaderBytes
		m.Payload = body[at : at+int(payload) : at+int(payload)]
		if headers > 0 {
			m.UserHeaders = body[at+int(payload) : at+int(payload+headers) : at+int(payload+headers)]
		}
		p.Messages = append(p.Messages, m)
		f = at + int(payload+headers)
	}
	if found != want {
		return 0, fmt.Errorf("a batch announcing %d messages holds %d", want, found)
	}
	return end, nil
}
