package iggytest

import "fmt"

// Version is the Iggy server release whose wire protocol a test server
// speaks. The zero value is Version08.
type Version int

const (
	// Version08 is Iggy server 0.8.0: requests [u32 length][u32 code]
	// [payload], responses [u32 status][u32 length][payload].
	Version08 Version = iota
	// Version09 is Iggy server 0.9.0 (binary protocol 0.11.0): 256-byte
	// headers both ways, logins as the Register operation, metadata
	// operations deduplicated by request number, message batches.
	Version09
	// Version010 simulates a 0.10 server (binary protocol 0.12.0) for tests
	// of refusal: it frames and answers like Version09 (ping works), but
	// evicts every login with reason 14 (incompatible protocol) and the
	// accepted window 0.12.0..0.12.0, as a 0.10 server does to a 0.11 client.
	Version010
)

// String returns the release, "0.8", "0.9" or "0.10".
func (v Version) String() string {
	switch v {
	case Version08:
		return "0.8"
	case Version09:
		return "0.9"
	case Version010:
		return "0.10"
	}
	return fmt.Sprintf("Version(%d)", int(v))
}

// ParseVersion reads "0.8", "0.9" or "0.10".
func ParseVersion(s string) (Version, error) {
	for _, v := range []Version{Version08, Version09, Version010} {
		if v.String() == s {
			return v, nil
		}
	}
	return 0, fmt.Errorf("iggytest: unknown Iggy version %q (0.8, 0.9 or 0.10)", s)
}

// vsr reports whether v frames requests with 256-byte headers.
func (v Version) vsr() bool { return v == Version09 || v == Version010 }

// PackProtocol packs a binary-protocol version the way 0.9 logins and
// evictions carry it: major<<20 | minor<<10 | patch.
func PackProtocol(major, minor, patch uint32) uint32 {
	return major<<20 | minor<<10 | patch
}

// Binary-protocol versions of the releases (iggy_binary_protocol crate).
const (
	// Protocol09 (0.11.0) is what server 0.9 accepts: clients of protocol
	// 0.11.0 up to 0.11.1023.
	Protocol09 uint32 = 11 << 10
	// Protocol010 (0.12.0) is what a 0.10 server accepts.
	Protocol010 uint32 = 12 << 10
)

// Server build versions a 0.9-framed login reply announces.
const (
	serverVersion09  = "0.9.0"
	serverVersion010 = "0.10.0"
)

// Eviction reasons of a 0.9 Eviction frame (byte 255 of the header;
// consensus/header.rs EvictionReason).
const (
	EvictNoSession            uint8 = 1
	EvictInvalidCredentials   uint8 = 9
	EvictInvalidToken         uint8 = 10
	EvictUserInactive         uint8 = 11
	EvictIncompatibleProtocol uint8 = 14
	EvictMalformedLogin       uint8 = 15
)
