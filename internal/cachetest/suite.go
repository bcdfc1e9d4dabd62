// Package cachetest is the contract test suite shared by every cache the
// project ships or relies on (bbolt, redis and Benthos's own memory cache), so
// that their Get/Set/Add/Delete/TTL/Close semantics demonstrably match, plus
// helpers to build caches from YAML and to run a throw-away redis-server.
//
// It is a test helper: only _test.go files and benchmarks import it.
package cachetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// Options describes where a cache knowingly departs from the strict contract.
// The zero value asks for the strict contract, which the bbolt and redis caches
// meet. Each field documents the cache that needs it.
type Options struct {
	// AddIgnoresExpiry: Add still sees an expired key as present until it is
	// compacted away (Benthos's memory cache checks only existence).
	AddIgnoresExpiry bool
	// SharesValues: the cache keeps the slice given to Set and returns it from
	// Get without copying (memory cache), so callers must not mutate either.
	SharesValues bool
	// IgnoresContext: operations succeed with a cancelled context (memory
	// cache, which never blocks).
	IgnoresContext bool
	// UsableAfterClose: operations still work after Close (memory cache, whose
	// Close is a no-op).
	UsableAfterClose bool
	// TTL is the short TTL used by expiry tests. Default 300ms.
	TTL time.Duration
}

// Factory returns a new, empty cache for one subtest. The suite closes it (the
// Close test twice), so Close must be idempotent.
type Factory func(t *testing.T) service.Cache

// Run runs the contract suite against caches made by newCache.
func Run(t *testing.T, newCache Factory, opts Options) {
	if opts.TTL <= 0 {
		opts.TTL = 300 * time.Millisecond
	}
	s := &suite{newCache: newCache, opts: opts}
	t.Run("GetMissing", s.getMissing)
	t.Run("SetGet", s.setGet)
	t.Run("Values", s.values)
	t.Run("Keys", s.keys)
	t.Run("Add", s.add)
	t.Run("Delete", s.delete)
	t.Run("Copies", s.copies)
	t.Run("TTL", s.ttl)
	t.Run("Concurrency", s.concurrency)
	t.Run("Context", s.context)
	t.Run("Close", s.close)
}

type suite struct {
	newCache Factory
	opts     Options
}

func (s *suite) cache(t *testing.T) service.Cache {
	t.Helper()
	c := s.newCache(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustSet(t *testing.T, c service.Cache, key string, value []byte, ttl *time.Duration) {
	t.Helper()
	if err := c.Set(ctxT(t), key, value, ttl); err != nil {
		t.Fatalf("Set(%q): %v", key, err)
	}
}

func wantValue(t *testing.T, c service.Cache, key string, want []byte) {
	t.Helper()
	got, err := c.Get(ctxT(t), key)
	if err != nil {
		t.Fatalf("Get(%q): %v, want value %q", key, err, abbrev(want))
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%q) = %q, want %q", key, abbrev(got), abbrev(want))
	}
}

func wantMissing(t *testing.T, c service.Cache, key string) {
	t.Helper()
	got, err := c.Get(ctxT(t), key)
	if !errors.Is(err, service.ErrKeyNotFound) {
		t.Fatalf("Get(%q) = %q, %v; want service.ErrKeyNotFound", key, abbrev(got), err)
	}
}

func abbrev(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%s...(%d bytes)", b[:64], len(b))
	}
	return string(b)
}

func dur(d time.Duration) *time.Duration { return &d }

func (s *suite) getMissing(t *testing.T) {
	c := s.cache(t)
	wantMissing(t, c, "never-set")
}

func (s *suite) setGet(t *testing.T) {
	c := s.cache(t)
	mustSet(t, c, "k", []byte("v1"), nil)
	wantValue(t, c, "k", []byte("v1"))
	mustSet(t, c, "k", []byte("second value, longer"), nil)
	wantValue(t, c, "k", []byte("second value, longer"))
	mustSet(t, c, "k", []byte("3"), nil)
	wantValue(t, c, "k", []byte("3"))
	// Other keys are unaffected.
	mustSet(t, c, "other", []byte("o"), nil)
	wantValue(t, c, "k", []byte("3"))
	wantValue(t, c, "other", []byte("o"))
}

func (s *suite) values(t *testing.T) {
	c := s.cache(t)
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	large := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	cases := map[string][]byte{
		"empty":  {},
		"binary": binary,
		"json":   []byte(`{"table":"db.t","buckets":{"0":42,"1":7}}`),
		"large":  large,
	}
	for k, v := range cases {
		mustSet(t, c, k, v, nil)
	}
	for k, v := range cases {
		got, err := c.Get(ctxT(t), k)
		if err != nil {
			t.Fatalf("Get(%q): %v", k, err)
		}
		if !bytes.Equal(got, v) {
			t.Fatalf("Get(%q) = %d bytes, want %d bytes", k, len(got), len(v))
		}
	}
}

func (s *suite) keys(t *testing.T) {
	c := s.cache(t)
	keys := []string{
		"a", "A", "a/b", "a:b", "with space", "ünïcødé-ключ", strings.Repeat("long", 250),
		"fluss-iggy/db.table/p=2024/bucket=3",
	}
	for i, k := range keys {
		mustSet(t, c, k, []byte(fmt.Sprint(i)), nil)
	}
	for i, k := range keys {
		wantValue(t, c, k, []byte(fmt.Sprint(i)))
	}
}

func (s *suite) add(t *testing.T) {
	c := s.cache(t)
	ctx := ctxT(t)
	if err := c.Add(ctx, "k", []byte("first"), nil); err != nil {
		t.Fatalf("Add on absent key: %v", err)
	}
	wantValue(t, c, "k", []byte("first"))
	if err := c.Add(ctx, "k", []byte("second"), nil); !errors.Is(err, service.ErrKeyAlreadyExists) {
		t.Fatalf("Add on present key = %v, want service.ErrKeyAlreadyExists", err)
	}
	wantValue(t, c, "k", []byte("first"))

	// Add after Set, and after Delete.
	mustSet(t, c, "s", []byte("set"), nil)
	if err := c.Add(ctx, "s", []byte("added"), nil); !errors.Is(err, service.ErrKeyAlreadyExists) {
		t.Fatalf("Add after Set = %v, want service.ErrKeyAlreadyExists", err)
	}
	if err := c.Delete(ctx, "s"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := c.Add(ctx, "s", []byte("added"), nil); err != nil {
		t.Fatalf("Add after Delete: %v", err)
	}
	wantValue(t, c, "s", []byte("added"))

	// Empty value counts as present.
	if err := c.Add(ctx, "empty", []byte{}, nil); err != nil {
		t.Fatalf("Add empty value: %v", err)
	}
	if err := c.Add(ctx, "empty", []byte("x"), nil); !errors.Is(err, service.ErrKeyAlreadyExists) {
		t.Fatalf("Add over empty value = %v, want service.ErrKeyAlreadyExists", err)
	}
}

func (s *suite) delete(t *testing.T) {
	c := s.cache(t)
	ctx := ctxT(t)
	mustSet(t, c, "k", []byte("v"), nil)
	mustSet(t, c, "keep", []byte("v"), nil)
	if err := c.Delete(ctx, "k"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantMissing(t, c, "k")
	wantValue(t, c, "keep", []byte("v"))
	if err := c.Delete(ctx, "k"); err != nil {
		t.Fatalf("Delete of an already deleted key = %v, want nil", err)
	}
	if err := c.Delete(ctx, "never-set"); err != nil {
		t.Fatalf("Delete of a never-set key = %v, want nil", err)
	}
	mustSet(t, c, "k", []byte("again"), nil)
	wantValue(t, c, "k", []byte("again"))
}

func (s *suite) copies(t *testing.T) {
	if s.opts.SharesValues {
		t.Skip("cache shares value slices with callers (Options.SharesValues)")
	}
	c := s.cache(t)
	in := []byte("original")
	mustSet(t, c, "k", in, nil)
	copy(in, "MUTATED!")
	wantValue(t, c, "k", []byte("original"))
	got, err := c.Get(ctxT(t), "k")
	if err != nil {
		t.Fatal(err)
	}
	copy(got, "MUTATED!")
	wantValue(t, c, "k", []byte("original"))
}

// waitExpiry polls key until it disappears and checks it did not disappear
// before ttl had passed since setAt.
func waitExpiry(t *testing.T, c service.Cache, key string, setAt time.Time, ttl time.Duration) {
	t.Helper()
	deadline := time.Now().Add(ttl + 10*time.Second)
	for {
		_, err := c.Get(ctxT(t), key)
		now := time.Now()
		if errors.Is(err, service.ErrKeyNotFound) {
			if el := now.Sub(setAt); el < ttl {
				t.Fatalf("key %q expired after %s, before its TTL of %s", key, el, ttl)
			}
			return
		}
		if err != nil {
			t.Fatalf("Get(%q) while waiting for expiry: %v", key, err)
		}
		if now.After(deadline) {
			t.Fatalf("key %q still present %s after a Set with TTL %s", key, now.Sub(setAt), ttl)
		}
		time.Sleep(ttl / 10)
	}
}

func (s *suite) ttl(t *testing.T) {
	ttl := s.opts.TTL
	c := s.cache(t)
	ctx := ctxT(t)

	setAt := time.Now()
	mustSet(t, c, "set-ttl", []byte("v"), dur(ttl))
	if err := c.Add(ctx, "add-ttl", []byte("v"), dur(ttl)); err != nil {
		t.Fatalf("Add with TTL: %v", err)
	}
	mustSet(t, c, "cleared", []byte("v"), dur(ttl))
	// A later Set without TTL replaces the expiry (with the cache's default,
	// which is long or none in every configuration the suite runs).
	mustSet(t, c, "cleared", []byte("v2"), nil)
	mustSet(t, c, "no-ttl", []byte("v"), nil)
	mustSet(t, c, "long-ttl", []byte("v"), dur(time.Hour))
	for _, key := range []string{"set-ttl", "add-ttl"} {
		got, err := c.Get(ctx, key)
		// Measured after the read: a key may be gone once its TTL passed.
		if el := time.Since(setAt); el >= ttl {
			t.Logf("machine too slow to check %q before its expiry (%s elapsed)", key, el)
			continue
		}
		if err != nil || string(got) != "v" {
			t.Fatalf("Get(%q) before its TTL = %q, %v; want \"v\"", key, abbrev(got), err)
		}
	}

	waitExpiry(t, c, "set-ttl", setAt, ttl)
	waitExpiry(t, c, "add-ttl", setAt, ttl)
	wantValue(t, c, "cleared", []byte("v2"))
	wantValue(t, c, "no-ttl", []byte("v"))
	wantValue(t, c, "long-ttl", []byte("v"))

	if !s.opts.AddIgnoresExpiry {
		if err := c.Add(ctx, "set-ttl", []byte("reborn"), nil); err != nil {
			t.Fatalf("Add over an expired key: %v", err)
		}
		wantValue(t, c, "set-ttl", []byte("reborn"))
	}
	// Set over an expired key always works.
	mustSet(t, c, "add-ttl", []byte("reborn"), nil)
	wantValue(t, c, "add-ttl", []byte("reborn"))
}

// concurrencyWorkers and concurrencyRounds size the concurrency test.
const concurrencyWorkers, concurrencyRounds = 8, 15

// concurrency runs three kinds of contention at once (disjoint keys, Adds of
// one key, Sets of one key), then checks what each left behind.
func (s *suite) concurrency(t *testing.T) {
	c := s.cache(t)
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, concurrencyWorkers*3+1)
	checks := []func(*testing.T){
		disjointWriters(ctx, c, &wg, errs),
		contendedAdds(ctx, c, &wg, errs),
		contendedSets(ctx, c, &wg, errs),
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	for _, check := range checks {
		check(t)
	}
}

// disjointWriters starts workers that each write, read back and delete keys
// of their own; the check sees every worker's last word on each key.
func disjointWriters(ctx context.Context, c service.Cache, wg *sync.WaitGroup, errs chan<- error) func(*testing.T) {
	for w := range concurrencyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range concurrencyRounds {
				key := fmt.Sprintf("w%d/k%d", w, r)
				val := []byte(fmt.Sprintf("w%d-r%d", w, r))
				if err := c.Set(ctx, key, val, nil); err != nil {
					errs <- fmt.Errorf("Set(%q): %w", key, err)
					return
				}
				got, err := c.Get(ctx, key)
				if err != nil || !bytes.Equal(got, val) {
					errs <- fmt.Errorf("Get(%q) = %q, %v after Set %q", key, got, err, val)
					return
				}
				if r%3 == 0 {
					if err := c.Delete(ctx, key); err != nil {
						errs <- fmt.Errorf("Delete(%q): %w", key, err)
						return
					}
				}
			}
		}()
	}
	return func(t *testing.T) {
		for w := range concurrencyWorkers {
			for r := range concurrencyRounds {
				key := fmt.Sprintf("w%d/k%d", w, r)
				if r%3 == 0 {
					wantMissing(t, c, key)
				} else {
					wantValue(t, c, key, []byte(fmt.Sprintf("w%d-r%d", w, r)))
				}
			}
		}
	}
}

// contendedAdds starts workers that Add the same key: exactly one wins.
func contendedAdds(ctx context.Context, c service.Cache, wg *sync.WaitGroup, errs chan<- error) func(*testing.T) {
	var mu sync.Mutex
	var winners []string
	for w := range concurrencyWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			val := fmt.Sprintf("adder-%d", w)
			err := c.Add(ctx, "contended-add", []byte(val), nil)
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, val)
				mu.Unlock()
			case errors.Is(err, service.ErrKeyAlreadyExists):
			default:
				errs <- fmt.Errorf("contended Add: %w", err)
			}
		}()
	}
	return func(t *testing.T) {
		if len(winners) != 1 {
			t.Fatalf("%d concurrent Adds of one key succeeded (%v), want exactly 1", len(winners), winners)
		}
		wantValue(t, c, "contended-add", []byte(winners[0]))
	}
}

// contendedSets starts workers that Set distinct whole values of one key:
// the survivor is one of them, never a mixture.
func contendedSets(ctx context.Context, c service.Cache, wg *sync.WaitGroup, errs chan<- error) func(*testing.T) {
	written := map[string]bool{}
	for w := range concurrencyWorkers {
		val := bytes.Repeat([]byte{byte('a' + w)}, 1000+w)
		written[string(val)] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range concurrencyRounds {
				if err := c.Set(ctx, "contended-set", val, nil); err != nil {
					errs <- fmt.Errorf("contended Set: %w", err)
					return
				}
			}
		}()
	}
	return func(t *testing.T) {
		got, err := c.Get(ctx, "contended-set")
		if err != nil {
			t.Fatalf("Get(contended-set): %v", err)
		}
		if !written[string(got)] {
			t.Fatalf("contended Set left %d bytes that are none of the written values", len(got))
		}
	}
}

func (s *suite) context(t *testing.T) {
	if s.opts.IgnoresContext {
		t.Skip("cache ignores contexts (Options.IgnoresContext)")
	}
	c := s.cache(t)
	mustSet(t, c, "k", []byte("v"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Set(ctx, "k", []byte("cancelled"), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Set with cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if _, err := c.Get(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	wantValue(t, c, "k", []byte("v"))
}

func (s *suite) close(t *testing.T) {
	c := s.newCache(t)
	ctx := ctxT(t)
	mustSet(t, c, "k", []byte("v"), nil)
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if s.opts.UsableAfterClose {
		return
	}
	if _, err := c.Get(ctx, "k"); err == nil || errors.Is(err, service.ErrKeyNotFound) {
		t.Fatalf("Get after Close = %v, want a closed error", err)
	}
	if err := c.Set(ctx, "k", []byte("v"), nil); err == nil {
		t.Fatal("Set after Close succeeded")
	}
	if err := c.Add(ctx, "new", []byte("v"), nil); err == nil || errors.Is(err, service.ErrKeyAlreadyExists) {
		t.Fatalf("Add after Close = %v, want a closed error", err)
	}
	if err := c.Delete(ctx, "k"); err == nil {
		t.Fatal("Delete after Close succeeded")
	}
}
