package bbolt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// An entry is stored as a 9-byte header followed by the value:
//
//	byte 0     format version (entryVersion)
//	bytes 1-8  expiry as Unix nanoseconds, big-endian; 0 means "never expires"
//	bytes 9-   the value, verbatim
//
// Keeping the expiry inside the value means a Set is a single Put in a single
// transaction: the value and its expiry can never disagree after a crash.
const (
	entryVersion    = 1
	entryHeaderSize = 9
)

var errCorruptEntry = errors.New("corrupt entry")

// encodeEntry returns the stored form of value with the given expiry (zero
// time: no expiry).
func encodeEntry(value []byte, expires time.Time) []byte {
	buf := make([]byte, entryHeaderSize+len(value))
	buf[0] = entryVersion
	if !expires.IsZero() {
		binary.BigEndian.PutUint64(buf[1:entryHeaderSize], uint64(expires.UnixNano()))
	}
	copy(buf[entryHeaderSize:], value)
	return buf
}

// decodeEntry splits a stored entry into its expiry (zero: none) and value.
// The returned value aliases raw.
func decodeEntry(raw []byte) (expires time.Time, value []byte, err error) {
	if len(raw) < entryHeaderSize {
		return time.Time{}, nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", errCorruptEntry, len(raw), entryHeaderSize)
	}
	if raw[0] != entryVersion {
		return time.Time{}, nil, fmt.Errorf("%w: unknown format version %d", errCorruptEntry, raw[0])
	}
	if ns := int64(binary.BigEndian.Uint64(raw[1:entryHeaderSize])); ns != 0 {
		expires = time.Unix(0, ns)
	}
	return expires, raw[entryHeaderSize:], nil
}

// expired reports whether an entry with the given expiry is dead at now.
func expired(expires, now time.Time) bool {
	return !expires.IsZero() && !now.Before(expires)
}
