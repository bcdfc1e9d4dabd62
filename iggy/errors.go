package iggy

import (
	"errors"
	"fmt"
)

// ServerError is an error code the server answered with. The connection is
// still usable after it.
type ServerError struct {
	Code uint32
}

// Error codes the client and the output act on (the same numbers in 0.8
// and 0.9).
const (
	CodeError                   uint32 = 1
	CodeInvalidCommand          uint32 = 3
	CodeInvalidFormat           uint32 = 4 // 0.9: also a login body of another protocol version
	CodeFeatureUnavailable      uint32 = 5
	CodeDisconnected            uint32 = 8
	CodeResourceNotFound        uint32 = 20 // 0.9: a send to a missing stream, topic or partition
	CodeUnauthenticated         uint32 = 40
	CodeUnauthorized            uint32 = 41
	CodeInvalidCredentials      uint32 = 42
	CodeInvalidUsername         uint32 = 43 // 0.8: a username outside 3 to 50 bytes, refused before it is looked up
	CodeInvalidPassword         uint32 = 44 // 0.8: a password outside 3 to 100 bytes, likewise
	CodeUserInactive            uint32 = 47
	CodeInvalidToken            uint32 = 53
	CodeTokenExpired            uint32 = 54
	CodeStreamIDNotFound        uint32 = 1009
	CodeStreamNameNotFound      uint32 = 1010
	CodeStreamNameAlreadyExists uint32 = 1012
	CodeTopicIDNotFound         uint32 = 2010
	CodeTopicNameNotFound       uint32 = 2011
	CodeTopicNameAlreadyExists  uint32 = 2013
	CodePartitionNotFound       uint32 = 3007
	CodeConsumerOffsetNotFound  uint32 = 3021 // deleting an offset that is not stored
	CodeConsumerNotResolved     uint32 = 3022 // 0.8: a group offset of a partition the member does not own
	CodeUnsupportedOptionKey    uint32 = 4041 // 0.9: a topic or stream option the server does not know
	CodeInvalidOffset           uint32 = 4100 // an offset past the partition's, or in an empty one
	// CodeConsumerGroupIDNotFound: the group does not exist (by id or name).
	CodeConsumerGroupIDNotFound        uint32 = 5000
	CodeConsumerGroupNameAlreadyExists uint32 = 5004
	CodeConsumerGroupMemberNotFound    uint32 = 5006 // the connection is not a member
	CodeConsumerGroupPartitionNotOwned uint32 = 5009 // 0.9: the member polled a partition it does not own
)

func (e *ServerError) Error() string {
	name, ok := codeNames[e.Code]
	if !ok {
		name = "unknown error"
	}
	return fmt.Sprintf("iggy error %d: %s", e.Code, name)
}

// CodeOf returns the server's error code in err, or 0 when err is not one.
func CodeOf(err error) uint32 {
	var se *ServerError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// IsNotFound tells whether err says that a stream or topic does not exist
// (0.9 answers a send to a missing stream, topic or partition with
// ResourceNotFound, which does not say which).
func IsNotFound(err error) bool {
	switch CodeOf(err) {
	case CodeStreamIDNotFound, CodeStreamNameNotFound, CodeTopicIDNotFound, CodeTopicNameNotFound, CodeResourceNotFound:
		return true
	}
	return false
}

// IsStreamNotFound tells whether err says that a stream does not exist.
func IsStreamNotFound(err error) bool {
	c := CodeOf(err)
	return c == CodeStreamIDNotFound || c == CodeStreamNameNotFound
}

// IsTopicNotFound tells whether err says that a topic does not exist.
func IsTopicNotFound(err error) bool {
	c := CodeOf(err)
	return c == CodeTopicIDNotFound || c == CodeTopicNameNotFound
}

// IsLoginRejected tells whether err is a login the server refused
// (credentials, token, inactive user). Both dialects say so with these
// codes: 0.8 answers an unknown user or a wrong password with 42, an
// inactive user with 47 and a username or password of a length it never
// accepts with 43 or 44; 0.9 evicts the login, and its eviction reasons
// are read as 42, 53 and 47 (v09Evicted.loginError).
func IsLoginRejected(err error) bool {
	switch CodeOf(err) {
	case CodeInvalidCredentials, CodeInvalidUsername, CodeInvalidPassword, CodeInvalidToken, CodeTokenExpired,
		CodeUnauthenticated, CodeUnauthorized, CodeUserInactive:
		return true
	}
	return false
}

// EndsConnection tells whether err leaves the connection unusable: a
// transport failure, or a server error that ends the session (Disconnected,
// which a 0.8 server sends as it shuts down cleanly, and Unauthenticated).
// After any other server error the connection serves the next request.
func EndsConnection(err error) bool {
	if err == nil {
		return false
	}
	code := CodeOf(err)
	return code == 0 || code == CodeDisconnected || code == CodeUnauthenticated
}

// ErrBroken is returned by every request on a Conn after a transport failure
// closed it.
var ErrBroken = errors.New("the Iggy connection is closed after an earlier failure")

// ErrClosed is returned by requests on a Conn or Pool that was closed.
var ErrClosed = errors.New("the Iggy connection was closed")

// TimeoutError is a request that got no answer in time. The connection is
// closed.
type TimeoutError struct {
	What    string
	Timeout string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: no answer from Iggy within %s; closed the connection", e.What, e.Timeout)
}

// UnsupportedServerError is a server whose protocol this package does not
// speak. Retrying cannot help.
type UnsupportedServerError struct {
	Addr string
	// Server describes what the server said of itself, e.g. "protocol
	// 0.12.0 to 0.12.3 (Iggy 0.10 or later)".
	Server string
}

func (e *UnsupportedServerError) Error() string {
	return fmt.Sprintf("the Iggy server at %s speaks %s; this build speaks Iggy 0.8 (protocol of server 0.8.x) and Iggy 0.9 (binary protocol 0.11.0)", e.Addr, e.Server)
}

// NotIggyError is an address whose server did not answer like Iggy.
type NotIggyError struct {
	Addr   string
	Detail string
}

func (e *NotIggyError) Error() string {
	return fmt.Sprintf("%s is not an Iggy server (%s)", e.Addr, e.Detail)
}

// IsPermanent tells whether err cannot be cured by retrying (an unsupported
// server).
func IsPermanent(err error) bool {
	var u *UnsupportedServerError
	return errors.As(err, &u)
}
