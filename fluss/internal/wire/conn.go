// Package wire is the Fluss RPC transport: length-prefixed frames over TCP,
// many requests in flight per connection matched to their responses by
// request id (responses arrive in any order), per-request timeouts and
// context cancellation, the ApiVersions handshake and SASL/PLAIN.
//
// A Conn is one TCP connection to one server. It never retries or redials by
// itself: when anything goes wrong at the connection level (a read or write
// error, a malformed or oversized frame, a SERVER_FAILURE frame) every
// pending request fails with a *ConnError and the Conn is dead for good
// (Done is closed). Package fluss keeps one Conn per server and redials with
// backoff.
//
// Error kinds, all usable with errors.As / errors.Is:
//   - *ConnError: the connection failed; the request may or may not have
//     reached the server.
//   - *TimeoutError: no response within the request timeout (Fluss servers
//     silently drop requests they cannot parse or do not serve). The
//     connection stays usable; a late response is discarded.
//   - *RequestError wrapping an *errcode.ServerError: the server answered
//     with an ERROR_RESPONSE.
//   - the caller's ctx.Err() when ctx ends first.
//
// errcode.IsRetriable classifies all of them.
package wire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// Defaults for Config.
const (
	DefaultDialTimeout    = 10 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	// DefaultHandshakeTimeout is how long the first request waits for its
	// answer (a Fluss server answers ApiVersions in milliseconds).
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultClientName       = "fluss-iggy"
	DefaultClientVersion    = "0.1.0"
)

// SASLPlain holds SASL/PLAIN credentials.
type SASLPlain struct {
	Username string
	Password string
}

// Config configures a connection. The zero value is usable.
type Config struct {
	// ClientName and ClientVersion are sent in ApiVersions.
	ClientName    string
	ClientVersion string
	// DialTimeout bounds the TCP dial plus the handshake (ApiVersions and
	// authentication).
	DialTimeout time.Duration
	// HandshakeTimeout is how long the first request (ApiVersions) waits
	// for its answer, within DialTimeout. A peer that stays silent that
	// long, or closes the connection instead, fails the dial with
	// ErrNoAnswer.
	HandshakeTimeout time.Duration
	// RequestTimeout is the default time to wait for a response; a call can
	// override it with WithTimeout. The earlier of it and the context's
	// deadline applies.
	RequestTimeout time.Duration
	// MaxFrameSize bounds response frames (DefaultMaxFrameSize if <= 0).
	MaxFrameSize int
	// SASL enables SASL/PLAIN authentication when non-nil.
	SASL *SASLPlain
	// ExpectedServerType, when set, makes the handshake fail if the server
	// reports another role (0.9+ servers report theirs).
	ExpectedServerType ServerType
	// Dial replaces net.Dialer.DialContext (tests, proxies).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives debug and warning logs; nil discards them.
	Logger *slog.Logger
	// RetryDelay gives the wait before retry number attempt (0-based) of a
	// RETRIABLE_AUTHENTICATE_EXCEPTION; the client sets its default
	// backoff policy. Nil waits 100 ms each time.
	RetryDelay func(attempt int) time.Duration
}

func (c *Config) withDefaults() Config {
	out := *c
	if out.ClientName == "" {
		out.ClientName = DefaultClientName
	}
	if out.ClientVersion == "" {
		out.ClientVersion = DefaultClientVersion
	}
	if out.DialTimeout <= 0 {
		out.DialTimeout = DefaultDialTimeout
	}
	if out.HandshakeTimeout <= 0 {
		out.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if out.RequestTimeout <= 0 {
		out.RequestTimeout = DefaultRequestTimeout
	}
	if out.MaxFrameSize <= 0 {
		out.MaxFrameSize = DefaultMaxFrameSize
	}
	if out.Logger == nil {
		out.Logger = slog.New(slog.DiscardHandler)
	}
	if out.Dial == nil {
		d := &net.Dialer{KeepAlive: 30 * time.Second}
		out.Dial = d.DialContext
	}
	return out
}

type result struct {
	resp  Response
	frame []byte // the frame resp.Body is part of
	err   error
}

type versionRange struct{ min, max int16 }

// Conn is one connection to a Fluss server. It is safe for concurrent use.
type Conn struct {
	addr string
	cfg  Config
	nc   net.Conn
	log  *slog.Logger

	wmu  sync.Mutex // serializes frame writes
	wbuf []byte     // guarded by wmu

	mu      sync.Mutex
	nextID  int32
	pending map[int32]chan result
	err     error // set once when the connection dies
	done    chan struct{}

	// Set by the handshake, read-only afterwards.
	versions   map[APIKey]versionRange
	serverType ServerType
}

// Dial connects to addr, performs the ApiVersions handshake and, when
// configured, SASL/PLAIN authentication. The dial and handshake are bounded
// by cfg.DialTimeout and by ctx, the wait for the first answer by
// cfg.HandshakeTimeout too: a peer that does not answer it fails the dial
// with ErrNoAnswer.
func Dial(ctx context.Context, addr string, cfg Config) (*Conn, error) {
	cfg = cfg.withDefaults()
	dctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()

	nc, err := cfg.Dial(dctx, "tcp", addr)
	if err != nil {
		return nil, &ConnError{Addr: addr, Op: "dial", Err: err}
	}
	c := newConn(addr, nc, cfg)
	if err := c.handshake(dctx); err != nil {
		if perr := ctx.Err(); perr != nil && errors.Is(err, ErrNoAnswer) {
			err = perr // the caller gave up, not the server
		}
		var ce *ConnError
		if !errors.As(err, &ce) || errors.Is(err, ErrNoAnswer) {
			err = &ConnError{Addr: addr, Op: "handshake", Err: err}
		}
		c.fail(err)
		return nil, err
	}
	return c, nil
}

// NewConn wraps an established connection without any handshake (tests and
// callers that do their own). cfg defaults apply.
func NewConn(addr string, nc net.Conn, cfg Config) *Conn {
	return newConn(addr, nc, cfg.withDefaults())
}

func newConn(addr string, nc net.Conn, cfg Config) *Conn {
	c := &Conn{
		addr:    addr,
		cfg:     cfg,
		nc:      nc,
		log:     cfg.Logger.With("server", addr),
		pending: make(map[int32]chan result),
		done:    make(chan struct{}),
	}
	go c.readLoop()
	return c
}

// Addr returns the server address.
func (c *Conn) Addr() string { return c.addr }

// ServerType returns the role the server reported in ApiVersions
// (ServerTypeUnknown for servers before 0.9 or without handshake).
func (c *Conn) ServerType() ServerType { return c.serverType }

// Done is closed when the connection has died; Err then tells why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns the error the connection died with, or nil while it is alive.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection; pending requests fail with a *ConnError
// wrapping ErrConnClosed.
func (c *Conn) Close() error {
	c.fail(&ConnError{Addr: c.addr, Op: "closed", Err: ErrConnClosed})
	return nil
}

// Version returns the version of api this connection uses, and false when the
// server's ApiVersions list does not include it (the server would never
// answer such a request).
func (c *Conn) Version(api APIKey) (int16, bool) {
	if c.versions == nil {
		return clientMaxVersion(api), true
	}
	r, ok := c.versions[api]
	if !ok {
		return 0, false
	}
	v := clientMaxVersion(api)
	if v > r.max {
		v = r.max
	}
	if v < r.min {
		return 0, false
	}
	return v, true
}

// CallOption adjusts one call.
type CallOption func(*callOpts)

type callOpts struct {
	timeout time.Duration
	version int16
	hasVer  bool
	release *func()
}

// WithFrameRelease sets *release, when the call succeeds, to a func that
// hands the response's frame back for a later response to be read into
// (frames of 64 KiB and more; up to 64 MiB are kept). Call it once nothing
// refers to the body any more, or not at all: without it the frame is left
// to the garbage collector.
func WithFrameRelease(release *func()) CallOption {
	return func(o *callOpts) { o.release = release }
}

// WithTimeout sets the time to wait for the response of this call instead of
// Config.RequestTimeout (use it for long-poll fetches: max_wait_ms plus a
// margin).
func WithTimeout(d time.Duration) CallOption { return func(o *callOpts) { o.timeout = d } }

// WithVersion forces the API version of this call instead of the negotiated
// one.
func WithVersion(v int16) CallOption {
	return func(o *callOpts) { o.version, o.hasVer = v, true }
}

// Call sends req as api and decodes the success response into resp. Proto2
// required fields are checked on both sides.
func (c *Conn) Call(ctx context.Context, api APIKey, req, resp proto.Message, opts ...CallOption) error {
	body, err := c.CallRaw(ctx, api, req, opts...)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(body, resp); err != nil {
		return &RequestError{Addr: c.addr, API: api, Err: fmt.Errorf("decoding response: %w", err)}
	}
	return nil
}

// CallRaw sends req as api and returns the undecoded body of the success
// response. The slice is owned by the caller (it is never reused), so a
// decoder may alias it, e.g. to keep fetched records without a copy.
func (c *Conn) CallRaw(ctx context.Context, api APIKey, req proto.Message, opts ...CallOption) ([]byte, error) {
	o := callOpts{timeout: c.cfg.RequestTimeout}
	for _, f := range opts {
		f(&o)
	}
	if !o.hasVer {
		v, ok := c.Version(api)
		if !ok {
			return nil, &RequestError{Addr: c.addr, API: api, Err: &errcode.ServerError{
				Err:     errcode.UnsupportedVersion,
				Message: fmt.Sprintf("server (%s) does not serve %s", c.serverType, api),
			}}
		}
		o.version = v
	}
	return c.roundTrip(ctx, api, o, req)
}

var marshalOpts = proto.MarshalOptions{}

func (c *Conn) roundTrip(ctx context.Context, api APIKey, o callOpts, req proto.Message) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch := make(chan result, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	id := c.nextID
	for {
		if _, busy := c.pending[id]; !busy {
			break
		}
		id++
		if id < 0 {
			id = 0
		}
	}
	c.nextID = id + 1
	if c.nextID < 0 {
		c.nextID = 0
	}
	c.pending[id] = ch
	c.mu.Unlock()

	timer := time.NewTimer(o.timeout)
	defer timer.Stop()
	deadline := time.Now().Add(o.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	if err := c.write(ctx, api, o.version, id, req, deadline); err != nil {
		c.forget(id)
		return nil, err
	}

	select {
	case r := <-ch:
		return c.finish(api, o, r)
	case <-ctx.Done():
		c.forget(id)
		return nil, ctx.Err()
	case <-timer.C:
		c.forget(id)
		// The response may have raced the timer.
		select {
		case r := <-ch:
			return c.finish(api, o, r)
		default:
		}
		c.log.Debug("fluss request timed out", "api", api.String(), "request_id", id, "timeout", o.timeout)
		return nil, &TimeoutError{Addr: c.addr, API: api, After: o.timeout}
	}
}

func (c *Conn) finish(api APIKey, o callOpts, r result) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	switch r.resp.Type {
	case ResponseSuccess:
		if o.release != nil {
			frame := r.frame
			*o.release = func() { frames.Put(frame) }
		}
		return r.resp.Body, nil
	case ResponseError:
		return nil, &RequestError{Addr: c.addr, API: api, Err: decodeErrorBody(r.resp.Body)}
	}
	return nil, &RequestError{Addr: c.addr, API: api, Err: fmt.Errorf("%w: unexpected %s", ErrMalformedFrame, r.resp.Type)}
}

// decodeErrorBody turns an ErrorResponse body into an error (never nil).
func decodeErrorBody(body []byte) error {
	var er pb.ErrorResponse
	if err := proto.Unmarshal(body, &er); err != nil {
		return fmt.Errorf("%w: undecodable ErrorResponse: %v", ErrMalformedFrame, err)
	}
	if err := errcode.New(er.GetErrorCode(), er.GetErrorMessage()); err != nil {
		return err
	}
	// An error frame with code NONE: still a failure of the request.
	return &errcode.ServerError{Err: errcode.UnknownServerError, Message: "error response with code 0: " + er.GetErrorMessage()}
}

func (c *Conn) forget(id int32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// aLongTimeAgo is a deadline in the past, used to interrupt a blocked write.
var aLongTimeAgo = time.Unix(1, 0)

func (c *Conn) write(ctx context.Context, api APIKey, version int16, id int32, req proto.Message, deadline time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()

	buf := c.wbuf[:0]
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	buf, err := marshalOpts.MarshalAppend(buf, req)
	if err != nil {
		return fmt.Errorf("fluss: encoding %s request: %w", api, err)
	}
	putRequestHeader(buf, api, version, id, len(buf)-lengthLen-RequestHeaderLen)
	if cap(buf) <= 1<<20 {
		c.wbuf = buf
	} else {
		c.wbuf = nil // do not pin huge produce buffers
	}

	if err := c.nc.SetWriteDeadline(deadline); err != nil {
		return c.failWrite(err)
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = c.nc.SetWriteDeadline(aLongTimeAgo)
		close(fired)
	})
	n, err := c.nc.Write(buf)
	if !stop() {
		<-fired
	}
	if err == nil {
		return nil
	}
	if n == 0 {
		// Nothing reached the stream; the connection is still consistent.
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return &TimeoutError{Addr: c.addr, API: api, After: time.Until(deadline)}
		}
	}
	// A partial frame corrupts the stream: drop the connection.
	return c.failWrite(err)
}

func (c *Conn) failWrite(err error) error {
	ce := &ConnError{Addr: c.addr, Op: "write", Err: err}
	c.fail(ce)
	return c.Err()
}

// fail kills the connection once: records err, fails every pending request
// with it, closes the socket and Done.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	pending := c.pending
	c.pending = make(map[int32]chan result)
	close(c.done)
	c.mu.Unlock()

	_ = c.nc.Close()
	for _, ch := range pending {
		ch <- result{err: err}
	}
	var ce *ConnError
	if errors.As(err, &ce) && errors.Is(ce.Err, ErrConnClosed) {
		c.log.Debug("fluss connection closed")
	} else {
		c.log.Warn("fluss connection failed", "error", err, "failed_requests", len(pending))
	}
}

func (c *Conn) readLoop() {
	fr := NewFrameReader(c.nc, c.cfg.MaxFrameSize)
	for first := true; ; first = false {
		frame, err := fr.Next()
		var resp Response
		if err == nil {
			resp, err = ParseResponse(frame)
		}
		if err != nil {
			if first {
				err = c.firstFrameError(err, frame)
			}
			c.fail(&ConnError{Addr: c.addr, Op: "read", Err: err})
			return
		}
		if resp.Type == ResponseServerFailure {
			c.fail(&ConnError{Addr: c.addr, Op: "server failure", Err: decodeErrorBody(resp.Body)})
			return
		}
		c.mu.Lock()
		ch, ok := c.pending[resp.RequestID]
		delete(c.pending, resp.RequestID)
		c.mu.Unlock()
		if !ok {
			// A response to a request that timed out or was cancelled.
			c.log.Debug("fluss response for unknown request id dropped", "request_id", resp.RequestID)
			continue
		}
		ch <- result{resp: resp, frame: frame}
	}
}

// firstFrameError classifies the failure to read or parse the first frame
// of a connection. A Fluss server's first answer (to ApiVersions) is a
// small, well-formed frame, so an absurd length prefix (the bytes "HTTP"
// read as a length are 1.2 GB) or an unknown frame type comes from another
// kind of server: that is reported as ErrNotFluss with the start of its
// answer. Other errors (EOF, resets) are returned unchanged.
func (c *Conn) firstFrameError(err error, frame []byte) error {
	var fle *frameLengthError
	switch {
	case errors.As(err, &fle):
		return &notFlussError{answer: c.answerStart(fle.prefix[:]), cause: err}
	case errors.Is(err, ErrMalformedFrame) && frame != nil:
		return &notFlussError{answer: frame[:min(len(frame), answerPrefixLen)], cause: err}
	}
	return err
}

// answerStart returns the start of the server's answer: its first line
// (at most answerPrefixLen bytes), from the prefix already read and what
// else arrives within a moment (the connection is being dropped, so
// nothing else reads from it).
func (c *Conn) answerStart(prefix []byte) []byte {
	buf := make([]byte, answerPrefixLen)
	n := copy(buf, prefix)
	_ = c.nc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	for n < len(buf) && bytes.IndexByte(buf[:n], '\n') < 0 {
		m, err := c.nc.Read(buf[n:])
		n += m
		if err != nil {
			break
		}
	}
	line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
	return bytes.TrimRight(line, "\r")
}
