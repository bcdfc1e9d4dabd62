package flussinput

import (
	"context"
	"errors"
	"fmt"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// checkpointStore reads and writes the value under checkpoint_key.
type checkpointStore struct {
	mgr   *service.Resources
	cache string
	key   string
}

// get returns the stored bytes, or nil when the key is absent.
func (s *checkpointStore) get(ctx context.Context) ([]byte, error) {
	var (
		val    []byte
		getErr error
	)
	err := s.mgr.AccessCache(ctx, s.cache, func(c service.Cache) {
		val, getErr = c.Get(ctx, s.key)
	})
	if err != nil {
		return nil, fmt.Errorf("accessing cache %q: %w", s.cache, err)
	}
	if errors.Is(getErr, service.ErrKeyNotFound) {
		return nil, nil
	}
	if getErr != nil {
		return nil, fmt.Errorf("reading key %q from cache %q: %w", s.key, s.cache, getErr)
	}
	if val == nil {
		val = []byte{}
	}
	return val, nil
}

// set stores a value without expiry.
func (s *checkpointStore) set(ctx context.Context, val []byte) error {
	var setErr error
	err := s.mgr.AccessCache(ctx, s.cache, func(c service.Cache) {
		setErr = c.Set(ctx, s.key, val, nil)
	})
	if err != nil {
		return fmt.Errorf("accessing cache %q: %w", s.cache, err)
	}
	if setErr != nil {
		return fmt.Errorf("writing key %q to cache %q: %w", s.key, s.cache, setErr)
	}
	return nil
}
