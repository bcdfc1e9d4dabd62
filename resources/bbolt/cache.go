// Package bbolt provides the `bbolt` cache: a crash-safe key/value store in a
// single local file, built on go.etcd.io/bbolt, meant for the input's
// checkpoints when one instance runs at a time.
//
// Every Set, Add and Delete is one bbolt read-write transaction. bbolt commits
// by writing new pages and then a new meta page, so a crash (even SIGKILL in
// the middle of a write) leaves either the old or the new value, never a torn
// one. With `sync: true` (the default) the transaction is fdatasync'ed before
// the call returns, so an acknowledged write also survives a power loss.
package bbolt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	bolt "go.etcd.io/bbolt"
)

// Config field names.
const (
	bcFieldPath               = "path"
	bcFieldBucket             = "bucket"
	bcFieldSync               = "sync"
	bcFieldDefaultTTL         = "default_ttl"
	bcFieldOpenTimeout        = "open_timeout"
	bcFieldCompactionInterval = "compaction_interval"
)

// CacheSpec returns the config spec of the `bbolt` cache.
func CacheSpec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Version("0.1.0").
		Summary("Stores key/value pairs in a local bbolt file that survives crashes and restarts; the recommended store for checkpoints of a single instance.").
		Description(`
Keys and values are kept in one bucket of a https://github.com/etcd-io/bbolt[bbolt^] database file. Every `+"`set`"+`, `+"`add`"+` and `+"`delete`"+` is a single transaction: after a crash the file holds either the previous or the new value of a key, never a torn mixture, and never an empty value that was not written.

With `+"`sync: true`"+` (the default) a write is flushed to disk (fdatasync) before it is acknowledged, so an acknowledged checkpoint also survives a power loss or kernel crash. With `+"`sync: false`"+` writes are much faster and still survive a crash of this process (they sit in the operating system's page cache), but the last writes can be lost, and in rare cases the file can be damaged, if the machine itself goes down.

Only one process can open a file at a time: bbolt takes an exclusive lock on it. A second process gives up after `+"`open_timeout`"+` with an error naming the file. To share checkpoints between several instances use the `+"`redis`"+` cache instead. Within one process, several cache resources may use the same file with different buckets (and the same `+"`sync`"+` setting).

=== Expiry

Entries written without a TTL never expire unless `+"`default_ttl`"+` is set. An entry's expiry is stored with its value; expired entries are invisible to `+"`get`"+` and `+"`add`"+` at once and are removed from the file every `+"`compaction_interval`"+`.

=== Comparison with the `+"`file`"+` cache

The `+"`file`"+` cache truncates and rewrites a file in place without syncing it, so a crash in the middle of a write can leave an empty or partial value. This cache exists so that checkpoints are never torn.`).
		Fields(
			service.NewStringField(bcFieldPath).
				Description("Path of the database file. Parent directories are created if they do not exist. The file is created on first use.").
				Example("./data/checkpoints.db").
				Example("/var/lib/fluss-iggy/checkpoints.db"),
			service.NewStringField(bcFieldBucket).
				Description("Name of the bbolt bucket that holds this cache's keys. Cache resources of one process may share a file by using different buckets.").
				Default("benthos_cache"),
			service.NewBoolField(bcFieldSync).
				Description("Flush every write to disk (fdatasync) before acknowledging it. Turning this off trades durability across machine crashes for write speed; process crashes are survived either way.").
				Default(true),
			service.NewDurationField(bcFieldDefaultTTL).
				Description("Time to live applied to writes that do not specify their own TTL. When unset, such entries never expire. A TTL of zero or less means no expiry.").
				Example("24h").
				Optional(),
			service.NewDurationField(bcFieldOpenTimeout).
				Description("How long to wait for the exclusive lock on the file when another process holds it, before failing with an error naming the file.").
				Default("5s").
				Advanced(),
			service.NewDurationField(bcFieldCompactionInterval).
				Description("How often expired entries are deleted from the file. Set to `0s` to disable; expired entries are then still invisible but stay in the file until overwritten or deleted.").
				Default("1m").
				Advanced(),
		).
		Example("Checkpoints of the Fluss input",
			"A durable checkpoint store for one instance.",
			`
cache_resources:
  - label: checkpoints
    bbolt:
      path: ./data/checkpoints.db
`).
		Example("Faster, expiring entries",
			"Entries expire after a day and writes are not flushed to disk: a crash of the process loses nothing, a crash of the machine may lose the last writes.",
			`
cache_resources:
  - label: dedupe
    bbolt:
      path: /var/lib/fluss-iggy/dedupe.db
      bucket: dedupe
      sync: false
      default_ttl: 24h
`)
}

func init() {
	service.MustRegisterCache("bbolt", CacheSpec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.Cache, error) {
		opts, err := optionsFromParsed(conf)
		if err != nil {
			return nil, err
		}
		opts.Logger = mgr.Logger()
		c, err := Open(opts)
		if err != nil {
			// Components often log cache failures at debug level only;
			// a file that cannot be opened deserves an error line.
			mgr.Logger().Error(err.Error())
			return nil, err
		}
		return c, nil
	})
}

// Options configures a Cache opened with Open.
type Options struct {
	// Path of the database file; parent directories are created. Required.
	Path string
	// Bucket that holds the keys. Default "benthos_cache".
	Bucket string
	// NoSync skips the fdatasync after each write (config `sync: false`).
	NoSync bool
	// DefaultTTL applies to writes without a TTL; zero means no expiry.
	DefaultTTL time.Duration
	// OpenTimeout bounds the wait for the file lock. Default 5s.
	OpenTimeout time.Duration
	// CompactionInterval is how often expired entries are deleted; zero
	// disables the background deletion.
	CompactionInterval time.Duration
	// Logger receives debug and error messages; nil disables logging.
	Logger *service.Logger
}

func optionsFromParsed(conf *service.ParsedConfig) (Options, error) {
	var o Options
	var err error
	if o.Path, err = conf.FieldString(bcFieldPath); err != nil {
		return o, err
	}
	if o.Bucket, err = conf.FieldString(bcFieldBucket); err != nil {
		return o, err
	}
	syncOn, err := conf.FieldBool(bcFieldSync)
	if err != nil {
		return o, err
	}
	o.NoSync = !syncOn
	if conf.Contains(bcFieldDefaultTTL) {
		if o.DefaultTTL, err = conf.FieldDuration(bcFieldDefaultTTL); err != nil {
			return o, err
		}
	}
	if o.OpenTimeout, err = conf.FieldDuration(bcFieldOpenTimeout); err != nil {
		return o, err
	}
	if o.CompactionInterval, err = conf.FieldDuration(bcFieldCompactionInterval); err != nil {
		return o, err
	}
	return o, nil
}

// Cache is a service.Cache stored in a bbolt file. It is safe for concurrent
// use.
type Cache struct {
	db         *bolt.DB
	abs        string // key of the shared file handle
	path       string
	bucket     []byte
	defaultTTL time.Duration
	log        *service.Logger

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error
	stop      chan struct{}
	stopped   chan struct{}
}

// Open opens (creating if needed) the database file and bucket described by
// opts. It fails with an error naming the file when another process holds the
// file for longer than opts.OpenTimeout.
func Open(opts Options) (*Cache, error) {
	if opts.Path == "" {
		return nil, errors.New("bbolt cache: path must not be empty")
	}
	if opts.Bucket == "" {
		opts.Bucket = "benthos_cache"
	}
	if opts.OpenTimeout == 0 {
		opts.OpenTimeout = 5 * time.Second
	}
	if opts.OpenTimeout < 0 {
		return nil, fmt.Errorf("bbolt cache %s: open_timeout must be positive, got %s", opts.Path, opts.OpenTimeout)
	}
	if opts.CompactionInterval < 0 {
		return nil, fmt.Errorf("bbolt cache %s: compaction_interval must not be negative, got %s", opts.Path, opts.CompactionInterval)
	}
	if dir := filepath.Dir(opts.Path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("bbolt cache %s: creating parent directory: %w", opts.Path, err)
		}
	}

	db, abs, err := acquire(opts.Path, opts.NoSync, opts.OpenTimeout)
	if err != nil {
		return nil, err
	}

	c := &Cache{
		db:         db,
		abs:        abs,
		path:       opts.Path,
		bucket:     []byte(opts.Bucket),
		defaultTTL: opts.DefaultTTL,
		log:        opts.Logger,
		stop:       make(chan struct{}),
		stopped:    make(chan struct{}),
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(c.bucket)
		return err
	}); err != nil {
		_ = release(abs)
		return nil, fmt.Errorf("bbolt cache %s: creating bucket %q: %w", opts.Path, opts.Bucket, err)
	}
	if opts.CompactionInterval > 0 {
		go c.compactLoop(opts.CompactionInterval)
	} else {
		close(c.stopped)
	}
	if c.log != nil {
		c.log.Debugf("Opened bbolt cache %s bucket %s (sync %v)", opts.Path, opts.Bucket, !opts.NoSync)
	}
	return c, nil
}

// Path returns the database file path.
func (c *Cache) Path() string { return c.path }

// check returns an error when the cache cannot serve a call.
func (c *Cache) check(ctx context.Context, op, key string) error {
	if c.closed.Load() {
		return fmt.Errorf("bbolt cache %s: %s key %q: cache is closed", c.path, op, key)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bbolt cache %s: %s key %q: %w", c.path, op, key, err)
	}
	if key == "" {
		return fmt.Errorf("bbolt cache %s: %s: key must not be empty", c.path, op)
	}
	return nil
}

func (c *Cache) wrap(op, key string, err error) error {
	return fmt.Errorf("bbolt cache %s bucket %s: %s key %q: %w", c.path, c.bucket, op, key, err)
}

// expiry turns a per-call TTL (nil: use the default) into an absolute expiry.
func (c *Cache) expiry(ttl *time.Duration, now time.Time) time.Time {
	d := c.defaultTTL
	if ttl != nil {
		d = *ttl
	}
	if d <= 0 {
		return time.Time{}
	}
	return now.Add(d)
}

// Get returns a copy of the value under key, or service.ErrKeyNotFound when the
// key is absent or expired.
func (c *Cache) Get(ctx context.Context, key string) ([]byte, error) {
	if err := c.check(ctx, "get", key); err != nil {
		return nil, err
	}
	var out []byte
	err := c.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(c.bucket).Get([]byte(key))
		if raw == nil {
			return service.ErrKeyNotFound
		}
		expires, value, err := decodeEntry(raw)
		if err != nil {
			return err
		}
		if expired(expires, time.Now()) {
			return service.ErrKeyNotFound
		}
		out = bytes.Clone(value)
		if out == nil {
			out = []byte{}
		}
		return nil
	})
	if errors.Is(err, service.ErrKeyNotFound) {
		return nil, service.ErrKeyNotFound
	}
	if err != nil {
		return nil, c.wrap("get", key, err)
	}
	return out, nil
}

// Set stores value under key, replacing any previous value and expiry. With
// sync on, the value is on disk when Set returns nil.
func (c *Cache) Set(ctx context.Context, key string, value []byte, ttl *time.Duration) error {
	if err := c.check(ctx, "set", key); err != nil {
		return err
	}
	entry := encodeEntry(value, c.expiry(ttl, time.Now()))
	if err := c.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(c.bucket).Put([]byte(key), entry)
	}); err != nil {
		return c.wrap("set", key, err)
	}
	return nil
}

// SetMulti stores several items in one transaction (one disk flush). Benthos
// uses it automatically where a component writes batches.
func (c *Cache) SetMulti(ctx context.Context, items ...service.CacheItem) error {
	if len(items) == 0 {
		return nil
	}
	for _, it := range items {
		if err := c.check(ctx, "set", it.Key); err != nil {
			return err
		}
	}
	now := time.Now()
	if err := c.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(c.bucket)
		for _, it := range items {
			if err := b.Put([]byte(it.Key), encodeEntry(it.Value, c.expiry(it.TTL, now))); err != nil {
				return fmt.Errorf("key %q: %w", it.Key, err)
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("bbolt cache %s bucket %s: set %d keys: %w", c.path, c.bucket, len(items), err)
	}
	return nil
}

// Add stores value under key only if the key is absent (or expired); otherwise
// it returns service.ErrKeyAlreadyExists and leaves the stored value alone.
func (c *Cache) Add(ctx context.Context, key string, value []byte, ttl *time.Duration) error {
	if err := c.check(ctx, "add", key); err != nil {
		return err
	}
	err := c.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(c.bucket)
		now := time.Now()
		if raw := b.Get([]byte(key)); raw != nil {
			// A corrupt entry counts as present: Add must not silently
			// overwrite data it cannot read.
			expires, _, err := decodeEntry(raw)
			if err != nil || !expired(expires, now) {
				return service.ErrKeyAlreadyExists
			}
		}
		return b.Put([]byte(key), encodeEntry(value, c.expiry(ttl, now)))
	})
	if errors.Is(err, service.ErrKeyAlreadyExists) {
		return service.ErrKeyAlreadyExists
	}
	if err != nil {
		return c.wrap("add", key, err)
	}
	return nil
}

// Delete removes key. Deleting an absent key is not an error.
func (c *Cache) Delete(ctx context.Context, key string) error {
	if err := c.check(ctx, "delete", key); err != nil {
		return err
	}
	if err := c.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(c.bucket).Delete([]byte(key))
	}); err != nil {
		return c.wrap("delete", key, err)
	}
	return nil
}

// Close stops the compaction loop and closes the file, releasing its lock.
// Calls after the first return the first call's result; other methods fail
// after Close.
func (c *Cache) Close(ctx context.Context) error {
	c.closeOnce.Do(func() {
		c.closed.Store(true)
		close(c.stop)
		select {
		case <-c.stopped:
		case <-ctx.Done():
			// The loop only runs short transactions; closing the file
			// waits for any that is in flight.
		}
		if err := release(c.abs); err != nil {
			c.closeErr = fmt.Errorf("bbolt cache %s: closing: %w", c.path, err)
		}
	})
	return c.closeErr
}

func (c *Cache) compactLoop(every time.Duration) {
	defer close(c.stopped)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			n, err := c.compact(time.Now())
			if err != nil {
				if c.closed.Load() {
					return
				}
				if c.log != nil {
					c.log.Errorf("bbolt cache %s bucket %s: deleting expired entries: %v", c.path, c.bucket, err)
				}
			} else if n > 0 && c.log != nil {
				c.log.Debugf("bbolt cache %s bucket %s: deleted %d expired entries", c.path, c.bucket, n)
			}
		}
	}
}

// compact deletes entries that expired before now and returns how many. It
// scans in a read transaction first so that a file without expired entries
// never pays for a write.
func (c *Cache) compact(now time.Time) (int, error) {
	var dead [][]byte
	if err := c.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(c.bucket).ForEach(func(k, v []byte) error {
			if expires, _, err := decodeEntry(v); err == nil && expired(expires, now) {
				dead = append(dead, bytes.Clone(k))
			}
			return nil
		})
	}); err != nil || len(dead) == 0 {
		return 0, err
	}
	n := 0
	err := c.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(c.bucket)
		for _, k := range dead {
			// Re-check: the key may have been rewritten since the scan.
			if raw := b.Get(k); raw != nil {
				if expires, _, err := decodeEntry(raw); err == nil && expired(expires, now) {
					if err := b.Delete(k); err != nil {
						return err
					}
					n++
				}
			}
		}
		return nil
	})
	return n, err
}
