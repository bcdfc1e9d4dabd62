package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frame layout (all header integers big-endian):
//
//	request:  int32 length | int16 api_key | int16 api_version | int32 request_id | body
//	response: int32 length | int8 type | int32 request_id | body     (type 0 success, 1 error)
//	          int32 length | int8 type | body                        (type 2 server failure)
//
// length counts the bytes after itself.
const (
	// RequestHeaderLen is the size of a request header after the length prefix.
	RequestHeaderLen = 8
	// lengthLen is the size of the length prefix.
	lengthLen = 4

	responseHeaderLen      = 5
	serverFailureHeaderLen = 1

	// DefaultMaxFrameSize bounds the size of a response frame a connection
	// accepts. Fetch responses are bounded by the request's max_bytes (16 MiB
	// by default) except that one whole batch is always returned.
	DefaultMaxFrameSize = 256 << 20
)

// ResponseType is the first byte of a response frame.
type ResponseType byte

// Response types.
const (
	ResponseSuccess       ResponseType = 0
	ResponseError         ResponseType = 1
	ResponseServerFailure ResponseType = 2
)

// String implements fmt.Stringer.
func (t ResponseType) String() string {
	switch t {
	case ResponseSuccess:
		return "SUCCESS_RESPONSE"
	case ResponseError:
		return "ERROR_RESPONSE"
	case ResponseServerFailure:
		return "SERVER_FAILURE"
	}
	return fmt.Sprintf("RESPONSE_TYPE_%d", byte(t))
}

// ErrFrameTooLarge is wrapped by errors about frames whose declared length is
// above the connection's bound; the bound is checked before any allocation.
var ErrFrameTooLarge = errors.New("frame larger than the allowed maximum")

// ErrMalformedFrame is wrapped by errors about frames that cannot be parsed.
var ErrMalformedFrame = errors.New("malformed frame")

// AppendRequest appends a complete request frame (length prefix, header and
// body) to dst.
func AppendRequest(dst []byte, key APIKey, version int16, requestID int32, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(RequestHeaderLen+len(body)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(key))
	dst = binary.BigEndian.AppendUint16(dst, uint16(version))
	dst = binary.BigEndian.AppendUint32(dst, uint32(requestID))
	return append(dst, body...)
}

// putRequestHeader writes the length prefix and request header into the
// first 12 bytes of frame, for a body of bodyLen bytes that follows them.
func putRequestHeader(frame []byte, key APIKey, version int16, requestID int32, bodyLen int) {
	binary.BigEndian.PutUint32(frame[0:4], uint32(RequestHeaderLen+bodyLen))
	binary.BigEndian.PutUint16(frame[4:6], uint16(key))
	binary.BigEndian.PutUint16(frame[6:8], uint16(version))
	binary.BigEndian.PutUint32(frame[8:12], uint32(requestID))
}

// Response is a parsed response frame. Body aliases the frame it was parsed
// from.
type Response struct {
	Type ResponseType
	// RequestID is unset (0) for ResponseServerFailure, which names no request.
	RequestID int32
	// Body is the protobuf payload: the API's response message for
	// ResponseSuccess, an ErrorResponse otherwise.
	Body []byte
}

// ParseResponse parses a response frame without its length prefix.
func ParseResponse(frame []byte) (Response, error) {
	if len(frame) < serverFailureHeaderLen {
		return Response{}, fmt.Errorf("%w: empty response frame", ErrMalformedFrame)
	}
	t := ResponseType(frame[0])
	switch t {
	case ResponseSuccess, ResponseError:
		if len(frame) < responseHeaderLen {
			return Response{}, fmt.Errorf("%w: %s frame of %d bytes is shorter than its %d-byte header",
				ErrMalformedFrame, t, len(frame), responseHeaderLen)
		}
		return Response{
			Type:      t,
			RequestID: int32(binary.BigEndian.Uint32(frame[1:5])),
			Body:      frame[responseHeaderLen:],
		}, nil
	case ResponseServerFailure:
		return Response{Type: t, Body: frame[serverFailureHeaderLen:]}, nil
	}
	return Response{}, fmt.Errorf("%w: unknown response type %d", ErrMalformedFrame, frame[0])
}

// frameLengthError is a frame whose declared length is negative (it wraps
// ErrMalformedFrame) or above the bound (ErrFrameTooLarge). It keeps the
// length prefix as read, which tells what kind of server sent it.
type frameLengthError struct {
	length int64
	limit  int
	prefix [lengthLen]byte
}

// Error implements error.
func (e *frameLengthError) Error() string {
	if e.length < 0 {
		return fmt.Sprintf("%v: negative frame length %d", ErrMalformedFrame, e.length)
	}
	return fmt.Sprintf("%v: frame of %d bytes, limit %d", ErrFrameTooLarge, e.length, e.limit)
}

// Unwrap returns ErrMalformedFrame or ErrFrameTooLarge.
func (e *frameLengthError) Unwrap() error {
	if e.length < 0 {
		return ErrMalformedFrame
	}
	return ErrFrameTooLarge
}

// FrameReader reads length-prefixed frames from a stream. It is not safe for
// concurrent use.
type FrameReader struct {
	r   io.Reader
	max int
	hdr [lengthLen]byte
}

// NewFrameReader returns a reader of frames from r whose declared length is at
// most maxFrame bytes (DefaultMaxFrameSize if maxFrame <= 0).
func NewFrameReader(r io.Reader, maxFrame int) *FrameReader {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrameSize
	}
	return &FrameReader{r: r, max: maxFrame}
}

// Next reads the next frame and returns its bytes after the length prefix, in
// a slice the caller owns (a fresh one, or one handed back through
// WithFrameRelease). The declared length is validated against the
// bound before the slice is allocated. At a clean end of stream it returns
// io.EOF; a stream that ends inside a frame gives io.ErrUnexpectedEOF.
func (fr *FrameReader) Next() ([]byte, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return nil, err
	}
	n := int64(int32(binary.BigEndian.Uint32(fr.hdr[:])))
	if n < 0 || n > int64(fr.max) {
		return nil, &frameLengthError{length: n, limit: fr.max, prefix: fr.hdr}
	}
	buf := frameBuf(int(n))
	if _, err := io.ReadFull(fr.r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}
