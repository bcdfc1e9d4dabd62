package fluss

import (
	"container/list"
	"io"
	"sync"
	"time"
)

// Parked segment streams. A scanner reads about one fetch's worth of a
// remote segment per fetch; instead of closing the stream and reopening
// the object at the next fetch, it parks the stream here under (path, next
// offset) and the next fetch resumes it. Prefetched segments wait here
// under (path, start offset) too. The cache holds at most maxCursors
// streams and closes one left unused for cursorIdle.

const (
	maxCursors = 16
	cursorIdle = 30 * time.Second
)

type cursorKey struct {
	path   string
	offset int64
}

type cursor struct {
	key   cursorKey
	rc    io.ReadCloser
	timer *time.Timer
	elem  *list.Element
}

type cursorCache struct {
	mu     sync.Mutex
	m      map[cursorKey]*cursor
	lru    list.List // front: newest
	closed bool
}

func newCursorCache() *cursorCache { return &cursorCache{m: map[cursorKey]*cursor{}} }

// take removes and returns the stream parked under key.
func (c *cursorCache) take(key cursorKey) (io.ReadCloser, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.m[key]
	if !ok {
		return nil, false
	}
	c.removeLocked(cur)
	return cur.rc, true
}

// has reports whether a stream is parked under key.
func (c *cursorCache) has(key cursorKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[key]
	return ok
}

// put parks rc under key, closing the stream it replaces and the oldest
// one when the cache is full.
func (c *cursorCache) put(key cursorKey, rc io.ReadCloser) {
	var drop []io.ReadCloser
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		rc.Close()
		return
	}
	if old, ok := c.m[key]; ok {
		c.removeLocked(old)
		drop = append(drop, old.rc)
	}
	for c.lru.Len() >= maxCursors {
		oldest := c.lru.Back().Value.(*cursor)
		c.removeLocked(oldest)
		drop = append(drop, oldest.rc)
	}
	cur := &cursor{key: key, rc: rc}
	cur.elem = c.lru.PushFront(cur)
	c.m[key] = cur
	cur.timer = time.AfterFunc(cursorIdle, func() { c.expire(cur) })
	c.mu.Unlock()
	for _, d := range drop {
		d.Close()
	}
}

// expire closes cur if it is still parked.
func (c *cursorCache) expire(cur *cursor) {
	c.mu.Lock()
	if c.m[cur.key] != cur {
		c.mu.Unlock()
		return
	}
	c.removeLocked(cur)
	c.mu.Unlock()
	cur.rc.Close()
}

func (c *cursorCache) removeLocked(cur *cursor) {
	delete(c.m, cur.key)
	c.lru.Remove(cur.elem)
	cur.timer.Stop()
}

// close closes every parked stream; later puts close theirs at once.
func (c *cursorCache) close() {
	c.mu.Lock()
	c.closed = true
	var drop []io.ReadCloser
	for _, cur := range c.m {
		c.removeLocked(cur)
		drop = append(drop, cur.rc)
	}
	c.mu.Unlock()
	for _, d := range drop {
		d.Close()
	}
}
