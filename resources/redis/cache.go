// Package redis provides the `redis` cache, built on
// github.com/redis/go-redis/v9: a key/value store on a Redis server that
// several fluss-iggy instances can share, for example for their checkpoints.
package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// Config field names.
const (
	rcFieldURL          = "url"
	rcFieldPrefix       = "prefix"
	rcFieldDefaultTTL   = "default_ttl"
	rcFieldTLS          = "tls"
	rcFieldDialTimeout  = "dial_timeout"
	rcFieldReadTimeout  = "read_timeout"
	rcFieldWriteTimeout = "write_timeout"
	rcFieldMaxRetries   = "max_retries"
)

// CacheSpec returns the config spec of the `redis` cache.
func CacheSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Version("0.1.0").
		Summary("Stores key/value pairs on a Redis server, so that several instances can share them, for example their checkpoints.").
		Description(`
Each key is stored as a Redis string under `+"`prefix`"+` followed by the key. `+"`set`"+` is a SET, `+"`add`"+` a SET NX (so exactly one of several concurrent adds of a key succeeds, across all instances), `+"`delete`"+` a DEL, and TTLs become millisecond expiries (PX) enforced by the server.

Connections are opened on first use and re-opened after failures: while the server is unreachable every operation fails with an error naming the server and the key, and operations succeed again once it is back, without restarting the pipeline.

=== Durability

Redis acknowledges a write once it is in memory. Whether an acknowledged checkpoint survives a restart of the server depends on the server's persistence settings: use `+"`appendonly yes`"+` (with `+"`appendfsync always`"+` to survive a power loss, or `+"`everysec`"+` to lose at most about a second). A server without persistence forgets every checkpoint when it restarts, and the input then starts from its configured position.`).
		Fields(
			service.NewURLField(rcFieldURL).
				Description("URL of the Redis server: `redis://[user:password@]host:port[/db]`, `rediss://...` for TLS, or `unix:///path/to/redis.sock`. A password in the URL is hidden by `echo`; prefer an environment variable for it.").
				Example("redis://localhost:6379/0").
				Example("rediss://default:${REDIS_PASSWORD}@redis.internal:6380/1"),
			service.NewStringField(rcFieldPrefix).
				Description("Prefix added to every key, to keep this cache's keys apart from others on the same server or database.").
				Default("").
				Example("fluss-iggy:checkpoints:"),
			service.NewDurationField(rcFieldDefaultTTL).
				Description("Time to live applied to writes that do not specify their own TTL. When unset, such keys never expire. A TTL of zero or less means no expiry.").
				Example("24h").
				Optional(),
			service.NewTLSToggledField(rcFieldTLS).
				Description("Custom TLS settings. A `rediss://` URL enables TLS with default settings on its own; set `enabled: true` here to use custom certificates or options (they take precedence over the URL's defaults)."),
			service.NewDurationField(rcFieldDialTimeout).
				Description("Timeout for establishing a connection to the server.").
				Default("5s").
				Advanced(),
			service.NewDurationField(rcFieldReadTimeout).
				Description("Timeout for reading a reply. The deadline of the calling context also applies.").
				Default("3s").
				Advanced(),
			service.NewDurationField(rcFieldWriteTimeout).
				Description("Timeout for sending a command. The deadline of the calling context also applies.").
				Default("3s").
				Advanced(),
			service.NewIntField(rcFieldMaxRetries).
				Description("How many times a failed command is retried (with a short back-off) before its error is returned. `0` returns the first error.").
				Default(3).
				Advanced(),
		).
		Example("Checkpoints shared by several instances",
			"Keys are kept apart from other users of the server by a prefix.",
			`
cache_resources:
  - label: checkpoints
    redis:
      url: redis://redis.internal:6379/0
      prefix: "fluss-iggy:checkpoints:"
`).
		Example("TLS with a private CA",
			"The server's certificate is checked against a private certificate authority; the password comes from the environment.",
			`
cache_resources:
  - label: checkpoints
    redis:
      url: rediss://default:${REDIS_PASSWORD}@redis.internal:6380/0
      prefix: "fluss-iggy:"
      tls:
        enabled: true
        root_cas_file: /etc/ssl/private-ca.pem
`)
}

func init() {
	service.MustRegisterCache("redis", CacheSpec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.Cache, error) {
		opts, err := optionsFromParsed(conf)
		if err != nil {
			return nil, err
		}
		routeLibraryLogs(mgr.Logger())
		return New(opts)
	})
}

var routeLogsOnce sync.Once

// routeLibraryLogs sends go-redis's own log lines (dial failures, which every
// failing call also returns as an error) to the Benthos logger at debug level
// instead of stderr. go-redis has one process-wide logger; the first cache's
// logger gets it.
func routeLibraryLogs(l *service.Logger) {
	if l == nil {
		return
	}
	routeLogsOnce.Do(func() { redis.SetLogger(libraryLogger{l}) })
}

type libraryLogger struct{ l *service.Logger }

func (b libraryLogger) Printf(_ context.Context, format string, v ...any) {
	b.l.Debugf("go-redis: "+format, v...)
}

// Options configures a Cache made by New.
type Options struct {
	// URL of the server (redis://, rediss:// or unix://). Required.
	URL string
	// Prefix is prepended to every key.
	Prefix string
	// DefaultTTL applies to writes without a TTL; zero means no expiry.
	DefaultTTL time.Duration
	// TLS, when non-nil, replaces the TLS settings implied by the URL.
	TLS *tls.Config
	// DialTimeout, ReadTimeout and WriteTimeout default to 5s, 3s and 3s.
	DialTimeout, ReadTimeout, WriteTimeout time.Duration
	// MaxRetries is how often a failed command is retried; negative means 0.
	MaxRetries int
}

func optionsFromParsed(conf *service.ParsedConfig) (Options, error) {
	var o Options
	var err error
	if o.URL, err = conf.FieldString(rcFieldURL); err != nil {
		return o, err
	}
	if o.Prefix, err = conf.FieldString(rcFieldPrefix); err != nil {
		return o, err
	}
	if conf.Contains(rcFieldDefaultTTL) {
		if o.DefaultTTL, err = conf.FieldDuration(rcFieldDefaultTTL); err != nil {
			return o, err
		}
	}
	tlsConf, tlsOn, err := conf.FieldTLSToggled(rcFieldTLS)
	if err != nil {
		return o, err
	}
	if tlsOn {
		o.TLS = tlsConf
	}
	if o.DialTimeout, err = conf.FieldDuration(rcFieldDialTimeout); err != nil {
		return o, err
	}
	if o.ReadTimeout, err = conf.FieldDuration(rcFieldReadTimeout); err != nil {
		return o, err
	}
	if o.WriteTimeout, err = conf.FieldDuration(rcFieldWriteTimeout); err != nil {
		return o, err
	}
	if o.MaxRetries, err = conf.FieldInt(rcFieldMaxRetries); err != nil {
		return o, err
	}
	return o, nil
}

// Cache is a service.Cache on a Redis server. It is safe for concurrent use.
type Cache struct {
	client     *redis.Client
	addr       string
	prefix     string
	defaultTTL time.Duration

	closeOnce sync.Once
	closeErr  error
}

// New returns a cache for the server at opts.URL. It does not connect: the
// first operation does, so a server that is down at start-up only fails
// operations until it is up.
func New(opts Options) (*Cache, error) {
	if opts.URL == "" {
		return nil, errors.New("redis cache: url must not be empty")
	}
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		// The parse error may quote the URL, password included: don't wrap it.
		return nil, fmt.Errorf("redis cache: invalid url (want redis://host:port/db, rediss://... or unix:///path): %s", redactedURLError(err))
	}
	if opts.TLS != nil {
		tc := opts.TLS.Clone()
		if tc.ServerName == "" && ro.Network == "tcp" {
			if host, _, err := net.SplitHostPort(ro.Addr); err == nil {
				tc.ServerName = host
			}
		}
		ro.TLSConfig = tc
	}
	for name, d := range map[string]*time.Duration{"dial_timeout": &opts.DialTimeout, "read_timeout": &opts.ReadTimeout, "write_timeout": &opts.WriteTimeout} {
		if *d < 0 {
			return nil, fmt.Errorf("redis cache %s: %s must not be negative, got %s", ro.Addr, name, *d)
		}
	}
	if opts.DialTimeout > 0 {
		ro.DialTimeout = opts.DialTimeout
	}
	if opts.ReadTimeout > 0 {
		ro.ReadTimeout = opts.ReadTimeout
	}
	if opts.WriteTimeout > 0 {
		ro.WriteTimeout = opts.WriteTimeout
	}
	ro.MaxRetries = opts.MaxRetries
	if ro.MaxRetries <= 0 {
		ro.MaxRetries = -1 // go-redis: -1 disables retries, 0 means its default of 3
	}
	ro.ContextTimeoutEnabled = true
	// Maintenance notifications are a Redis Cloud feature; plain servers
	// reject the handshake, so don't send it on every new connection.
	ro.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}

	return &Cache{
		client:     redis.NewClient(ro),
		addr:       ro.Addr,
		prefix:     opts.Prefix,
		defaultTTL: opts.DefaultTTL,
	}, nil
}

// redactedURLError returns err's text without the URL it may quote, which can
// hold a password.
func redactedURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func (c *Cache) wrap(op, key string, err error) error {
	return fmt.Errorf("redis cache %s: %s key %q: %w", c.addr, op, c.prefix+key, err)
}

func (c *Cache) ttl(ttl *time.Duration) time.Duration {
	d := c.defaultTTL
	if ttl != nil {
		d = *ttl
	}
	if d < 0 {
		// go-redis gives negative expirations a meaning (KEEPTTL).
		return 0
	}
	return d
}

// Get returns the value under key, or service.ErrKeyNotFound.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := c.client.Get(ctx, c.prefix+key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, service.ErrKeyNotFound
	}
	if err != nil {
		return nil, c.wrap("get", key, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// Set stores value under key with the given TTL (nil: the default TTL),
// replacing any previous value and expiry.
func (c *Cache) Set(ctx context.Context, key string, value []byte, ttl *time.Duration) error {
	if err := c.client.Set(ctx, c.prefix+key, value, c.ttl(ttl)).Err(); err != nil {
		return c.wrap("set", key, err)
	}
	return nil
}

// SetMulti stores several items in one MULTI/EXEC round trip.
func (c *Cache) SetMulti(ctx context.Context, items ...service.CacheItem) error {
	if len(items) == 0 {
		return nil
	}
	_, err := c.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, it := range items {
			p.Set(ctx, c.prefix+it.Key, it.Value, c.ttl(it.TTL))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis cache %s: set %d keys: %w", c.addr, len(items), err)
	}
	return nil
}

// Add stores value under key only if the key does not exist (SET NX);
// otherwise it returns service.ErrKeyAlreadyExists.
func (c *Cache) Add(ctx context.Context, key string, value []byte, ttl *time.Duration) error {
	ok, err := c.client.SetNX(ctx, c.prefix+key, value, c.ttl(ttl)).Result()
	if err != nil {
		return c.wrap("add", key, err)
	}
	if !ok {
		return service.ErrKeyAlreadyExists
	}
	return nil
}

// Delete removes key. Deleting an absent key is not an error.
func (c *Cache) Delete(ctx context.Context, key string) error {
	if err := c.client.Del(ctx, c.prefix+key).Err(); err != nil {
		return c.wrap("delete", key, err)
	}
	return nil
}

// Close closes the connections. Later calls return the first call's result;
// other methods fail after Close.
func (c *Cache) Close(context.Context) error {
	c.closeOnce.Do(func() {
		if err := c.client.Close(); err != nil {
			c.closeErr = fmt.Errorf("redis cache %s: closing: %w", c.addr, err)
		}
	})
	return c.closeErr
}
