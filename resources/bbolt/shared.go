package bbolt

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// bbolt locks its file with flock, which also conflicts between two opens in
// one process. Benthos may construct a cache resource twice (resources are
// built lazily on first access, and two first accesses can race), and two
// cache resources may name the same file with different buckets. Both cases
// share one *bolt.DB per file, reference-counted, instead of the second open
// waiting open_timeout for a lock its own process holds.
var files = struct {
	sync.Mutex
	m map[string]*sharedFile
}{m: map[string]*sharedFile{}}

type sharedFile struct {
	db     *bolt.DB
	noSync bool
	refs   int
}

// acquire opens path, or takes another reference to it if this process has it
// open already.
func acquire(path string, noSync bool, timeout time.Duration) (*bolt.DB, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", fmt.Errorf("bbolt cache %s: resolving path: %w", path, err)
	}
	files.Lock()
	defer files.Unlock()
	if f, ok := files.m[abs]; ok {
		if f.noSync != noSync {
			return nil, "", fmt.Errorf("bbolt cache %s: file is already open in this process with sync: %v; every cache on one file must use the same sync setting", path, !f.noSync)
		}
		f.refs++
		return f.db, abs, nil
	}
	db, err := bolt.Open(abs, 0o600, &bolt.Options{
		Timeout:        timeout,
		NoSync:         noSync,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, "", fmt.Errorf("bbolt cache %s: file is locked by another process (gave up after %s; a bbolt file can be open in one process only, use the redis cache to share state between instances): %w",
				path, timeout, err)
		}
		return nil, "", fmt.Errorf("bbolt cache %s: opening database: %w", path, err)
	}
	files.m[abs] = &sharedFile{db: db, noSync: noSync, refs: 1}
	return db, abs, nil
}

// release drops a reference taken by acquire and closes the file with the
// last one.
func release(abs string) error {
	files.Lock()
	defer files.Unlock()
	f, ok := files.m[abs]
	if !ok {
		return nil
	}
	if f.refs--; f.refs > 0 {
		return nil
	}
	delete(files.m, abs)
	return f.db.Close()
}
