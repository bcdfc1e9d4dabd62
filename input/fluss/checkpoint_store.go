package flussinput

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// checkpointStore reads and writes positions in the checkpoint cache.
//
// An unsharded input keeps one value, every bucket's position, under
// checkpoint_key. A sharded one (perBucket) keeps each bucket's position
// under a key of its own (bucketCheckpointKey), so that whatever layout of
// shards runs next, or an unsharded input, finds every bucket's committed
// offset whichever instance wrote it (see loadBucketKeys).
type checkpointStore struct {
	mgr       *service.Resources
	cache     string
	key       string
	perBucket bool
	// written holds, per bucket key, the value last written (perBucket):
	// unchanged buckets are not written again, and the key of a bucket
	// that is no longer read (its partition was dropped) is deleted.
	written map[string][]byte
}

func newCheckpointStore(mgr *service.Resources, conf *inputConfig) checkpointStore {
	return checkpointStore{mgr: mgr, cache: conf.checkpointCache, key: conf.checkpointKey, perBucket: conf.shardCount > 0, written: map[string][]byte{}}
}

// get returns the bytes under checkpoint_key, or nil when the key is absent.
func (s *checkpointStore) get(ctx context.Context) ([]byte, error) {
	return s.getKey(ctx, s.key)
}

// getKey returns the bytes under key, or nil when it is absent.
func (s *checkpointStore) getKey(ctx context.Context, key string) ([]byte, error) {
	var (
		val    []byte
		getErr error
	)
	err := s.mgr.AccessCache(ctx, s.cache, func(c service.Cache) {
		val, getErr = c.Get(ctx, key)
	})
	if err != nil {
		return nil, fmt.Errorf("accessing cache %q: %w", s.cache, err)
	}
	if errors.Is(getErr, service.ErrKeyNotFound) {
		return nil, nil
	}
	if getErr != nil {
		return nil, fmt.Errorf("reading key %q from cache %q: %w", key, s.cache, getErr)
	}
	if val == nil {
		val = []byte{}
	}
	return val, nil
}

// write stores a snapshot of the positions: the whole value under
// checkpoint_key, or (perBucket) each bucket this instance reads under its
// own key.
func (s *checkpointStore) write(ctx context.Context, snap *snapshot) error {
	if !s.perBucket {
		return s.set(ctx, s.key, snap.value)
	}
	owned := make(map[bucketKey]bool, len(snap.positions))
	for st := range snap.positions {
		owned[st.key] = true
	}
	keep := make(map[string]bool, len(owned))
	for _, b := range snap.v.Buckets {
		if !owned[b.key()] {
			continue // loaded, not read here: its owner writes it
		}
		key := bucketCheckpointKey(s.key, b.key())
		keep[key] = true
		one := snap.v
		one.Buckets = []checkpointBucket{b}
		val, err := json.Marshal(one)
		if err != nil {
			return err
		}
		if bytes.Equal(s.written[key], val) {
			continue
		}
		if err := s.set(ctx, key, val); err != nil {
			return err
		}
		s.written[key] = val
	}
	return s.forget(ctx, keep)
}

// forget deletes the keys written before of buckets no longer read.
func (s *checkpointStore) forget(ctx context.Context, keep map[string]bool) error {
	for key := range s.written {
		if keep[key] {
			continue
		}
		var delErr error
		err := s.mgr.AccessCache(ctx, s.cache, func(c service.Cache) { delErr = c.Delete(ctx, key) })
		if err == nil && !errors.Is(delErr, service.ErrKeyNotFound) {
			err = delErr
		}
		if err != nil {
			return fmt.Errorf("deleting key %q from cache %q: %w", key, s.cache, err)
		}
		delete(s.written, key)
	}
	return nil
}

// set stores a value without expiry.
func (s *checkpointStore) set(ctx context.Context, key string, val []byte) error {
	var setErr error
	err := s.mgr.AccessCache(ctx, s.cache, func(c service.Cache) {
		setErr = c.Set(ctx, key, val, nil)
	})
	if err != nil {
		return fmt.Errorf("accessing cache %q: %w", s.cache, err)
	}
	if setErr != nil {
		return fmt.Errorf("writing key %q to cache %q: %w", key, s.cache, setErr)
	}
	return nil
}
