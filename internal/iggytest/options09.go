package iggytest

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Options blocks of 0.9 (primitives/options.rs, common types/options):
// pairs of user-header TLV entries [kind u8][len u32][bytes], a String key
// then its value, each 1-255 bytes, keys unique, at most 1024 pairs and
// 100,000 bytes. A CreateTopic or UpdateTopic block sits at the end of the
// body; stream and topic replies carry blocks with a u32 length in front.

// Topic option keys of the Iggy 0.9.0 release (iggy_common 0.11.0,
// types/options/mod.rs topic_option_keys). The pre-release
// server-0.9.0-edge.5 had enforce_fsync (Bool) where the release has the
// two durability policies (apache/iggy #4092); the release refuses it as
// an unsupported key.
const (
	optCompression       = "compression_algorithm"
	optOffsetsDurability = "consumer_offset_durability"
	optDurability        = "durability"
	optMaxTopicSize      = "max_topic_size"
	optExpiry            = "message_expiry"
	optToSave            = "messages_required_to_save"
	optPreallocate       = "preallocate_segments"
	optSegmentSize       = "segment_size"
	optSizeToSave        = "size_of_messages_required_to_save"
)

// topicOptionKeys are the keys CreateTopic accepts, in the order a server
// encodes them (sorted).
var topicOptionKeys = []string{optCompression, optOffsetsDurability, optDurability, optMaxTopicSize, optExpiry,
	optToSave, optPreallocate, optSegmentSize, optSizeToSave}

// Durability policies (iggy_common 0.11.0 types/options/durability.rs):
// replicated (the default) completes a send on commit, persisted once it
// is on stable storage too.
const (
	durabilityReplicated = "replicated"
	durabilityPersisted  = "persisted"
)

// updatableTopicKeys are the keys UpdateTopic accepts.
var updatableTopicKeys = []string{optCompression, optExpiry, optMaxTopicSize}

// Limits of 0.9 (common types/options; binary_protocol primitives/options.rs).
const (
	maxOptions              = 1024
	maxOptionsBytes         = 100 * 1000
	minSegmentSize09        = 1 << 20
	maxMessagesToSave09     = 16 * 1024 * 1024
	defaultMessagesToSave09 = 1024
)

// option is one key/value pair of an options block.
type option struct {
	key   string
	kind  uint8 // of the value
	value []byte
}

// parseOptions validates an options block as WireOptions::from_slice does;
// ok is false when it does not decode (the server then answers 3).
func parseOptions(b []byte) ([]option, bool) {
	if len(b) > maxOptionsBytes {
		return nil, false
	}
	var out []option
	pos := 0
	field := func() (uint8, []byte, bool) {
		if len(b)-pos < 5 || b[pos] == 0 {
			return 0, nil, false
		}
		kind, n := b[pos], binary.LittleEndian.Uint32(b[pos+1:pos+5])
		if n == 0 || n > 255 || uint64(len(b)-pos-5) < uint64(n) {
			return 0, nil, false
		}
		v := b[pos+5 : pos+5+int(n)]
		pos += 5 + int(n)
		return kind, v, true
	}
	for pos < len(b) {
		kk, k, ok1 := field()
		vk, v, ok2 := field()
		if !ok1 || !ok2 || kk != HeaderString || !utf8.Valid(k) {
			return nil, false
		}
		out = append(out, option{key: string(k), kind: vk, value: v})
	}
	if len(out) > maxOptions {
		return nil, false
	}
	for i := range out {
		for _, o := range out[:i] {
			if o.key == out[i].key {
				return nil, false
			}
		}
	}
	return out, true
}

// encodeOptions writes options (sorted by key) as a block.
func encodeOptions(opts []option) []byte {
	slices.SortFunc(opts, func(a, b option) int { return strings.Compare(a.key, b.key) })
	var e encoder
	for _, o := range opts {
		e.u8(HeaderString)
		e.u32(uint32(len(o.key)))
		e.b = append(e.b, o.key...)
		e.u8(o.kind)
		e.u32(uint32(len(o.value)))
		e.b = append(e.b, o.value...)
	}
	return e.b
}

// checkKeys returns UnsupportedOptionKey when a key is not in known.
func checkKeys(opts []option, known []string) uint32 {
	for _, o := range opts {
		if !slices.Contains(known, o.key) {
			return CodeUnsupportedOptionKey
		}
	}
	return CodeOK
}

// topicOptions09 is a parsed topic options block: each setting the client
// set, and the block re-encoded canonically (what the server stores as the
// explicit options).
type topicOptions09 struct {
	set      map[string]bool
	cfg      topicConfig
	explicit []option
}

// parseTopicOptions reads a topic options block against the catalog, as
// TopicCreateOptions::parse does, and fills cfg with the values set.
func parseTopicOptions(opts []option, cfg topicConfig) (topicOptions09, uint32) {
	out := topicOptions09{set: map[string]bool{}, cfg: cfg}
	for _, o := range opts {
		if !slices.Contains(topicOptionKeys, o.key) {
			return out, CodeUnsupportedOptionKey
		}
		enc, isDefault, ok := out.absorb(o)
		if !ok {
			return out, CodeInvalidOptionValue
		}
		if !isDefault { // a ServerDefault sentinel (0) reads as absent
			out.set[o.key] = true
			out.explicit = append(out.explicit, enc)
		}
	}
	return out, CodeOK
}

// absorb parses one catalog entry into t.cfg and returns it in its
// canonical kind.
func (t *topicOptions09) absorb(o option) (option, bool, bool) {
	switch o.key {
	case optCompression:
		c, ok := parseCompression(o)
		t.cfg.compression = c
		name := map[uint8]string{1: "none", 2: "gzip"}[c]
		return option{key: o.key, kind: HeaderString, value: []byte(name)}, false, ok
	case optExpiry, optMaxTopicSize, optSegmentSize, optSizeToSave:
		v, ok := parseSize(o)
		if o.key == optSegmentSize {
			ok = ok && (v == 0 || v >= minSegmentSize09 && v <= defaultSegmentSize && v%512 == 0)
		}
		if v != 0 { // 0 is ServerDefault: the resolved default stays
			switch o.key {
			case optExpiry:
				t.cfg.messageExpiry = v
			case optMaxTopicSize:
				t.cfg.maxTopicSize = v
			case optSegmentSize:
				t.cfg.segmentSize = v
			case optSizeToSave:
				t.cfg.sizeToSave = v
			}
		}
		return option{key: o.key, kind: HeaderUint64, value: le64(v)}, v == 0, ok
	case optToSave:
		v, ok := parseUint32(o)
		t.cfg.messagesRequiredToSave = v
		ok = ok && v >= 1 && v <= maxMessagesToSave09
		return option{key: o.key, kind: HeaderUint32, value: le32(v)}, false, ok
	case optDurability, optOffsetsDurability:
		v, ok := parseDurability(o)
		if o.key == optDurability {
			t.cfg.persisted = v == durabilityPersisted
		} else {
			t.cfg.offsetsPersisted = v == durabilityPersisted
		}
		return option{key: o.key, kind: HeaderString, value: []byte(v)}, false, ok
	default: // preallocate_segments
		v, ok := parseBool(o)
		t.cfg.preallocate = v
		return option{key: o.key, kind: HeaderBool, value: []byte{b2u(v)}}, false, ok
	}
}

// parseDurability reads a durability policy: a String, replicated or
// persisted in any case (the policy's FromStr is case-insensitive).
func parseDurability(o option) (string, bool) {
	v := strings.ToLower(string(o.value))
	return v, o.kind == HeaderString && (v == durabilityReplicated || v == durabilityPersisted)
}

// durabilityName names a policy as the server reports it.
func durabilityName(persisted bool) string {
	if persisted {
		return durabilityPersisted
	}
	return durabilityReplicated
}

// derivedOptions returns, for every catalog key the topic's explicit block
// does not set, its resolved value in canonical kind.
func (s *Server) derivedOptions(t *topic) []option {
	explicit, _ := parseOptions(t.explicitOptions)
	var out []option
	add := func(key string, kind uint8, v []byte) {
		for _, o := range explicit {
			if o.key == key {
				return
			}
		}
		out = append(out, option{key: key, kind: kind, value: v})
	}
	add(optCompression, HeaderString, []byte(map[uint8]string{1: "none", 2: "gzip"}[t.compression]))
	add(optOffsetsDurability, HeaderString, []byte(durabilityName(t.offsetsPersisted)))
	add(optDurability, HeaderString, []byte(durabilityName(t.persisted)))
	add(optMaxTopicSize, HeaderUint64, le64(t.maxTopicSize))
	add(optExpiry, HeaderUint64, le64(t.messageExpiry))
	add(optToSave, HeaderUint32, le32(uint32(max(1, s.saveAt(t)))))
	add(optPreallocate, HeaderBool, []byte{b2u(t.preallocate)})
	add(optSegmentSize, HeaderUint64, le64(t.segmentSize))
	add(optSizeToSave, HeaderUint64, le64(t.sizeToSave))
	return out
}

// mergeOptions returns block with the entries of update added or replaced.
func mergeOptions(block []byte, update []option) []byte {
	old, _ := parseOptions(block)
	for _, u := range update {
		old = slices.DeleteFunc(old, func(o option) bool { return o.key == u.key })
		old = append(old, u)
	}
	return encodeOptions(old)
}

// ---- value parsers (a String value is parsed as the server's FromStr) ----

func parseCompression(o option) (uint8, bool) {
	switch {
	case o.kind == HeaderUint8 && len(o.value) == 1 && (o.value[0] == 1 || o.value[0] == 2):
		return o.value[0], true
	case o.kind == HeaderString && strings.EqualFold(string(o.value), "none"):
		return 1, true
	case o.kind == HeaderString && strings.EqualFold(string(o.value), "gzip"):
		return 2, true
	}
	return 0, false
}

func parseUint32(o option) (uint32, bool) {
	switch o.kind {
	case HeaderUint32:
		if len(o.value) == 4 {
			return binary.LittleEndian.Uint32(o.value), true
		}
	case HeaderString:
		v, err := strconv.ParseUint(string(o.value), 10, 32)
		return uint32(v), err == nil
	}
	return 0, false
}

func parseBool(o option) (bool, bool) {
	switch {
	case o.kind == HeaderBool && len(o.value) == 1 && o.value[0] <= 1:
		return o.value[0] == 1, true
	case o.kind == HeaderString:
		v, err := strconv.ParseBool(string(o.value))
		return v, err == nil && (string(o.value) == "true" || string(o.value) == "false")
	}
	return false, false
}

// parseSize reads a Uint64, or a String: "unlimited"/"none"/"never_expire"
// (u64::MAX), "default"/"server_default" (0), a number, a byte size
// ("128MiB", "1 GB") or a duration ("7 days", "1h 30m") in microseconds.
func parseSize(o option) (uint64, bool) {
	if o.kind == HeaderUint64 {
		if len(o.value) != 8 {
			return 0, false
		}
		return binary.LittleEndian.Uint64(o.value), true
	}
	if o.kind != HeaderString {
		return 0, false
	}
	s := strings.TrimSpace(string(o.value))
	switch strings.ToLower(s) {
	case "unlimited", "none", "never_expire":
		return unlimited, true
	case "default", "server_default":
		return 0, true
	}
	if o.key == optExpiry {
		return parseHumanDuration(s)
	}
	return parseByteSize(s)
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func b2u(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}
