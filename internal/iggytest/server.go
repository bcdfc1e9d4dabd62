package iggytest

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultUsername and DefaultPassword are the credentials of the user a
// server gets when Options.Users is empty (the real server's default root user).
const (
	DefaultUsername = "iggy"
	DefaultPassword = "iggy"
)

// User is an account of the test server. Users get IDs in list order from 0.
type User struct {
	Username string
	Password string
	// Inactive users cannot log in (error 47 UserInactive).
	Inactive bool
}

// Token is a personal access token of a user, usable with
// LoginWithPersonalAccessToken.
type Token struct {
	// Username names the owning user (one of Options.Users, or the default user).
	Username string
	// Name is the token's name (3-30 bytes), as listed by GetPersonalAccessTokens.
	Name string
	// Token is the raw token string a client presents (1-255 bytes).
	Token string
	// ExpiresAt, when not zero, is when the token stops working (error 54).
	ExpiresAt time.Time
}

// Options configure a test server. The zero value is a plain server on
// 127.0.0.1 with the default user.
type Options struct {
	// Addr is the listen address; default "127.0.0.1:0" (a free port).
	Addr string
	// Users replaces the default user list (DefaultUsername / DefaultPassword).
	Users []User
	// Tokens are personal access tokens known from the start.
	Tokens []Token
	// TLSConfig, when set, makes the server speak TLS on its socket.
	TLSConfig *tls.Config
	// MaxFrameSize caps the size of one request; a larger request closes the
	// connection. Default 128 MiB.
	MaxFrameSize int
	// GracefulStop makes Stop, Restart and Close behave like a 0.8.0 server
	// shutting down cleanly: each connection first gets an unsolicited error
	// response 8 (Disconnected), after the answer to a request in progress,
	// and is then closed. Without it connections are cut as by a crash.
	GracefulStop bool
	// MaxMessagesPerPartition, when above 0, keeps only that many newest
	// messages per partition (older ones are dropped as if their segment had
	// expired). Offsets keep counting.
	MaxMessagesPerPartition int
}

// Server is an in-process Iggy 0.8 server. All methods are safe for concurrent use.
type Server struct {
	opts Options

	mu           sync.Mutex // guards everything below
	data         *store
	users        []*user
	tokens       []*token
	conns        map[*conn]struct{}
	ln           net.Listener
	addr         string // resolved listen address, kept across Stop/Resume
	running      bool
	closed       bool
	stopCh       chan struct{} // closed by Stop; a new one per Resume
	faults       []*FaultHandle
	counts       map[Command]int
	nextClientID uint32

	wg sync.WaitGroup // accept loop and connection goroutines
}

type user struct {
	id       uint32
	username string
	password string
	inactive bool
}

type token struct {
	userID    uint32
	name      string
	raw       string
	expiresAt time.Time
}

// Start creates a server and starts listening. Close it when done.
func Start(opts Options) (*Server, error) {
	s, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	if err := s.listen(s.opts.Addr); err != nil {
		return nil, err
	}
	return s, nil
}

// newServer builds a server that does not listen yet.
func newServer(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.MaxFrameSize <= 0 {
		opts.MaxFrameSize = defaultMaxFrameSize
	}
	s := &Server{
		opts:         opts,
		data:         newStore(),
		conns:        map[*conn]struct{}{},
		counts:       map[Command]int{},
		nextClientID: 1,
	}
	users := opts.Users
	if len(users) == 0 {
		users = []User{{Username: DefaultUsername, Password: DefaultPassword}}
	}
	for i, u := range users {
		for _, o := range s.users {
			if o.username == u.Username {
				return nil, fmt.Errorf("iggytest: user %q listed twice", u.Username)
			}
		}
		s.users = append(s.users, &user{id: uint32(i), username: u.Username, password: u.Password, inactive: u.Inactive})
	}
	for _, t := range opts.Tokens {
		u := s.userByName(t.Username)
		if u == nil {
			return nil, fmt.Errorf("iggytest: token %q: no user %q", t.Name, t.Username)
		}
		if len(t.Token) == 0 || len(t.Token) > 255 {
			return nil, fmt.Errorf("iggytest: token %q: raw token must be 1-255 bytes", t.Name)
		}
		s.tokens = append(s.tokens, &token{userID: u.id, name: t.Name, raw: t.Token, expiresAt: t.ExpiresAt})
	}
	return s, nil
}

// Addr returns the host:port the server listens on (the same after Restart).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

func (s *Server) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("iggytest: listen on %s: %w", addr, err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = ln.Close()
		return errors.New("iggytest: server closed")
	}
	s.addr = ln.Addr().String()
	s.ln = ln
	s.running = true
	s.stopCh = make(chan struct{})
	stopCh := s.stopCh
	s.wg.Add(1)
	s.mu.Unlock()
	go s.acceptLoop(ln, stopCh)
	return nil
}

func (s *Server) acceptLoop(ln net.Listener, stopCh chan struct{}) {
	defer s.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			select {
			case <-stopCh:
				return
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if s.opts.TLSConfig != nil {
			nc = tls.Server(nc, s.opts.TLSConfig)
		}
		c := newConn(nc, nc, nc)
		s.mu.Lock()
		select {
		case <-stopCh:
			s.mu.Unlock()
			_ = nc.Close()
			return
		default:
		}
		c.clientID = s.nextClientID
		s.nextClientID++
		c.addr = nc.RemoteAddr().String()
		c.stopCh = stopCh
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

// Stop closes the listener and every connection (cut, or ended as a clean
// shutdown does with Options.GracefulStop), abandons stalled requests and
// waits for the server's goroutines. Data, users and tokens are kept; Resume
// listens again.
func (s *Server) Stop() error {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return nil
	}
	s.running = false
	close(s.stopCh)
	err := s.ln.Close()
	for c := range s.conns {
		if s.opts.GracefulStop {
			c.stop()
		} else {
			c.close()
		}
	}
	s.mu.Unlock()
	if s.opts.GracefulStop {
		// Requests in progress get a moment to be answered; then cut.
		done := make(chan struct{})
		go func() { s.wg.Wait(); close(done) }()
		select {
		case <-done:
			return err
		case <-time.After(2 * time.Second):
			s.DropConnections()
		}
	}
	s.wg.Wait()
	return err
}

// Resume listens again on the address the server had (after Stop).
func (s *Server) Resume() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("iggytest: server closed")
	}
	if s.running {
		s.mu.Unlock()
		return nil
	}
	addr := s.addr
	s.mu.Unlock()
	var err error
	// The port was ours a moment ago; retry briefly in case the OS holds it.
	for i := 0; i < 50; i++ {
		if err = s.listen(addr); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}

// Restart drops every connection and listens again on the same port, keeping
// all data, as a server process restarted with its data directory.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.Resume()
}

// Close stops the server for good: listener and connections closed, stalled
// requests abandoned, all goroutines finished.
func (s *Server) Close() error {
	err := s.Stop()
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return err
}

// DropConnections closes every open connection now (the listener stays) and
// returns how many it closed.
func (s *Server) DropConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		c.close()
		n++
	}
	return n
}

// Connections returns the number of open client connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// RequestCount returns how many requests of cmd the server has received
// (CmdAny: of all commands), including those a fault answered or dropped.
func (s *Server) RequestCount(cmd Command) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cmd == CmdAny {
		n := 0
		for _, v := range s.counts {
			n += v
		}
		return n
	}
	return s.counts[cmd]
}

// conn is one client connection and its session.
type conn struct {
	r      io.Reader
	w      io.Writer
	closer io.Closer // nil for in-memory tests

	done      chan struct{} // closed when the connection is dropped
	closeOnce sync.Once
	stopCh    chan struct{} // the server's stop channel at accept time

	wmu          sync.Mutex  // serialises writes
	busy         atomic.Bool // a request is being handled
	stopping     atomic.Bool // a graceful stop is pending
	disconnected sync.Once

	// Session, guarded by Server.mu (authed and userID are written only by
	// the connection's own goroutine).
	clientID uint32
	addr     string
	userID   uint32
	authed   bool
}

// stop ends the connection the way a server shutting down cleanly does: the
// Disconnected error response, then close. A request being handled is
// answered first (respond then says Disconnected).
func (c *conn) stop() {
	c.stopping.Store(true)
	if !c.busy.Load() {
		c.sayDisconnected()
	}
}

// sayDisconnected writes the Disconnected response (once) and closes.
func (c *conn) sayDisconnected() {
	c.disconnected.Do(func() {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		if d, ok := c.closer.(interface{ SetWriteDeadline(time.Time) error }); ok {
			_ = d.SetWriteDeadline(time.Now().Add(time.Second))
		}
		_ = writeResponse(c.w, CodeDisconnected, nil)
		c.close()
	})
}

// respond writes a response. When a graceful stop is pending it then says
// Disconnected and closes. It returns false when the connection is finished.
func (c *conn) respond(status uint32, body []byte) bool {
	c.wmu.Lock()
	err := writeResponse(c.w, status, body)
	c.wmu.Unlock()
	c.busy.Store(false)
	if err != nil {
		return false
	}
	if c.stopping.Load() {
		c.sayDisconnected()
		return false
	}
	return true
}

func newConn(r io.Reader, w io.Writer, c io.Closer) *conn {
	return &conn{r: r, w: w, closer: c, done: make(chan struct{})}
}

func (c *conn) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.done)
		if c.closer != nil {
			_ = c.closer.Close()
		}
	})
}

func (s *Server) serveConn(c *conn) {
	defer s.wg.Done()
	defer func() {
		c.close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	s.serveFrames(c)
}

// serveFrames reads requests from c until the stream ends, a write fails or
// a fault drops the connection.
func (s *Server) serveFrames(c *conn) {
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return
		}
		length := binary.LittleEndian.Uint32(hdr[0:4])
		code := Command(binary.LittleEndian.Uint32(hdr[4:8]))
		if length < 4 {
			c.busy.Store(true)
			if !c.respond(CodeInvalidCommand, nil) {
				return
			}
			continue
		}
		plen := int64(length) - 4
		if plen > int64(s.opts.MaxFrameSize) {
			return
		}
		if code != CmdSendMessages && plen > maxControlPayload {
			if _, err := io.CopyN(io.Discard, c.r, plen); err != nil {
				return
			}
			c.busy.Store(true)
			if !c.respond(CodeInvalidCommand, nil) {
				return
			}
			continue
		}
		payload, err := readPayload(c.r, int(plen))
		if err != nil {
			return
		}
		c.busy.Store(true)
		if c.stopping.Load() && c.isClosed() {
			return // a graceful stop said Disconnected while the request arrived
		}
		if !s.request(c, code, payload) {
			return
		}
	}
}

// request runs one request through the faults and its handler and answers
// it. It returns false when the connection must be closed.
func (s *Server) request(c *conn, code Command, payload []byte) bool {
	s.mu.Lock()
	s.counts[code]++
	h := s.matchFaultLocked(code)
	s.mu.Unlock()

	dropAfter := false
	if h != nil {
		switch h.f.Action {
		case FaultDrop:
			return false
		case FaultFail:
			return c.respond(h.f.Code, nil)
		case FaultDropAfterHandling:
			dropAfter = true
		case FaultStall:
			if !h.wait(c) {
				return false
			}
		}
	}

	var status uint32
	var body []byte
	if code == CmdSendMessages {
		// Parse, validate and copy without the lock; only the append holds it.
		// c.authed is written only by this goroutine.
		req, st := prepareSend(c.authed, payload)
		if st == CodeOK {
			s.mu.Lock()
			st = s.commitSend(req)
			s.mu.Unlock()
		}
		status = st
	} else {
		s.mu.Lock()
		status, body = s.handle(c, code, payload)
		s.mu.Unlock()
	}
	if dropAfter {
		return false
	}
	return c.respond(status, body)
}

// readPayload reads n bytes, growing the buffer as data arrives so that a
// bogus length does not allocate it all up front.
func readPayload(r io.Reader, n int) ([]byte, error) {
	const chunk = 1 << 20
	if n <= chunk {
		buf := make([]byte, n)
		_, err := io.ReadFull(r, buf)
		return buf, err
	}
	buf := make([]byte, 0, chunk)
	for len(buf) < n {
		step := min(n-len(buf), chunk)
		buf = append(buf, make([]byte, step)...)
		if _, err := io.ReadFull(r, buf[len(buf)-step:]); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

func writeResponse(w io.Writer, status uint32, body []byte) error {
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[0:4], status)
	binary.LittleEndian.PutUint32(hdr[4:8], uint32(len(body)))
	if len(body) < 4096 {
		_, err := w.Write(append(hdr[:], body...))
		return err
	}
	bufs := net.Buffers{hdr[:], body}
	_, err := bufs.WriteTo(w)
	return err
}

func (s *Server) userByName(name string) *user {
	for _, u := range s.users {
		if u.username == name {
			return u
		}
	}
	return nil
}

func (s *Server) userByID(id uint32) *user {
	for _, u := range s.users {
		if u.id == id {
			return u
		}
	}
	return nil
}
