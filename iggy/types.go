package iggy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// Version is an Iggy protocol dialect.
type Version int

// The dialects this package speaks. VersionAuto asks Dial to find out.
const (
	VersionAuto Version = iota
	Version08           // Iggy server 0.8.x
	Version09           // Iggy server 0.9.x, binary protocol 0.11.0
)

// String names the dialect as users write it in configs.
func (v Version) String() string {
	switch v {
	case Version08:
		return "0.8"
	case Version09:
		return "0.9"
	}
	return "auto"
}

// ParseVersion reads "auto", "0.8" or "0.9".
func ParseVersion(s string) (Version, error) {
	switch s {
	case "", "auto":
		return VersionAuto, nil
	case "0.8":
		return Version08, nil
	case "0.9":
		return Version09, nil
	}
	return VersionAuto, fmt.Errorf("%q is not auto, 0.8 or 0.9", s)
}

// Identifier names a stream or topic by numeric id or by name.
type Identifier struct {
	Kind  uint8 // 1 numeric, 2 name
	Value []byte
}

// Identifier kinds on the wire.
const (
	KindNumeric uint8 = 1
	KindName    uint8 = 2
)

// NumericID identifies an entity by its id.
func NumericID(id uint32) Identifier {
	return Identifier{Kind: KindNumeric, Value: binary.LittleEndian.AppendUint32(nil, id)}
}

// NameID identifies an entity by its name (1 to 255 bytes).
func NameID(name string) (Identifier, error) {
	if len(name) == 0 || len(name) > 255 {
		return Identifier{}, fmt.Errorf("names must be 1 to 255 bytes, got %d", len(name))
	}
	return Identifier{Kind: KindName, Value: []byte(name)}, nil
}

// ParseIdentifier reads a stream or topic as users write it: only digits is
// a numeric id, anything else a name.
func ParseIdentifier(s string) (Identifier, error) {
	if s != "" && isDigits(s) {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return Identifier{}, errors.New("numeric ids must fit in 32 bits")
		}
		return NumericID(uint32(n)), nil
	}
	return NameID(s)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String renders the identifier as ParseIdentifier reads it.
func (id Identifier) String() string {
	if id.Kind == KindNumeric && len(id.Value) == 4 {
		return strconv.FormatUint(uint64(binary.LittleEndian.Uint32(id.Value)), 10)
	}
	return string(id.Value)
}

func (id Identifier) appendTo(b []byte) []byte {
	b = append(b, id.Kind, byte(len(id.Value)))
	return append(b, id.Value...)
}

func (id Identifier) wireLen() int { return 2 + len(id.Value) }

// Partitioning says which partition a batch goes to.
type Partitioning struct {
	Kind  uint8 // 1 balanced, 2 partition id, 3 messages key
	Value []byte
}

// Partitioning kinds on the wire.
const (
	PartitionBalanced uint8 = 1
	PartitionByID     uint8 = 2
	PartitionByKey    uint8 = 3
)

// MaxKeyBytes is the longest message key Iggy accepts.
const MaxKeyBytes = 255

// Balanced spreads sends over a topic's partitions round robin: Iggy 0.8
// servers choose the partition; on Iggy 0.9 the connection does, as the
// released SDK does (see v09.route).
func Balanced() Partitioning { return Partitioning{Kind: PartitionBalanced} }

// PartitionID sends to one partition.
func PartitionID(p uint32) Partitioning {
	return Partitioning{Kind: PartitionByID, Value: binary.LittleEndian.AppendUint32(nil, p)}
}

// MessagesKey places the batch by xxHash32(key) modulo the partition
// count: the server applies the rule on Iggy 0.8, the connection on Iggy
// 0.9. Keys are 1 to 255 bytes.
func MessagesKey(key []byte) (Partitioning, error) {
	if len(key) == 0 || len(key) > MaxKeyBytes {
		return Partitioning{}, fmt.Errorf("message key is %d bytes: Iggy message keys must be 1 to %d bytes", len(key), MaxKeyBytes)
	}
	return Partitioning{Kind: PartitionByKey, Value: key}, nil
}

func (p Partitioning) appendTo(b []byte) []byte {
	b = append(b, p.Kind, byte(len(p.Value)))
	return append(b, p.Value...)
}

// Message is one message to send.
type Message struct {
	// ID is the message id as a little-endian u128; all zero lets the
	// server assign one.
	ID [16]byte
	// Payload is 1 byte to MaxPayloadBytes.
	Payload []byte
	// UserHeaders is an encoded header block (AppendHeader), or nil.
	UserHeaders []byte
}

// Limits on one message.
const (
	MaxPayloadBytes     = 10_000_000 // what the 0.8 SDK allows; servers allow more
	MaxUserHeadersBytes = 100_000
)

// Batch is one SendMessages request: messages for one partitioning of one
// topic, in order.
type Batch struct {
	Stream, Topic Identifier
	Partitioning  Partitioning
	// OriginTimestamp is the producer's clock, µs since the epoch.
	OriginTimestamp uint64
	Messages        []Message
}

// Appended says where a sent batch landed, when the dialect tells (0.9).
type Appended struct {
	Partition  uint32
	BaseOffset uint64
}

// Topic is what a producer needs to know of a topic.
type Topic struct {
	ID            uint32
	Name          string
	Partitions    uint32
	MessageExpiry uint64 // µs; 0 the server's default, math.MaxUint64 never
	MaxTopicSize  uint64 // bytes; 0 the server's default, math.MaxUint64 unlimited
	// Durability is the topic's durability option as Iggy 0.9.0 reports
	// it ("replicated" or "persisted"); empty where the server has no such
	// option (Iggy 0.8, 0.9 pre-releases).
	Durability string
}

// Durability is how an Iggy 0.9 topic completes a send (its topic option
// durability, iggy_common 0.11.0 types/options/durability.rs).
type Durability uint8

const (
	// DurabilityReplicated, the default, answers a send once it is
	// committed, possibly only in memory: a crash of the server can lose
	// acknowledged messages.
	DurabilityReplicated Durability = iota
	// DurabilityPersisted answers a send once its messages are on stable
	// storage as well.
	DurabilityPersisted
)

// String is the option's value on the wire.
func (d Durability) String() string {
	if d == DurabilityPersisted {
		return "persisted"
	}
	return "replicated"
}

// TopicSpec is a topic to create.
type TopicSpec struct {
	Name       string
	Partitions uint32
	// MessageExpiry in µs: 0 the server's default, math.MaxUint64 never.
	MessageExpiry uint64
	// MaxTopicSize in bytes: 0 the server's default, math.MaxUint64 unlimited.
	MaxTopicSize uint64
	// Durability is the topic's durability on Iggy 0.9 (0.8 has no such
	// setting: there the output flushes instead). A pre-release 0.9 server
	// that does not know the option gets the topic without it.
	Durability Durability
}

// PollStrategy says where a poll starts reading a partition.
type PollStrategy uint8

// Polling strategies (the same numbers in 0.8 and 0.9).
const (
	PollOffset    PollStrategy = 1 // from PollRequest.Value
	PollTimestamp PollStrategy = 2 // from the first message at or after Value (µs)
	PollFirst     PollStrategy = 3 // from the oldest message kept
	PollLast      PollStrategy = 4 // the newest Count messages
	PollNext      PollStrategy = 5 // after the consumer's stored offset, else from the oldest
)

// PollRequest reads messages of one partition as a single consumer or as a
// member of a consumer group.
type PollRequest struct {
	Stream, Topic Identifier
	// Partition is the partition read, unless Assigned.
	Partition uint32
	// Consumer is the numeric id of the single consumer reading, unless As
	// says who reads.
	Consumer uint32
	// As, when set, is who reads: a single consumer by id or name, or a
	// consumer group member. The reader's stored offset is what PollNext
	// starts after and what AutoCommit moves.
	As Consumer
	// Assigned reads, for a consumer group member, the next partition of
	// the partitions the server assigned to this connection's membership,
	// in turn; Polled.Partition says which. See consumer.go for how each
	// dialect does it.
	Assigned   bool
	Strategy   PollStrategy
	Value      uint64 // offset or timestamp for PollOffset / PollTimestamp
	Count      uint32
	AutoCommit bool // store the offset of the last message returned
}

// PolledMessage is one stored message.
type PolledMessage struct {
	Offset          uint64
	Timestamp       uint64
	OriginTimestamp uint64
	ID              [16]byte
	Checksum        uint64
	Payload         []byte
	UserHeaders     []byte
}

// Polled is the answer to a poll.
type Polled struct {
	Partition     uint32
	CurrentOffset uint64
	Messages      []PolledMessage
}

// Credentials log a connection in: a username and password, or a personal
// access token.
type Credentials struct {
	Username, Password string
	Token              string
}

// ServerInfo is what a login told about the server.
type ServerInfo struct {
	Version  Version
	Protocol string // e.g. "0.11.0"; empty for 0.8, whose login does not say
	Server   string // the server's version string, when it says
	UserID   uint32
}
