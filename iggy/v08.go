package iggy

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// v08 is the protocol of Iggy server 0.8.x (and the Go SDK v0.8.0): a
// request is [u32 length of what follows][u32 command code][body]; a reply
// is [u32 status][u32 body length][body], with no body on an error.
type v08 struct{}

// Command codes of the 0.8 protocol.
const (
	code08Ping         = 1
	code08Poll         = 100
	code08Send         = 101
	code08Flush        = 102
	code08GetTopic     = 300
	code08GetStream    = 200
	code08CreateStream = 202
	code08DeleteStream = 203
	code08CreateTopic  = 302
	code08LoginUser    = 38
	code08CreateToken  = 42
	code08LoginToken   = 44
	code08GetOffset    = 120
	code08StoreOffset  = 121
	code08DeleteOffset = 122
	code08GetGroup     = 600
	code08CreateGroup  = 602
	code08DeleteGroup  = 603
	code08JoinGroup    = 604
	code08LeaveGroup   = 605
)

// Sizes of the 0.8 message layout.
const (
	header08Bytes = 64 // checksum, id, offset, timestamp, origin, lengths, reserved
	index08Bytes  = 16 // per message in a send: offset, end position, timestamp
)

// version08 is what the 0.8 login says of the client.
const version08 = "0.8.0"

var le = binary.LittleEndian

func (v08) version() Version { return Version08 }

// frame starts a request of code in w's buffer with room for n body bytes;
// finish writes its length.
func frame08(w *wire, code uint32, n int) []byte {
	b := w.buf(8 + n)
	b = le.AppendUint32(b, 0)
	return le.AppendUint32(b, code)
}

// roundTrip writes the framed request b and reads the reply body. The body
// is only valid until the next read.
func (v08) roundTrip(w *wire, b []byte) ([]byte, error) {
	le.PutUint32(b, uint32(len(b)-4))
	if err := w.write(b); err != nil {
		return nil, err
	}
	head, err := w.read(8)
	if err != nil {
		return nil, err
	}
	status, n := le.Uint32(head), le.Uint32(head[4:])
	body, err := w.read(int(n))
	if err != nil {
		return nil, err
	}
	if status != 0 {
		return nil, &ServerError{Code: status}
	}
	return body, nil
}

func (d v08) login(w *wire, c Credentials) (ServerInfo, error) {
	var b []byte
	if c.Token != "" {
		b = frame08(w, code08LoginToken, 1+len(c.Token))
		b = appendName(b, c.Token)
	} else {
		b = frame08(w, code08LoginUser, 2+len(c.Username)+len(c.Password)+8+len(version08))
		b = appendName(b, c.Username)
		b = appendName(b, c.Password)
		b = le.AppendUint32(b, uint32(len(version08)))
		b = append(b, version08...)
		b = le.AppendUint32(b, 0) // context
	}
	body, err := d.roundTrip(w, b)
	if c.Token != "" && CodeOf(err) == CodeResourceNotFound {
		// 0.8 answers a token it does not know with ResourceNotFound
		// (server-0.8.0 core/server/src/shard/system/personal_access_tokens.rs).
		return ServerInfo{}, fmt.Errorf("%w (Iggy 0.8 says so with %w)", &ServerError{Code: CodeInvalidToken}, err)
	}
	if err != nil {
		return ServerInfo{}, err
	}
	if len(body) < 4 {
		return ServerInfo{}, fmt.Errorf("iggy at %s answered the login with %d bytes, expected a user id", w.addr, len(body))
	}
	return ServerInfo{Version: Version08, UserID: le.Uint32(body)}, nil
}

func appendName(b []byte, s string) []byte {
	b = append(b, byte(len(s)))
	return append(b, s...)
}

func (d v08) ping(w *wire) error {
	_, err := d.roundTrip(w, frame08(w, code08Ping, 0))
	return err
}

func (d v08) streamExists(w *wire, stream Identifier) (bool, error) {
	body, err := d.roundTrip(w, stream.appendTo(frame08(w, code08GetStream, stream.wireLen())))
	return len(body) > 0, err
}

func (d v08) getTopic(w *wire, stream, topic Identifier) (*Topic, error) {
	b := frame08(w, code08GetTopic, stream.wireLen()+topic.wireLen())
	b = topic.appendTo(stream.appendTo(b))
	body, err := d.roundTrip(w, b)
	if err != nil || len(body) == 0 {
		return nil, err
	}
	return decodeTopic08(body)
}

// decodeTopic08 reads the fixed part of a 0.8 topic: id u32, created u64,
// partitions u32, expiry u64, compression u8, max size u64, replication u8,
// size u64, messages u64, then the name (u8 length).
func decodeTopic08(b []byte) (*Topic, error) {
	const nameAt = 50
	if len(b) < nameAt+1 || len(b) < nameAt+1+int(b[nameAt]) {
		return nil, fmt.Errorf("iggy sent a topic of %d bytes, too short", len(b))
	}
	return &Topic{
		ID:            le.Uint32(b),
		Partitions:    le.Uint32(b[12:]),
		MessageExpiry: le.Uint64(b[16:]),
		MaxTopicSize:  le.Uint64(b[25:]),
		Name:          string(b[nameAt+1 : nameAt+1+int(b[nameAt])]),
	}, nil
}

func (d v08) createStream(w *wire, name string) error {
	b := appendName(frame08(w, code08CreateStream, 1+len(name)), name)
	_, err := d.roundTrip(w, b)
	return err
}

func (d v08) createTopic(w *wire, stream Identifier, t TopicSpec) error {
	b := frame08(w, code08CreateTopic, stream.wireLen()+4+1+8+8+1+1+len(t.Name))
	b = stream.appendTo(b)
	b = le.AppendUint32(b, t.Partitions)
	b = append(b, 1) // compression: none
	b = le.AppendUint64(b, t.MessageExpiry)
	b = le.AppendUint64(b, t.MaxTopicSize)
	b = append(b, 0) // replication factor: none
	b = appendName(b, t.Name)
	_, err := d.roundTrip(w, b)
	return err
}

func (d v08) deleteStream(w *wire, stream Identifier) error {
	_, err := d.roundTrip(w, stream.appendTo(frame08(w, code08DeleteStream, stream.wireLen())))
	return err
}

func (d v08) createToken(w *wire, name string) (string, error) {
	b := appendName(frame08(w, code08CreateToken, 1+len(name)+8), name)
	b = le.AppendUint64(b, 0) // never expires
	body, err := d.roundTrip(w, b)
	if err != nil {
		return "", err
	}
	if len(body) < 1 || len(body) < 1+int(body[0]) {
		return "", errors.New("iggy sent a malformed personal access token")
	}
	return string(body[1 : 1+int(body[0])]), nil
}

// send writes a SendMessages request: u32 metadata length, stream, topic,
// partitioning, u32 count; an index entry per message whose second u32 is
// the end of the message in the message area; then each message as a
// 64-byte header, its payload and its user headers. The server sets
// checksum, offset and timestamp.
func (d v08) send(w *wire, bt *Batch) ([]Appended, error) {
	if len(bt.Partitioning.Value) > MaxKeyBytes {
		return nil, fmt.Errorf("partitioning value is %d bytes, at most %d", len(bt.Partitioning.Value), MaxKeyBytes)
	}
	size := 0
	for i := range bt.Messages {
		size += header08Bytes + len(bt.Messages[i].Payload) + len(bt.Messages[i].UserHeaders)
	}
	metaLen := bt.Stream.wireLen() + bt.Topic.wireLen() + 2 + len(bt.Partitioning.Value) + 4
	b := frame08(w, code08Send, 4+metaLen+len(bt.Messages)*index08Bytes+size)
	b = le.AppendUint32(b, uint32(metaLen))
	b = bt.Topic.appendTo(bt.Stream.appendTo(b))
	b = bt.Partitioning.appendTo(b)
	b = le.AppendUint32(b, uint32(len(bt.Messages)))
	end := uint32(0)
	for i := range bt.Messages {
		m := &bt.Messages[i]
		end += uint32(header08Bytes + len(m.Payload) + len(m.UserHeaders))
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, end)
		b = le.AppendUint64(b, 0)
	}
	for i := range bt.Messages {
		b = appendMessage08(b, &bt.Messages[i], bt.OriginTimestamp)
	}
	_, err := d.roundTrip(w, b)
	return nil, err
}

func appendMessage08(b []byte, m *Message, origin uint64) []byte {
	b = le.AppendUint64(b, 0) // checksum: the server's
	b = append(b, m.ID[:]...)
	b = le.AppendUint64(b, 0) // offset
	b = le.AppendUint64(b, 0) // timestamp
	b = le.AppendUint64(b, origin)
	b = le.AppendUint32(b, uint32(len(m.UserHeaders)))
	b = le.AppendUint32(b, uint32(len(m.Payload)))
	b = le.AppendUint64(b, 0) // reserved
	b = append(b, m.Payload...)
	return append(b, m.UserHeaders...)
}

// poll reads messages; a group member's Assigned poll sends the partition
// as "none" and the server picks one of the member's partitions in turn.
func (d v08) poll(w *wire, r *PollRequest) (*Polled, error) {
	b := appendPollBody(frame08(w, code08Poll, pollBodyLen(r)), r, r.Partition, r.Assigned)
	body, err := d.roundTrip(w, b)
	if err != nil {
		return nil, err
	}
	return decodePolled08(body)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// decodePolled08 reads a poll reply: u32 partition, u64 current offset, u32
// count, then messages (64-byte header, payload, user headers). Payloads
// and headers are copied out of the read buffer.
func decodePolled08(b []byte) (*Polled, error) {
	p := &Polled{}
	if len(b) == 0 {
		return p, nil
	}
	if len(b) < 16 {
		return nil, fmt.Errorf("iggy sent a poll reply of %d bytes, too short", len(b))
	}
	p.Partition, p.CurrentOffset = le.Uint32(b), le.Uint64(b[4:])
	count := le.Uint32(b[12:])
	p.Messages = make([]PolledMessage, 0, min(int(count), len(b)/header08Bytes))
	for pos := 16; pos < len(b); {
		if len(b)-pos < header08Bytes {
			return nil, fmt.Errorf("iggy sent a truncated message header at byte %d of a poll reply", pos)
		}
		h := b[pos : pos+header08Bytes]
		hl, pl := int(le.Uint32(h[48:])), int(le.Uint32(h[52:]))
		pos += header08Bytes
		if pl > len(b)-pos || hl > len(b)-pos-pl {
			return nil, fmt.Errorf("iggy sent a message at byte %d of a poll reply longer than the reply", pos)
		}
		m := PolledMessage{
			Checksum:        le.Uint64(h),
			Offset:          le.Uint64(h[24:]),
			Timestamp:       le.Uint64(h[32:]),
			OriginTimestamp: le.Uint64(h[40:]),
			Payload:         append([]byte(nil), b[pos:pos+pl]...),
		}
		copy(m.ID[:], h[8:24])
		if hl > 0 {
			m.UserHeaders = append([]byte(nil), b[pos+pl:pos+pl+hl]...)
		}
		pos += pl + hl
		p.Messages = append(p.Messages, m)
	}
	return p, nil
}

func (d v08) flush(w *wire, stream, topic Identifier, partition uint32, fsync bool) error {
	b := frame08(w, code08Flush, stream.wireLen()+topic.wireLen()+5)
	b = topic.appendTo(stream.appendTo(b))
	b = le.AppendUint32(b, partition)
	b = append(b, boolByte(fsync))
	_, err := d.roundTrip(w, b)
	return err
}
