package iggy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	iggcon "github.com/apache/iggy/foreign/go/contracts"
	"github.com/google/uuid"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// Limits the Iggy 0.8 server and SDK put on one message.
const (
	maxPayloadBytes     = iggcon.MaxPayloadSize     // 10,000,000 bytes
	maxUserHeadersBytes = iggcon.MaxUserHeadersSize // 100,000 bytes on the wire
	maxHeaderPartBytes  = 255                       // header key or value
	maxKeyBytes         = 255                       // messages_key partitioning
)

// buildMessage turns one Benthos message into an Iggy message, checking every
// rule the server would enforce so that a message Iggy can never accept is
// rejected on its own with an error that names the rule.
func (o *Output) buildMessage(msg *service.Message, i int, idExec *service.MessageBatchInterpolationExecutor) (iggcon.IggyMessage, error) {
	payload, err := msg.AsBytes()
	if err != nil {
		return iggcon.IggyMessage{}, fmt.Errorf("reading payload: %w", err)
	}
	if len(payload) == 0 {
		return iggcon.IggyMessage{}, errors.New("payload is empty: Iggy accepts payloads of 1 to 10000000 bytes")
	}
	if len(payload) > maxPayloadBytes {
		return iggcon.IggyMessage{}, fmt.Errorf("payload is %d bytes: Iggy accepts payloads of 1 to %d bytes", len(payload), maxPayloadBytes)
	}

	var opts []iggcon.IggyMessageOpt
	if idExec != nil {
		s, err := idExec.TryString(i)
		if err != nil {
			return iggcon.IggyMessage{}, fmt.Errorf("interpolating message_id: %w", err)
		}
		id, err := ParseMessageID(s)
		if err != nil {
			return iggcon.IggyMessage{}, fmt.Errorf("message_id: %w", err)
		}
		opts = append(opts, iggcon.WithID(id))
	}
	if o.conf.headers != nil {
		headers, err := headersFromMetadata(o.conf.headers, msg)
		if err != nil {
			return iggcon.IggyMessage{}, err
		}
		if len(headers) > 0 {
			opts = append(opts, iggcon.WithUserHeaders(headers))
		}
	}
	m, err := iggcon.NewIggyMessage(payload, opts...)
	if err != nil {
		return iggcon.IggyMessage{}, fmt.Errorf("building Iggy message: %w", err)
	}
	return m, nil
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
		for _, c := range hex {
			d, ok := hexDigit(c)
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

func hexDigit(c rune) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return byte(c - '0'), true
	case c >= 'a' && c <= 'f':
		return byte(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return byte(c-'A') + 10, true
	}
	return 0, false
}

// headersFromMetadata turns the metadata matched by the filter into Iggy user
// headers, in key order, keeping numbers and booleans typed.
func headersFromMetadata(filter *service.MetadataFilter, msg *service.Message) ([]iggcon.HeaderEntry, error) {
	var headers []iggcon.HeaderEntry
	err := filter.WalkMut(msg, func(key string, v any) error {
		if len(key) == 0 || len(key) > maxHeaderPartBytes {
			return fmt.Errorf("metadata key %.40q is %d bytes: Iggy header keys must be 1 to %d bytes", key, len(key), maxHeaderPartBytes)
		}
		val := headerValue(msg, key, v)
		if len(val.Value) == 0 || len(val.Value) > maxHeaderPartBytes {
			return fmt.Errorf("metadata %q has a %d byte value: Iggy header values must be 1 to %d bytes", key, len(val.Value), maxHeaderPartBytes)
		}
		headers = append(headers, iggcon.HeaderEntry{
			Key:   iggcon.HeaderKey{Kind: iggcon.String, Value: []byte(key)},
			Value: val,
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(headers, func(a, b iggcon.HeaderEntry) int { return bytes.Compare(a.Key.Value, b.Key.Value) })
	size := 0
	for _, h := range headers {
		size += 1 + 4 + len(h.Key.Value) + 1 + 4 + len(h.Value.Value)
	}
	if size > maxUserHeadersBytes {
		return nil, fmt.Errorf("%d headers take %d bytes: Iggy accepts at most %d bytes of user headers", len(headers), size, maxUserHeadersBytes)
	}
	return headers, nil
}

// headerValue encodes one metadata value with the Iggy header kind that
// matches its Go type (little-endian, as Iggy encodes numbers).
func headerValue(msg *service.Message, key string, v any) iggcon.HeaderValue {
	le := func(kind iggcon.HeaderKind, size int, u uint64) iggcon.HeaderValue {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint64(b, u)
		return iggcon.HeaderValue{Kind: kind, Value: b[:size]}
	}
	switch t := v.(type) {
	case string:
		return iggcon.HeaderValue{Kind: iggcon.String, Value: []byte(t)}
	case []byte:
		return iggcon.HeaderValue{Kind: iggcon.Raw, Value: append([]byte(nil), t...)}
	case bool:
		b := byte(0)
		if t {
			b = 1
		}
		return iggcon.HeaderValue{Kind: iggcon.Bool, Value: []byte{b}}
	case int:
		return le(iggcon.Int64, 8, uint64(int64(t)))
	case int8:
		return le(iggcon.Int8, 1, uint64(t))
	case int16:
		return le(iggcon.Int16, 2, uint64(t))
	case int32:
		return le(iggcon.Int32, 4, uint64(t))
	case int64:
		return le(iggcon.Int64, 8, uint64(t))
	case uint:
		return le(iggcon.Uint64, 8, uint64(t))
	case uint8:
		return le(iggcon.Uint8, 1, uint64(t))
	case uint16:
		return le(iggcon.Uint16, 2, uint64(t))
	case uint32:
		return le(iggcon.Uint32, 4, uint64(t))
	case uint64:
		return le(iggcon.Uint64, 8, t)
	case float32:
		return le(iggcon.Float, 4, uint64(math.Float32bits(t)))
	case float64:
		return le(iggcon.Double, 8, math.Float64bits(t))
	case interface{ Int64() (int64, error) }: // json.Number
		if n, err := t.Int64(); err == nil {
			return le(iggcon.Int64, 8, uint64(n))
		}
		if f, err := strconv.ParseFloat(fmt.Sprint(t), 64); err == nil {
			return le(iggcon.Double, 8, math.Float64bits(f))
		}
	}
	s, _ := msg.MetaGet(key)
	return iggcon.HeaderValue{Kind: iggcon.String, Value: []byte(s)}
}
