// Package fluss is an Arrow-native Go client for Apache Fluss (servers 0.8.0
// and 0.9.1): connections, cluster and table metadata, admin operations and
// offsets. It never imports Benthos.
//
// Layers, bottom up (each its own package):
//
//	fluss/internal/wire frames, request ids, timeouts, ApiVersions, SASL/PLAIN
//	fluss/internal/pb   protobuf messages (generated from our own .proto)
//	fluss/errcode       the Fluss error-code table and the retry decision
//	fluss/types         data types, schema and descriptor JSON, Arrow schemas
//	fluss/records       log batches and their Arrow bodies
//	fluss               this package: Client, metadata cache, admin, offsets
//
// # Using the client
//
//	c, err := fluss.NewClient(ctx, fluss.Bootstrap("127.0.0.1:9123"))
//	defer c.Close()
//	info, err := c.Table(ctx, fluss.NewTablePath("db", "t"))
//	latest, err := c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.LatestOffset())
//
// # Reading and writing
//
//   - c.Table / c.RefreshTable: TableInfo (table id, schema id, schema,
//     descriptor, bucket count, partition keys); c.Schema / c.ArrowSchema:
//     the schema of any schema id a batch carries.
//   - c.Partitions / c.PartitionByName / c.NewPartitionWatcher: the
//     partitions of a table; poll to discover partitions created later
//     (Fluss has no push notification for them). c.NumBuckets: the bucket
//     count of one partition (on Fluss 1.0 a partition keeps the count the
//     table had when it was created).
//   - c.ListOffsets with an OffsetSpec (EarliestOffset, LatestOffset,
//     OffsetAtTimestamp, ExactOffset): offsets per bucket. The same
//     OffsetSpec says where Scanner.Subscribe starts reading.
//   - c.NewScanner reads the log of a table; c.NewWriter appends rows and
//     writes key-value changes.
//   - IsRetriable (errcode.IsRetriable) and errcode.InvalidatesMetadata
//     decide what to do with any error from this package.
package fluss

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// Inside the package (not part of its documentation):
//
// The client keeps exactly one connection per server (keyed by address) and
// redials a dead one with backoff, so code never holds a *wire.Conn across
// failures: it asks c.tabletConn / c.coordinatorConn again each time. Bucket
// leaders are cached (c.leader looks one up, refreshing once when unknown;
// c.invalidateLeader / c.invalidateServer drop them after
// NOT_LEADER_OR_FOLLOWER and similar errors), and c.forEachLeader fans a
// request for many buckets out to their leaders. Files by job: client.go
// (options, connections, retries), model.go, metadata_cache.go, cluster.go,
// tables.go, leaders.go, partitions.go, offsets.go, admin.go, scanner*.go,
// writer*.go.

// ErrClientClosed is returned by calls on a closed Client.
var ErrClientClosed = errors.New("fluss: client closed")

// ErrNoBootstrap is returned by NewClient without bootstrap addresses.
var ErrNoBootstrap = errors.New("fluss: no bootstrap servers")

type config struct {
	bootstrap      []string
	sasl           *wire.SASLPlain
	dialTimeout    time.Duration
	handshake      time.Duration
	requestTimeout time.Duration
	maxFrameSize   int
	logger         *slog.Logger
	clientName     string
	clientVersion  string
	backoff        Backoff
	maxAttempts    int
	dial           func(ctx context.Context, network, addr string) (net.Conn, error)
	remote         RemoteStorageOptions
}

// Option configures a Client.
type Option func(*config)

// Bootstrap sets the servers (host:port, coordinator or tablet servers) the
// client asks for cluster metadata first. Required.
func Bootstrap(addrs ...string) Option {
	return func(c *config) { c.bootstrap = append(c.bootstrap, addrs...) }
}

// SASLPlain authenticates every connection with SASL/PLAIN.
func SASLPlain(username, password string) Option {
	return func(c *config) { c.sasl = &wire.SASLPlain{Username: username, Password: password} }
}

// Remote sets how the client's own RemoteStorage, which scanners use unless
// given ScanRemoteStorage, reads tiered log segments (S3 endpoint and
// credentials, read-ahead). Without it, S3 credentials come from the
// cluster's file-system security tokens, as the Java client's do.
func Remote(opts RemoteStorageOptions) Option { return func(c *config) { c.remote = opts } }

// DialTimeout bounds one TCP dial plus handshake (default 10s).
func DialTimeout(d time.Duration) Option { return func(c *config) { c.dialTimeout = d } }

// HandshakeTimeout bounds the wait for the answer to a connection's first
// request, ApiVersions (default 5s, and at most the dial timeout). A
// bootstrap address that does not answer it in time, or closes the
// connection instead, is not a Fluss server: NewClient gives it up with
// ErrNotFluss instead of retrying it.
func HandshakeTimeout(d time.Duration) Option { return func(c *config) { c.handshake = d } }

// RequestTimeout bounds the wait for one response (default 30s). Fluss
// servers never answer requests they cannot parse, so this also bounds such
// mistakes.
func RequestTimeout(d time.Duration) Option { return func(c *config) { c.requestTimeout = d } }

// MaxFrameSize bounds the size of one response frame (default 256 MiB).
func MaxFrameSize(n int) Option { return func(c *config) { c.maxFrameSize = n } }

// logger sets the logger (default: discard).
func Logger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// ClientSoftware sets the name and version sent in ApiVersions.
func ClientSoftware(name, version string) Option {
	return func(c *config) { c.clientName, c.clientVersion = name, version }
}

// RetryBackoff sets the delays between retries and redials (default: 100ms
// doubling to 5s, 20% jitter).
func RetryBackoff(b Backoff) Option { return func(c *config) { c.backoff = b } }

// MaxAttempts sets how many times an operation is tried when it fails with a
// retriable error (default 8; the context bounds it too).
func MaxAttempts(n int) Option { return func(c *config) { c.maxAttempts = n } }

// Dialer replaces the TCP dialer (tests).
func Dialer(f func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(c *config) { c.dial = f }
}

// Client is a connection to a Fluss cluster. It is safe for concurrent use.
type Client struct {
	cfg  config
	log  *slog.Logger
	wcfg wire.Config

	mu     sync.Mutex
	conns  map[connKey]*connSlot
	closed bool

	meta metadataCache

	remoteOnce sync.Once
	remote     *RemoteStorage // created on first use, closed by Close
	remoteErr  error
}

// NewClient creates a client and loads the cluster's servers from the
// bootstrap list. It fails when no bootstrap server answers within ctx and
// the dial timeout (each bootstrap address is tried up to three rounds).
func NewClient(ctx context.Context, opts ...Option) (*Client, error) {
	cfg := config{
		dialTimeout:    wire.DefaultDialTimeout,
		requestTimeout: wire.DefaultRequestTimeout,
		maxAttempts:    8,
	}
	for _, o := range opts {
		o(&cfg)
	}
	if len(cfg.bootstrap) == 0 {
		return nil, ErrNoBootstrap
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.maxAttempts < 1 {
		cfg.maxAttempts = 1
	}
	c := &Client{
		cfg:   cfg,
		log:   cfg.logger,
		conns: make(map[connKey]*connSlot),
		wcfg: wire.Config{
			ClientName:       cfg.clientName,
			ClientVersion:    cfg.clientVersion,
			DialTimeout:      cfg.dialTimeout,
			HandshakeTimeout: cfg.handshake,
			RequestTimeout:   cfg.requestTimeout,
			MaxFrameSize:     cfg.maxFrameSize,
			SASL:             cfg.sasl,
			Dial:             cfg.dial,
			Logger:           cfg.logger,
			// Authentication retries keep the default policy, whatever
			// RetryBackoff says.
			RetryDelay: Backoff{}.Delay,
		},
	}
	c.meta.init()
	if err := c.bootstrapCluster(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes every connection. Calls in flight fail.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	slots := c.conns
	c.conns = map[connKey]*connSlot{}
	c.mu.Unlock()
	for _, s := range slots {
		s.close()
	}
	c.remoteOnce.Do(func() {}) // no storage after Close
	if c.remote != nil {
		return c.remote.Close()
	}
	return nil
}

// remoteStorage returns the client's RemoteStorage, created on first use
// with the Remote option's settings.
func (c *Client) remoteStorage() (*RemoteStorage, error) {
	c.remoteOnce.Do(func() {
		c.remote, c.remoteErr = c.RemoteStorage(c.cfg.remote)
	})
	if c.remote == nil && c.remoteErr == nil {
		return nil, ErrClientClosed
	}
	return c.remote, c.remoteErr
}

// backoff returns the client's retry backoff (for the scanner and writer).
func (c *Client) backoff() Backoff { return c.cfg.backoff }

// requestTimeout returns the configured per-request timeout.
func (c *Client) requestTimeout() time.Duration { return c.cfg.requestTimeout }

// logger returns the client's logger.
func (c *Client) logger() *slog.Logger { return c.log }

// ---------------------------------------------------------------------------
// Connections: one per server address and lane, redialled with backoff.

// connKey names a connection: lane 0 is the one every request uses; a
// writer spreads its buckets over more lanes (see WriteConnections).
type connKey struct {
	addr string
	lane int
}

type connSlot struct {
	addr string

	mu       sync.Mutex
	conn     *wire.Conn
	dialing  chan struct{} // closed when the dial in progress ends
	failures int
	lastErr  error
	nextDial time.Time
	closed   bool
}

func (s *connSlot) close() {
	s.mu.Lock()
	s.closed = true
	conn := s.conn
	s.conn = nil
	s.mu.Unlock()
	if conn != nil {
		_ = conn.Close()
	}
}

// conn returns the live connection to addr (lane 0), dialing it when
// needed.
func (c *Client) conn(ctx context.Context, addr string) (*wire.Conn, error) {
	return c.laneConn(ctx, connKey{addr: addr})
}

// laneConn returns the live connection k names, dialing it when needed. A
// slot whose last dial failed waits out the backoff before dialing again
// (bounded by ctx); concurrent callers share one dial.
func (c *Client) laneConn(ctx context.Context, k connKey) (*wire.Conn, error) {
	addr := k.addr
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClientClosed
	}
	s, ok := c.conns[k]
	if !ok {
		s = &connSlot{addr: addr}
		c.conns[k] = s
	}
	c.mu.Unlock()

	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClientClosed
		}
		if s.conn != nil && s.conn.Err() == nil {
			conn := s.conn
			s.mu.Unlock()
			return conn, nil
		}
		if s.dialing != nil {
			wait := s.dialing
			s.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if d := time.Until(s.nextDial); d > 0 {
			lastErr := s.lastErr
			s.mu.Unlock()
			if err := wire.Sleep(ctx, d); err != nil {
				return nil, fmt.Errorf("%w (waiting to redial %s after: %v)", err, addr, lastErr)
			}
			continue
		}
		done := make(chan struct{})
		s.dialing = done
		s.mu.Unlock()

		conn, err := wire.Dial(ctx, addr, c.wcfg)

		s.mu.Lock()
		s.dialing = nil
		close(done)
		if err != nil {
			if ctx.Err() == nil {
				// The server failed, not the caller: space the next dial.
				s.failures++
				s.lastErr = err
				s.nextDial = time.Now().Add(c.cfg.backoff.Delay(s.failures - 1))
			}
			failures := s.failures
			s.mu.Unlock()
			c.log.Debug("fluss dial failed", "server", addr, "error", err, "failures", failures)
			return nil, err
		}
		if s.closed {
			s.mu.Unlock()
			_ = conn.Close()
			return nil, ErrClientClosed
		}
		s.failures, s.lastErr, s.nextDial = 0, nil, time.Time{}
		s.conn = conn
		s.mu.Unlock()
		return conn, nil
	}
}

// tabletConn returns the connection to tablet server id, refreshing cluster
// metadata once if the id is unknown.
func (c *Client) tabletConn(ctx context.Context, id int32) (*wire.Conn, error) {
	return c.tabletLaneConn(ctx, id, 0)
}

// tabletLaneConn returns connection lane of tablet server id, refreshing
// cluster metadata once if the id is unknown.
func (c *Client) tabletLaneConn(ctx context.Context, id int32, lane int) (*wire.Conn, error) {
	node, ok := c.meta.tablet(id)
	if !ok {
		if err := c.refreshCluster(ctx); err != nil {
			return nil, err
		}
		if node, ok = c.meta.tablet(id); !ok {
			return nil, fmt.Errorf("fluss: tablet server %d is not alive: %w", id, errcode.New(errcode.ServerNotExist.Code, ""))
		}
	}
	return c.laneConn(ctx, connKey{addr: node.Addr(), lane: lane})
}

// coordinatorConn returns the connection to the coordinator.
func (c *Client) coordinatorConn(ctx context.Context) (*wire.Conn, error) {
	node, ok := c.meta.coordinatorNode()
	if !ok {
		if err := c.refreshCluster(ctx); err != nil {
			return nil, err
		}
		if node, ok = c.meta.coordinatorNode(); !ok {
			return nil, errors.New("fluss: the cluster reports no coordinator")
		}
	}
	return c.conn(ctx, node.Addr())
}

// LeaderConn returns the connection to the leader of bucket b and the
// leader's id.
func (c *Client) LeaderConn(ctx context.Context, b TableBucket) (*wire.Conn, int32, error) {
	id, err := c.leader(ctx, b)
	if err != nil {
		return nil, -1, err
	}
	conn, err := c.tabletConn(ctx, id)
	return conn, id, err
}

// anyConn returns a connection for read-only requests every server serves: a
// random alive tablet server, else the coordinator, else a bootstrap server.
func (c *Client) anyConn(ctx context.Context) (*wire.Conn, error) {
	failed := &serversError{what: "no server reachable"}
	for _, addr := range c.meta.readAddrs(c.cfg.bootstrap) {
		conn, err := c.conn(ctx, addr)
		if err == nil {
			return conn, nil
		}
		if ctx.Err() != nil || errors.Is(err, ErrClientClosed) {
			return nil, err
		}
		failed.add(addr, err)
		if !errcode.IsRetriable(err) {
			break
		}
	}
	return nil, failed
}

// ---------------------------------------------------------------------------
// Retries

// retry runs fn until it succeeds, fails with an error that is not retriable,
// ctx ends, or MaxAttempts is reached. Errors that invalidate metadata run
// onStale (may be nil) before the next attempt.
func (c *Client) retry(ctx context.Context, retriable func(error) bool, onStale func(error), fn func() error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = fn()
		if err == nil || !retriable(err) || attempt+1 >= c.cfg.maxAttempts || errors.Is(err, ErrClientClosed) {
			return err
		}
		if onStale != nil && errcode.InvalidatesMetadata(err) {
			onStale(err)
		}
		c.log.Debug("fluss retrying", "attempt", attempt+1, "error", err)
		delay := c.cfg.backoff.Delay(attempt)
		var ce *wire.ConnError
		if errors.As(err, &ce) && (ce.Op == "dial" || ce.Op == "handshake") {
			// The connection slot already spaces redials of that server.
			delay = 0
		}
		if serr := wire.Sleep(ctx, delay); serr != nil {
			return fmt.Errorf("%w (last error: %w)", serr, err)
		}
	}
}

// retriableRead is the retry rule for idempotent requests.
func retriableRead(err error) bool { return errcode.IsRetriable(err) }

// retriableOrStale also retries errors that only need fresh metadata (such as
// FENCED_LEADER_EPOCH), for requests routed to bucket leaders.
func retriableOrStale(err error) bool {
	return errcode.IsRetriable(err) || errcode.InvalidatesMetadata(err)
}

// retriableWrite is the retry rule for requests that change state: only
// retry when the server cannot have applied the request (it was never sent,
// or the server refused it with a retriable code).
func retriableWrite(err error) bool {
	if !errcode.IsRetriable(err) {
		return false
	}
	var te *wire.TimeoutError
	if errors.As(err, &te) {
		return false
	}
	var ce *wire.ConnError
	if errors.As(err, &ce) {
		return ce.Op == "dial" || ce.Op == "handshake"
	}
	return true
}

// refusedStale reports whether a server refused a request, unapplied, for
// metadata that changed (NOT_COORDINATOR_LEADER from a standby coordinator):
// retrying after a refresh is safe for writes too.
func refusedStale(err error) bool {
	_, coded := errcode.Code(err)
	return coded && errcode.InvalidatesMetadata(err)
}

// callCoordinator sends one request to the coordinator, with retries; a
// standby coordinator's refusal drops the cached coordinator and retries.
func (c *Client) callCoordinator(ctx context.Context, write bool, api wire.APIKey, req, resp proto.Message) error {
	rule := func(err error) bool { return retriableRead(err) || refusedStale(err) }
	if write {
		rule = func(err error) bool { return retriableWrite(err) || refusedStale(err) }
	}
	return c.retry(ctx, rule, func(error) { c.meta.dropCoordinator() }, func() error {
		conn, err := c.coordinatorConn(ctx)
		if err != nil {
			return err
		}
		return conn.Call(ctx, api, req, resp)
	})
}

// callAny sends one read-only request to any server, with retries.
func (c *Client) callAny(ctx context.Context, api wire.APIKey, req, resp proto.Message) error {
	return c.retry(ctx, retriableRead, nil, func() error {
		conn, err := c.anyConn(ctx)
		if err != nil {
			return err
		}
		return conn.Call(ctx, api, req, resp)
	})
}

func shuffle[T any](s []T) {
	rand.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
}
