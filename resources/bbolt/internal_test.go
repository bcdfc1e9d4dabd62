package bbolt

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	bolt "go.etcd.io/bbolt"
)

func TestEntryRoundTrip(t *testing.T) {
	exp := time.Unix(1700000000, 123)
	for _, v := range [][]byte{nil, {}, []byte("x"), make([]byte, 5000)} {
		gotExp, gotV, err := decodeEntry(encodeEntry(v, exp))
		if err != nil || !gotExp.Equal(exp) || string(gotV) != string(v) {
			t.Fatalf("round trip of %d bytes: %v %v %d bytes", len(v), err, gotExp, len(gotV))
		}
	}
	if e, _, err := decodeEntry(encodeEntry([]byte("v"), time.Time{})); err != nil || !e.IsZero() {
		t.Fatalf("no expiry: %v %v", e, err)
	}
	for _, raw := range [][]byte{nil, {1, 2}, append([]byte{9}, make([]byte, 8)...)} {
		if _, _, err := decodeEntry(raw); !errors.Is(err, errCorruptEntry) {
			t.Fatalf("decodeEntry(%v) = %v, want errCorruptEntry", raw, err)
		}
	}
}

func TestCorruptEntry(t *testing.T) {
	c, err := Open(Options{Path: filepath.Join(t.TempDir(), "c.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := c.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(c.bucket).Put([]byte("bad"), []byte("raw"))
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.Get(ctx, "bad")
	if err == nil || !strings.Contains(err.Error(), "corrupt entry") || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("Get of a corrupt entry = %v, want an error naming the key", err)
	}
	if err := c.Add(ctx, "bad", []byte("v"), nil); !errors.Is(err, service.ErrKeyAlreadyExists) {
		t.Fatalf("Add over a corrupt entry = %v, want ErrKeyAlreadyExists", err)
	}
	if err := c.Set(ctx, "bad", []byte("fixed"), nil); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "bad"); err != nil || string(v) != "fixed" {
		t.Fatalf("after Set: %q %v", v, err)
	}
}

// TestCompaction runs in a synctest bubble: the compaction ticker and the
// expiry clock are both fake, so one interval of sleep fires exactly one
// compaction, and synctest.Wait returns once it has finished.
func TestCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	synctest.Test(t, func(t *testing.T) { testCompaction(t, path) })
}

func testCompaction(t *testing.T, path string) {
	const interval = 50 * time.Millisecond
	c, err := Open(Options{Path: path, CompactionInterval: interval})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	ctx := context.Background()
	short, long := 20*time.Millisecond, time.Hour
	for _, k := range []string{"a", "b", "c"} {
		if err := c.Set(ctx, k, []byte("v"), &short); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set(ctx, "keep", []byte("v"), &long); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "forever", []byte("v"), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(interval) // the first compaction is due: the three 20ms keys have expired
	synctest.Wait()      // ... and done once the loop waits for its next tick
	var n int
	if err := c.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(c.bucket).Stats().KeyN
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d keys in the file after the first compaction, 3 of 5 expired; want 2", n)
	}
	for _, k := range []string{"keep", "forever"} {
		if _, err := c.Get(ctx, k); err != nil {
			t.Fatalf("Get(%q) after compaction: %v", k, err)
		}
	}
}
