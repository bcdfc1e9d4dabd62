package flussout_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/bench/benchtable"
	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// createTable creates an empty table of the bench table's shape in db: a log
// table (benchtable.Create), or with primaryKey one keyed by id, with the
// same columns, buckets and ZSTD log batches; it returns once every bucket
// has a leader.
func createTable(ctx context.Context, c *fluss.Client, db, name string, primaryKey bool) (fluss.TablePath, error) {
	path := fluss.NewTablePath(db, name)
	if !primaryKey {
		return path, benchtable.Create(ctx, c, path, 0, nil)
	}
	s := benchtable.Schema()
	keyed, err := types.NewSchema(s.Columns, "id")
	if err != nil {
		return path, err
	}
	desc := &types.TableDescriptor{Schema: *keyed, BucketCount: benchtable.Buckets,
		Properties: map[string]string{types.PropArrowCompression: "ZSTD"}}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		return path, fmt.Errorf("creating %s: %w", path, err)
	}
	return path, waitLeaders(ctx, c, path)
}

// waitLeaders waits up to a minute until the table's offsets can be listed,
// that is until every bucket has a leader.
func waitLeaders(ctx context.Context, c *fluss.Client, path fluss.TablePath) error {
	deadline := time.Now().Add(time.Minute)
	for {
		info, err := c.RefreshTable(ctx, path)
		if err == nil {
			if _, err = c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.LatestOffset()); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("table %s not ready after a minute: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// javaCount is the number of records the Java client's scan reads from the
// table's log (`fluss-java.sh scan --count-only`); for a primary-key table
// written with distinct keys, one +I per row.
func javaCount(b *testing.B, path fluss.TablePath) int64 {
	out := strings.TrimSpace(flusstest.RunJava(b, "scan", path.String(), "--count-only"))
	lines := strings.Split(out, "\n")
	var r struct {
		Rows *int64 `json:"rows"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Rows == nil {
		b.Fatalf("scan --count-only %s printed %q (%v)", path, out, err)
	}
	return *r.Rows
}
