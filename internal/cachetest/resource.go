package cachetest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	// The resource manager needs the pure components (the none metrics and
	// tracer, and the memory cache).
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

// FromYAML builds a cache resource from a cache config as it would appear under
// `cache_resources` (for example "memory:\n  default_ttl: 5m"), through Benthos's
// own resource manager and the global plugin environment, so the cache is
// parsed, linted and constructed exactly as in the binary.
//
// The returned Cache reaches the resource through Resources.AccessCache on
// every call, the way the input does. Its Close shuts the resource manager
// down (which closes the cache and drops the resource, so later calls fail)
// and is idempotent.
func FromYAML(tb testing.TB, conf string) service.Cache {
	tb.Helper()
	c, err := NewFromYAML(conf)
	if err != nil {
		tb.Fatalf("building cache resource from YAML: %v\n%s", err, conf)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

// NewFromYAML is FromYAML for callers without a testing.TB (such as a child
// process of a crash test). The caller must Close the returned cache.
func NewFromYAML(conf string) (service.Cache, error) {
	const label = "under_test"
	rb := service.NewResourceBuilder()
	rb.SetLogger(slog.New(slog.DiscardHandler))
	if err := rb.AddCacheYAML(fmt.Sprintf("label: %s\n%s", label, conf)); err != nil {
		return nil, err
	}
	res, closeFn, err := rb.Build()
	if err != nil {
		return nil, err
	}
	// Benthos constructs cache resources lazily, on first access, under a
	// read lock: concurrent first accesses race and may construct the cache
	// twice. Touch it once here, as a component should in Connect.
	if err := res.AccessCache(context.Background(), label, func(service.Cache) {}); err != nil {
		_ = closeFn(context.Background())
		return nil, err
	}
	return &resourceCache{res: res, label: label, closeFn: closeFn}, nil
}

type resourceCache struct {
	res     *service.Resources
	label   string
	closeFn func(context.Context) error

	mu     sync.Mutex
	closed bool
	err    error
}

// access reaches the cache through the manager. After Close the manager has
// dropped the resource and AccessCache fails with a not-found error.
func (r *resourceCache) access(ctx context.Context, fn func(c service.Cache)) error {
	return r.res.AccessCache(ctx, r.label, fn)
}

func (r *resourceCache) Get(ctx context.Context, key string) (v []byte, err error) {
	if aerr := r.access(ctx, func(c service.Cache) { v, err = c.Get(ctx, key) }); aerr != nil {
		return nil, aerr
	}
	return v, err
}

func (r *resourceCache) Set(ctx context.Context, key string, value []byte, ttl *time.Duration) (err error) {
	if aerr := r.access(ctx, func(c service.Cache) { err = c.Set(ctx, key, value, ttl) }); aerr != nil {
		return aerr
	}
	return err
}

func (r *resourceCache) Add(ctx context.Context, key string, value []byte, ttl *time.Duration) (err error) {
	if aerr := r.access(ctx, func(c service.Cache) { err = c.Add(ctx, key, value, ttl) }); aerr != nil {
		return aerr
	}
	return err
}

func (r *resourceCache) Delete(ctx context.Context, key string) (err error) {
	if aerr := r.access(ctx, func(c service.Cache) { err = c.Delete(ctx, key) }); aerr != nil {
		return aerr
	}
	return err
}

func (r *resourceCache) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.err = r.closeFn(ctx)
	}
	return r.err
}
