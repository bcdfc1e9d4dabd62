package iggytest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
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
	// Version is the release whose wire protocol the server speaks:
	// Version08 (the default), Version09, or Version010 (a simulated 0.10
	// server that refuses every login).
	Version Version
	// LoginInvalidFormat makes a Version010 server refuse logins with a
	// reply of status 4 (InvalidFormat) and an empty body instead of an
	// eviction, as a server of another protocol version answers a login
	// body it cannot decode (server-0.9.0-edge.5 answered the protocol
	// 0.12.2 SDK's login so: iggy-next-protocol notes §11).
	LoginInvalidFormat bool
	// MaxFrameSize caps the size of one request; a larger request closes the
	// connection. Default 128 MiB with Version08, 64 MiB (a 0.9 server's
	// [message_bus] max_message_size) otherwise.
	MaxFrameSize int
	// GracefulStop makes Stop, Restart and Close behave like a server
	// shutting down cleanly: a request in progress is answered, then the
	// connection is closed; a 0.8 server first sends the unsolicited error
	// response 8 (Disconnected), a 0.9 server nothing. Without it connections
	// are cut at once (clients see EOF).
	GracefulStop bool
	// MaxMessagesPerPartition, when above 0, keeps only that many newest
	// messages per partition (older ones are dropped as if their segment had
	// expired). Offsets keep counting.
	MaxMessagesPerPartition int
	// MessagesRequiredToSave models the server's unsaved buffer: accepted
	// messages stay unsaved in their partition until this many are waiting
	// there (then all of them are saved), a FlushUnsavedBuffer saves them,
	// or the server stops cleanly. Crash loses every unsaved message. 0 (the
	// default) saves every message at once. The real default is 1024
	// (0.8: [system.partition] messages_required_to_save; 0.9: the topic
	// option of that name, which a 0.9 CreateTopic can set per topic).
	MessagesRequiredToSave int
	// Flush09 makes the 0.9 front end carry out FlushUnsavedBuffer (code
	// 102) like the 0.8 one. By default it answers status 5
	// (FeatureUnavailable), as server 0.9.0 does: it has no flush on demand.
	Flush09 bool
	// RebalancingTimeout is how long a partition a consumer group member
	// still has uncommitted messages of waits for its commit before it
	// moves to the member it was promised to anyway; default 30 s, the
	// servers' [consumer_group] rebalancing_timeout.
	RebalancingTimeout time.Duration
}

// Server is an in-process Iggy server speaking one wire dialect
// (Options.Version). All methods are safe for concurrent use.
type Server struct {
	opts Options

	mu         sync.Mutex // guards everything below
	data       *store
	users      []*user
	tokens     []*token
	conns      map[*conn]struct{}
	ln         net.Listener
	addr       string // resolved listen address, kept across Stop/Resume
	running    bool
	closed     bool
	stopCh     chan struct{} // closed by Stop; a new one per Resume
	faults     []*FaultHandle
	counts     map[Command]int
	keyedSends int // sends with messages_key partitioning that reached a topic
	// duplicateSends counts 0.9 sends answered as duplicates (nothing stored).
	duplicateSends int
	nextClientID   uint32
	vsr            vsrState // sessions of the 0.9 front end

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
		if opts.Version.vsr() {
			opts.MaxFrameSize = maxFrameSize09
		}
	}
	if opts.Version < Version08 || opts.Version > Version010 {
		return nil, fmt.Errorf("iggytest: unknown version %d", int(opts.Version))
	}
	if opts.RebalancingTimeout <= 0 {
		opts.RebalancingTimeout = defaultRebalancingTimeout
	}
	if opts.MessagesRequiredToSave < 0 {
		return nil, errors.New("iggytest: MessagesRequiredToSave must not be negative")
	}
	s := &Server{
		opts:         opts,
		data:         newStore(),
		conns:        map[*conn]struct{}{},
		counts:       map[Command]int{},
		nextClientID: 1,
		vsr:          newVSRState(),
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
		c := s.newConn(nc, nc, nc)
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
// waits for the server's goroutines. Like a server stopped cleanly, it
// saves every unsaved message. Data, users and tokens are kept; Resume
// listens again.
func (s *Server) Stop() error {
	err := s.halt(s.opts.GracefulStop)
	s.mu.Lock()
	s.data.saveAll()
	s.mu.Unlock()
	return err
}

// Crash stops the server as a SIGKILL would: connections cut, stalled
// requests abandoned, and every message that was still unsaved (see
// Options.MessagesRequiredToSave) lost. Resume brings the server back with
// the saved messages only; new messages get offsets after the last saved
// one, as a restarted server recovers them from its segments. Streams,
// topics, consumer offsets, users and tokens are kept.
func (s *Server) Crash() error {
	err := s.halt(false)
	s.mu.Lock()
	s.data.dropUnsaved()
	s.mu.Unlock()
	return err
}

// halt closes the listener and the connections, gracefully or not, and
// waits for the server's goroutines.
func (s *Server) halt(graceful bool) error {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return nil
	}
	s.running = false
	close(s.stopCh)
	err := s.ln.Close()
	for c := range s.conns {
		if graceful {
			c.stop()
		} else {
			c.close()
		}
	}
	s.mu.Unlock()
	if graceful {
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

// KeyedSendCount returns how many sends with messages_key partitioning
// reached an existing topic (the server chose their partition by key).
func (s *Server) KeyedSendCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keyedSends
}

// DuplicateSendCount returns how many 0.9 sends repeated a request number
// their client had already had a send stored under, and were answered
// with an empty body and not stored, as a released Iggy 0.9.0 does.
func (s *Server) DuplicateSendCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.duplicateSends
}

// newConn makes the server's end of a connection.
func (s *Server) newConn(r io.Reader, w io.Writer, cl io.Closer) *conn {
	c := newConn(r, w, cl)
	if !s.opts.Version.vsr() {
		c.goodbye = header08(CodeDisconnected, 0)
	}
	return c
}

func (s *Server) serveConn(c *conn) {
	defer s.wg.Done()
	defer func() {
		c.close()
		s.mu.Lock()
		delete(s.conns, c)
		s.vsr.disconnect(c)
		s.dropMemberships(c)
		s.mu.Unlock()
	}()
	s.serveFrames(c)
}

// serveFrames reads requests from c in the server's dialect until the
// stream ends, a write fails or a fault drops the connection.
func (s *Server) serveFrames(c *conn) {
	if s.opts.Version.vsr() {
		s.serveFrames09(c)
		return
	}
	s.serveFrames08(c)
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
