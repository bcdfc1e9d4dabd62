package iggy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/iggy/foreign/go/client"
	"github.com/apache/iggy/foreign/go/client/tcp"
	iggcon "github.com/apache/iggy/foreign/go/contracts"
	ierror "github.com/apache/iggy/foreign/go/errors"
)

// maxStuckDials caps the SDK constructors left running after a timed-out
// dial (see dialer.dial); beyond it new dials fail until they have returned.
const maxStuckDials = 8

// timeoutError reports a request that got no answer in time.
type timeoutError struct {
	what    string
	timeout time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("%s: no answer from Iggy within %v; closed the connection", e.what, e.timeout)
}

// errConnBroken is returned by conn.do once a connection has been given up.
var errConnBroken = errors.New("the Iggy connection is broken")

// conn is one logged-in SDK client and the socket under it.
type conn struct {
	cl      iggcon.Client
	sock    atomic.Value // net.Conn; unset if socketOf could not find it
	gen     uint64
	broken  atomic.Bool
	once    sync.Once
	closed  chan struct{} // closed when the SDK's Close has returned
	timeout time.Duration
	wbuf    []byte // request buffer of sendMessages, reused
}

func newConn(cl iggcon.Client, timeout time.Duration) *conn {
	c := &conn{cl: cl, closed: make(chan struct{}), timeout: timeout}
	c.refreshSocket()
	return c
}

// refreshSocket looks the socket up again; the SDK replaces it when a login
// is redirected to a cluster's leader.
func (c *conn) refreshSocket() {
	if s := socketOf(c.cl); s != nil {
		c.sock.Store(s)
	}
}

func (c *conn) socket() net.Conn {
	s, _ := c.sock.Load().(net.Conn)
	return s
}

// kill marks the connection broken and closes its socket, which makes any
// request blocked on it return.
func (c *conn) kill() {
	c.broken.Store(true)
	if s := c.socket(); s != nil {
		_ = s.Close()
	}
}

// close kills the connection and releases the SDK client in the background:
// the SDK's Close waits for the request mutex, which a request stuck on a
// socket we could not close would hold forever.
func (c *conn) close() <-chan struct{} {
	c.once.Do(func() {
		c.kill()
		go func() {
			defer close(c.closed)
			_ = c.cl.Close()
		}()
	})
	return c.closed
}

// do runs one SDK call, bounded by the connection's timeout and by ctx. On
// timeout or cancellation the socket is closed (the SDK has no deadlines),
// which makes the call return; a transport failure marks the connection
// broken. The call runs on the caller's goroutine: a hand-off to another one
// per request costs a scheduler round trip that shows on busy machines.
func (c *conn) do(ctx context.Context, what string, fn func(iggcon.Client) error) error {
	if c.broken.Load() {
		return errConnBroken
	}
	if c.socket() == nil {
		return c.doAbandoning(ctx, what, fn)
	}
	const (
		byTimer = 1
		byCtx   = 2
	)
	var fired atomic.Int32
	timer := time.AfterFunc(c.timeout, func() {
		if fired.CompareAndSwap(0, byTimer) {
			c.kill()
		}
	})
	stopCtx := context.AfterFunc(ctx, func() {
		if fired.CompareAndSwap(0, byCtx) {
			c.kill()
		}
	})
	err := fn(c.cl)
	timer.Stop()
	stopCtx()
	if err == nil {
		// A reply that beat the timer counts, even if the connection was
		// closed right after it.
		return nil
	}
	switch fired.Load() {
	case byTimer:
		return &timeoutError{what: what, timeout: c.timeout}
	case byCtx:
		return ctx.Err()
	}
	if isTransportError(err) {
		c.kill()
	}
	return err
}

// doAbandoning is do for a client whose socket socketOf could not find: the
// call runs in a goroutine that is abandoned (not stopped) on timeout.
func (c *conn) doAbandoning(ctx context.Context, what string, fn func(iggcon.Client) error) error {
	done := make(chan error, 1)
	go func() { done <- fn(c.cl) }()
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil && isTransportError(err) {
			c.kill()
		}
		return err
	case <-timer.C:
	case <-ctx.Done():
	}
	select {
	case err := <-done: // a reply that raced with the timer still counts
		if err != nil && isTransportError(err) {
			c.kill()
		}
		return err
	default:
	}
	c.kill()
	if err := ctx.Err(); err != nil {
		return err
	}
	return &timeoutError{what: what, timeout: c.timeout}
}

// isTransportError tells a failed connection (the SDK returns plain Go
// errors for those) from an error the server answered with, after which the
// connection is still usable. A few server codes also mean that this
// connection cannot go on (not logged in any more).
func isTransportError(err error) bool {
	if err == nil {
		return false
	}
	var ie ierror.IggyError
	if !errors.As(err, &ie) {
		return true
	}
	switch ie.Code() {
	case ierror.EmptyResponseCode, ierror.UnauthenticatedCode, ierror.NotConnectedCode,
		ierror.CannotEstablishConnectionCode, ierror.StaleClientCode, ierror.DisconnectedCode,
		ierror.ClientShutdownCode, ierror.ConnectionClosedCode:
		return true
	}
	return false
}

// dialer opens logged-in connections without ever blocking past its timeout.
type dialer struct {
	conf  *outputConfig
	stuck atomic.Int32
}

// dial connects and logs in. The SDK's constructor retries a failing dial
// or TLS handshake forever and cannot be cancelled, so the address and the
// handshake are checked first with a deadline, and the constructor runs in a
// goroutine that is abandoned (and its client closed whenever it returns) if
// it overruns.
func (d *dialer) dial(parent context.Context) (*conn, error) {
	conf := d.conf
	// The reachability check and the SDK constructor share one timeout;
	// the login is a request with its own.
	ctx, cancel := context.WithTimeout(parent, conf.timeout)
	defer cancel()

	if n := d.stuck.Load(); n >= maxStuckDials {
		return nil, fmt.Errorf("connecting to Iggy at %s: %d earlier attempts are still stuck in the Iggy SDK", conf.address, n)
	}
	if err := d.probe(ctx); err != nil {
		return nil, err
	}

	opts := []tcp.Option{tcp.WithServerAddress(conf.address)}
	if conf.tlsEnabled {
		opts = append(opts, tcp.WithTLS(conf.tlsOpts...))
	}
	type result struct {
		c   *conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		cl, err := client.NewIggyClient(client.WithTcp(opts...))
		if err != nil {
			ch <- result{err: err}
			return
		}
		ch <- result{c: newConn(cl, conf.timeout)}
	}()
	var c *conn
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("connecting to Iggy at %s: %w", conf.address, r.err)
		}
		c = r.c
	case <-ctx.Done():
		d.stuck.Add(1)
		go func() {
			if r := <-ch; r.c != nil {
				<-r.c.close()
			}
			d.stuck.Add(-1)
		}()
		if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("connecting to Iggy at %s: no connection within %v", conf.address, conf.timeout)
	}

	err := c.do(parent, "logging in", func(cl iggcon.Client) error {
		var err error
		if conf.token != "" {
			_, err = cl.LoginWithPersonalAccessToken(conf.token)
		} else {
			_, err = cl.LoginUser(conf.username, conf.password)
		}
		return err
	})
	if err != nil {
		c.close()
		who := "with a personal access token"
		if conf.token == "" {
			who = fmt.Sprintf("as %q", conf.username)
		}
		return nil, fmt.Errorf("logging in to Iggy at %s %s: %w", conf.address, who, err)
	}
	c.refreshSocket()
	return c, nil
}

// probe checks that the address accepts connections (and completes a TLS
// handshake with the settings the SDK will use) within the deadline.
func (d *dialer) probe(ctx context.Context) error {
	conf := d.conf
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", conf.address)
	if err != nil {
		return fmt.Errorf("connecting to Iggy at %s: %w", conf.address, err)
	}
	defer raw.Close()
	if !conf.tlsEnabled {
		return nil
	}
	tc := tls.Client(raw, conf.tlsConf.Clone())
	if err := tc.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("TLS handshake with Iggy at %s: %w", conf.address, err)
	}
	_ = tc.Close()
	return nil
}

// pool hands out at most max logged-in connections, one per concurrent
// batch, since an Iggy connection serves one request at a time.
type pool struct {
	dial  func(context.Context) (*conn, error)
	slots chan struct{}

	mu     sync.Mutex
	idle   []*conn
	all    map[*conn]struct{}
	gen    uint64 // bumped when a connection breaks; older idle ones are dropped
	closed bool
}

var errClosed = errors.New("the iggy output is closed")

func newPool(max int, dial func(context.Context) (*conn, error)) *pool {
	return &pool{dial: dial, slots: make(chan struct{}, max), all: map[*conn]struct{}{}}
}

// ready makes sure one usable connection is idle (or all are busy).
func (p *pool) ready(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return errClosed
	}
	p.dropStaleLocked()
	if len(p.idle) > 0 || len(p.all) >= cap(p.slots) {
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	c, err := p.dial(ctx)
	if err != nil {
		return err
	}
	return p.add(c, true)
}

// acquire takes an idle connection or dials a new one.
func (p *pool) acquire(ctx context.Context) (*conn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, errClosed
	}
	p.dropStaleLocked()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := p.dial(ctx)
	if err != nil {
		<-p.slots
		return nil, err
	}
	if err := p.add(c, false); err != nil {
		<-p.slots
		return nil, err
	}
	return c, nil
}

func (p *pool) add(c *conn, idle bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.close()
		return errClosed
	}
	c.gen = p.gen
	p.all[c] = struct{}{}
	if idle {
		p.idle = append(p.idle, c)
	}
	return nil
}

// release gives a connection back; a broken one is closed, and makes every
// idle connection dialled before it suspect (a restarted server breaks all).
func (p *pool) release(c *conn) {
	p.mu.Lock()
	switch {
	case c.broken.Load():
		if c.gen == p.gen {
			p.gen++
		}
		delete(p.all, c)
		c.close()
	case p.closed || c.gen != p.gen:
		delete(p.all, c)
		c.close()
	default:
		p.idle = append(p.idle, c)
	}
	p.mu.Unlock()
	<-p.slots
}

func (p *pool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

func (p *pool) dropStaleLocked() {
	kept := p.idle[:0]
	for _, c := range p.idle {
		if c.gen == p.gen && !c.broken.Load() {
			kept = append(kept, c)
			continue
		}
		delete(p.all, c)
		c.close()
	}
	p.idle = kept
}

// close closes every connection, busy ones included (their requests return
// at once), and waits for the SDK clients to shut down until ctx is done.
func (p *pool) close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	conns := make([]*conn, 0, len(p.all))
	for c := range p.all {
		conns = append(conns, c)
	}
	p.all = map[*conn]struct{}{}
	p.idle = nil
	p.mu.Unlock()

	waits := make([]<-chan struct{}, 0, len(conns))
	for _, c := range conns {
		waits = append(waits, c.close())
	}
	for _, w := range waits {
		select {
		case <-w:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
