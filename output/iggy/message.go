package iggyoutput

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// Limits the Iggy 0.8 server and SDK put on one message.
const (
	maxPayloadBytes     = iggy.MaxPayloadBytes     // 10,000,000 bytes
	maxUserHeadersBytes = iggy.MaxUserHeadersBytes // 100,000 bytes on the wire
	maxHeaderPartBytes  = 255                      // header key or value
	maxKeyBytes         = 255                      // messages_key partitioning
)

// messageBuilder turns the messages of one batch into Iggy messages. It
// reuses its scratch space from message to message and writes every user
// header block into one arena per batch, so that a message costs no
// allocation of its own beyond what interpolations make.
type messageBuilder struct {
	headers *service.MetadataFilter
	ids     *fieldExec // nil: the server assigns ids

	kv     []metaKV
	order  headerOrder
	arena  []byte
	expect int // messages in the batch, to size the arena

	// Structured messages without bytes are serialised here (payload),
	// into one buffer per batch (payloads).
	json     jsonrow.AnyWriter
	payloads []byte
}

// maxArenaHint caps the header arena reserved up front for a batch.
const maxArenaHint = 1 << 20

type metaKV struct {
	key string
	v   any
}

func newMessageBuilder(headers *service.MetadataFilter, ids *fieldExec, messages int) *messageBuilder {
	return &messageBuilder{headers: headers, ids: ids, expect: messages}
}

// maxKeptBuffer caps the payload and header buffers a builder keeps for the
// next batch; a batch that needed more lets its buffers go.
const maxKeptBuffer = 8 << 20

// builderPool keeps the builders of finished batches, with their buffers,
// for the next batches (up to max_in_flight of them): a batch's payloads and
// headers then go into memory that is neither allocated nor zeroed again,
// and its headers into the key order the last batch left.
type builderPool chan *messageBuilder

// get returns a builder for a batch of messages with the given ids.
func (p builderPool) get(headers *service.MetadataFilter, ids *fieldExec, messages int) *messageBuilder {
	select {
	case b := <-p:
		b.ids, b.expect = ids, messages
		b.payloads, b.arena = b.payloads[:0], b.arena[:0]
		return b
	default:
		return newMessageBuilder(headers, ids, messages)
	}
}

// put takes back the builder of a batch whose messages are sent (or will
// not be): nothing refers to its buffers any more.
func (p builderPool) put(b *messageBuilder) {
	if cap(b.payloads) > maxKeptBuffer || cap(b.arena) > maxKeptBuffer {
		return
	}
	b.ids = nil // it refers to the batch
	clear(b.kv[:cap(b.kv)])
	clear(b.order.placed)
	select {
	case p <- b:
	default:
	}
}

// build turns message i of the batch into an Iggy message, checking every
// rule the server would enforce so that a message Iggy can never accept is
// rejected on its own with an error that names the rule.
func (b *messageBuilder) build(msg *service.Message, i int) (iggy.Message, error) {
	payload, err := b.payload(msg)
	if err != nil {
		return iggy.Message{}, err
	}
	if len(payload) == 0 {
		return iggy.Message{}, errors.New("payload is empty: Iggy accepts payloads of 1 to 10000000 bytes")
	}
	if len(payload) > maxPayloadBytes {
		return iggy.Message{}, fmt.Errorf("payload is %d bytes: Iggy accepts payloads of 1 to %d bytes", len(payload), maxPayloadBytes)
	}
	var id [16]byte
	if b.ids != nil {
		s, err := b.ids.value(i)
		if err != nil {
			return iggy.Message{}, fmt.Errorf("interpolating message_id: %w", err)
		}
		if id, err = ParseMessageID(s); err != nil {
			return iggy.Message{}, fmt.Errorf("message_id: %w", err)
		}
	}
	var userHeaders []byte
	if b.headers != nil {
		if userHeaders, err = b.userHeaders(msg); err != nil {
			return iggy.Message{}, err
		}
	}
	return iggy.Message{ID: id, Payload: payload, UserHeaders: userHeaders}, nil
}

// payload returns the message's bytes. A message that holds only a
// structured value (a Bloblang mapping's result, or the fluss input's
// structured rows) is serialised here with jsonrow.AnyWriter, in the
// canonical value forms, instead of by Benthos with encoding/json: keys
// sorted in both, several times faster, into the batch's buffer.
func (b *messageBuilder) payload(msg *service.Message) ([]byte, error) {
	if msg.HasBytes() || !msg.HasStructured() {
		payload, err := msg.AsBytes()
		if err != nil {
			return nil, fmt.Errorf("reading payload: %w", err)
		}
		return payload, nil
	}
	v, err := msg.AsStructured()
	if err != nil {
		return nil, fmt.Errorf("reading payload: %w", err)
	}
	start := len(b.payloads)
	if b.payloads, err = b.json.Append(b.payloads, v); err != nil {
		b.payloads = b.payloads[:start]
		return nil, fmt.Errorf("serialising the structured payload: %w", err)
	}
	n := len(b.payloads)
	if want := min(n*b.expect+n/2, max(2*n, maxArenaHint*8)); start == 0 && b.expect > 1 && cap(b.payloads) < want {
		// Room for the rest of the batch at this message's size; a later
		// append that grows the buffer copies it, leaving the payloads
		// handed out where they are.
		grown := make([]byte, n, want)
		copy(grown, b.payloads)
		b.payloads = grown
	}
	return b.payloads[start:n:n], nil
}

// userHeaders encodes the metadata matched by the filter as Iggy user
// headers (the wire form: per header the key kind, u32 length and bytes,
// then the value kind, u32 length and bytes), in key order, keeping numbers
// and booleans typed. The result is a slice of the batch's arena.
func (b *messageBuilder) userHeaders(msg *service.Message) ([]byte, error) {
	b.kv = b.kv[:0]
	err := b.headers.WalkMut(msg, func(key string, v any) error {
		if len(key) == 0 || len(key) > maxHeaderPartBytes {
			return fmt.Errorf("metadata key %.40q is %d bytes: Iggy header keys must be 1 to %d bytes", key, len(key), maxHeaderPartBytes)
		}
		b.kv = append(b.kv, metaKV{key, v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(b.kv) == 0 {
		return nil, nil
	}
	kv, same := b.order.place(b.kv)
	if !same {
		kv = sortHeaders(b.kv)
		b.order.remember(kv)
	}
	start := len(b.arena)
	for j, h := range kv {
		b.arena = append(b.arena, b.order.key(j)...)
		kindAt := len(b.arena)
		b.arena = append(b.arena, 0, 0, 0, 0, 0) // kind and length, set below
		kind := appendHeaderValue(&b.arena, msg, h.key, h.v)
		n := len(b.arena) - kindAt - 5
		if n == 0 || n > maxHeaderPartBytes {
			b.arena = b.arena[:start]
			return nil, fmt.Errorf("metadata %q has a %d byte value: Iggy header values must be 1 to %d bytes", h.key, n, maxHeaderPartBytes)
		}
		b.arena[kindAt] = byte(kind)
		binary.LittleEndian.PutUint32(b.arena[kindAt+1:], uint32(n))
	}
	if size := len(b.arena) - start; size > maxUserHeadersBytes {
		b.arena = b.arena[:start]
		return nil, fmt.Errorf("%d headers take %d bytes: Iggy accepts at most %d bytes of user headers", len(kv), size, maxUserHeadersBytes)
	}
	if n := len(b.arena); start == 0 && b.expect > 1 && cap(b.arena) < min(n*b.expect+n/2, max(n, maxArenaHint)) {
		// Room for the rest of the batch at this message's size (at most
		// maxArenaHint), so the arena rarely grows. A later append that
		// does grow it copies it, leaving the blocks handed out where
		// they are.
		grown := make([]byte, n, min(n*b.expect+n/2, max(n, maxArenaHint)))
		copy(grown, b.arena)
		b.arena = grown
	}
	return b.arena[start:len(b.arena):len(b.arena)], nil
}

// sortHeaders sorts kv by key with an insertion sort (a handful of keys).
func sortHeaders(kv []metaKV) []metaKV {
	for i := 1; i < len(kv); i++ {
		for j := i; j > 0 && kv[j].key < kv[j-1].key; j-- {
			kv[j], kv[j-1] = kv[j-1], kv[j]
		}
	}
	return kv
}

// appendHeaderValue appends one metadata value in the Iggy header kind that
// matches its Go type (numbers little-endian, as Iggy encodes them) and
// returns the kind.
func appendHeaderValue(dst *[]byte, msg *service.Message, key string, v any) iggy.HeaderKind {
	le := binary.LittleEndian
	switch t := v.(type) {
	case string:
		*dst = append(*dst, t...)
		return iggy.HeaderString
	case []byte:
		*dst = append(*dst, t...)
		return iggy.HeaderRaw
	case bool:
		b := byte(0)
		if t {
			b = 1
		}
		*dst = append(*dst, b)
		return iggy.HeaderBool
	case int:
		*dst = le.AppendUint64(*dst, uint64(int64(t)))
		return iggy.HeaderInt64
	case int8:
		*dst = append(*dst, byte(t))
		return iggy.HeaderInt8
	case int16:
		*dst = le.AppendUint16(*dst, uint16(t))
		return iggy.HeaderInt16
	case int32:
		*dst = le.AppendUint32(*dst, uint32(t))
		return iggy.HeaderInt32
	case int64:
		*dst = le.AppendUint64(*dst, uint64(t))
		return iggy.HeaderInt64
	case uint:
		*dst = le.AppendUint64(*dst, uint64(t))
		return iggy.HeaderUint64
	case uint8:
		*dst = append(*dst, t)
		return iggy.HeaderUint8
	case uint16:
		*dst = le.AppendUint16(*dst, t)
		return iggy.HeaderUint16
	case uint32:
		*dst = le.AppendUint32(*dst, t)
		return iggy.HeaderUint32
	case uint64:
		*dst = le.AppendUint64(*dst, t)
		return iggy.HeaderUint64
	case float32:
		*dst = le.AppendUint32(*dst, math.Float32bits(t))
		return iggy.HeaderFloat
	case float64:
		*dst = le.AppendUint64(*dst, math.Float64bits(t))
		return iggy.HeaderDouble
	case interface{ Int64() (int64, error) }: // json.Number
		if n, err := t.Int64(); err == nil {
			*dst = le.AppendUint64(*dst, uint64(n))
			return iggy.HeaderInt64
		}
		if f, err := strconv.ParseFloat(fmt.Sprint(t), 64); err == nil {
			*dst = le.AppendUint64(*dst, math.Float64bits(f))
			return iggy.HeaderDouble
		}
	}
	s, _ := msg.MetaGet(key)
	*dst = append(*dst, s...)
	return iggy.HeaderString
}

// ParseMessageID parses a message id as the iggy output accepts it: empty (the
// server assigns an id), a UUID in its canonical, braced or urn form, a
// decimal number of at most 128 bits, or a hex number of 1 to 32 digits with
// a 0x prefix. A
// UUID is read as a big-endian 128-bit number. The result is the id as Iggy
// stores it: the 128-bit number in little-endian byte order.
func ParseMessageID(s string) (id [16]byte, err error) {
	var hi, lo uint64
	switch {
	case s == "":
		return id, nil
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		hex := s[2:]
		if hex == "" {
			return id, fmt.Errorf("%q has no digits after 0x", s)
		}
		if len(hex) > 32 {
			// Leading zeros count: the recipe in the docs relies on an
			// overlong value being refused, not shifted into a valid id.
			return id, fmt.Errorf("%q has more than 32 hex digits (128 bits)", s)
		}
		for i := range len(hex) {
			d, ok := hexDigit(hex[i])
			if !ok {
				return id, fmt.Errorf("%q is not a hex number", s)
			}
			hi = hi<<4 | lo>>60
			lo = lo<<4 | uint64(d)
		}
	case isDecimal(s):
		for _, c := range s {
			// (hi, lo) = (hi, lo)*10 + d, failing on a carry out of hi.
			h1, l1 := bits.Mul64(lo, 10)
			h2, h := bits.Mul64(hi, 10)
			if h2 != 0 {
				return id, fmt.Errorf("%q is larger than 128 bits", s)
			}
			var carry uint64
			h, carry = bits.Add64(h, h1, 0)
			if carry != 0 {
				return id, fmt.Errorf("%q is larger than 128 bits", s)
			}
			l1, carry = bits.Add64(l1, uint64(c-'0'), 0)
			h, carry = bits.Add64(h, 0, carry)
			if carry != 0 {
				return id, fmt.Errorf("%q is larger than 128 bits", s)
			}
			hi, lo = h, l1
		}
	default:
		if len(s) == 32 {
			// uuid.Parse would take 32 bare hex digits, which is ambiguous
			// with a decimal number; ask for the 0x form instead.
			return id, fmt.Errorf("%q is neither a UUID, a decimal number nor 0x-prefixed hex", s)
		}
		u, err := uuid.Parse(s)
		if err != nil {
			return id, fmt.Errorf("%q is neither a UUID, a decimal number nor 0x-prefixed hex: %w", s, err)
		}
		hi = binary.BigEndian.Uint64(u[:8])
		lo = binary.BigEndian.Uint64(u[8:])
	}
	binary.LittleEndian.PutUint64(id[:8], lo)
	binary.LittleEndian.PutUint64(id[8:], hi)
	return id, nil
}

// FormatMessageID renders an id as Iggy stores it (little-endian u128) as a
// canonical UUID string, the inverse of ParseMessageID for UUIDs.
func FormatMessageID(id [16]byte) string {
	var u uuid.UUID
	for i := range 16 {
		u[i] = id[15-i]
	}
	return u.String()
}

func isDecimal(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
