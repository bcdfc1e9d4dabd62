// Package benchtable is the table every benchmark under bench/ reads: 10
// columns of mixed types (BIGINT id, TIMESTAMP(3), two short STRINGs,
// DECIMAL(12,2), INT with 10% nulls, DOUBLE, BOOLEAN, DATE, a 20–60
// character STRING), ZSTD, Buckets buckets, written with our writer in
// batches of BatchRows rows. Rows are generated deterministically from their
// id, so every benchmark and every run sees the same data.
package benchtable

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

const (
	// EnvRows overrides the row count of the benchmark table.
	EnvRows = "FLUSS_BENCH_ROWS"
	// DefaultRows is the row count the issues ask for.
	DefaultRows = 2_000_000
	// Buckets is the table's bucket count.
	Buckets = 4
	// BatchRows is the number of rows per written log batch.
	BatchRows = 8192
)

// Rows is the row count to use: $FLUSS_BENCH_ROWS, or DefaultRows.
func Rows() int {
	if n, err := strconv.Atoi(os.Getenv(EnvRows)); err == nil && n > 0 {
		return n
	}
	return DefaultRows
}

// Schema is the table's schema.
func Schema() *types.Schema {
	return types.MustSchema([]types.Column{
		types.NewColumn("id", types.BigInt().NotNull()),
		types.NewColumn("ts", types.Timestamp(3)),
		types.NewColumn("user_name", types.String()),
		types.NewColumn("category", types.String()),
		types.NewColumn("price", types.Decimal(12, 2)),
		types.NewColumn("quantity", types.Int()),
		types.NewColumn("score", types.Double()),
		types.NewColumn("active", types.Boolean()),
		types.NewColumn("day", types.Date()),
		types.NewColumn("note", types.String()),
	})
}

var categories = []string{"books", "garden", "toys", "music", "tools", "food", "sports", "baby"}

const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 "

func randString(r *rand.Rand, buf []byte, n int) string {
	buf = buf[:0]
	for i := 0; i < n; i++ {
		buf = append(buf, letters[r.IntN(len(letters))])
	}
	return string(buf)
}

// Batch builds rows [first, first+n) with the writer's Arrow schema. The
// caller releases it.
func Batch(schema *arrow.Schema, first int64, n int) arrow.RecordBatch {
	r := rand.New(rand.NewPCG(uint64(first), 42))
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	buf := make([]byte, 0, 64)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < n; i++ {
		id := first + int64(i)
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(base + id*37 + int64(r.IntN(1000))))
		b.Field(2).(*array.StringBuilder).Append("user_" + randString(r, buf, 8))
		b.Field(3).(*array.StringBuilder).Append(categories[r.IntN(len(categories))])
		b.Field(4).(*array.Decimal128Builder).Append(decimal128.FromI64(int64(r.IntN(10_000_000))))
		if r.IntN(10) == 0 {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Int32Builder).Append(int32(r.IntN(1000)))
		}
		b.Field(6).(*array.Float64Builder).Append(r.Float64() * 100)
		b.Field(7).(*array.BooleanBuilder).Append(r.IntN(2) == 0)
		b.Field(8).(*array.Date32Builder).Append(arrow.Date32(19000 + r.IntN(2000)))
		b.Field(9).(*array.StringBuilder).Append(randString(r, buf, 20+r.IntN(40)))
	}
	return b.NewRecordBatch()
}

// Create creates the table at path (its database must exist) with ZSTD
// batches and the table properties props adds, waits until every bucket has
// a leader and fills it with rows rows, one writer goroutine per bucket.
func Create(ctx context.Context, c *fluss.Client, path fluss.TablePath, rows int, props map[string]string) error {
	desc := &types.TableDescriptor{Schema: *Schema(), BucketCount: Buckets,
		Properties: map[string]string{types.PropArrowCompression: "ZSTD"}}
	for k, v := range props {
		desc.Properties[k] = v
	}
	if err := c.CreateTable(ctx, path, desc, false); err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	var info *fluss.TableInfo
	for deadline := time.Now().Add(time.Minute); ; {
		var err error
		if info, err = c.RefreshTable(ctx, path); err == nil {
			if _, err = c.ListOffsets(ctx, info, fluss.NoPartition, nil, fluss.LatestOffset()); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("table %s not ready: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if rows == 0 {
		return nil
	}
	w, err := c.NewWriter(info)
	if err != nil {
		return fmt.Errorf("writer for %s: %w", path, err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, Buckets)
	per := (rows + Buckets - 1) / Buckets
	for bk := 0; bk < Buckets; bk++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := bk*per, min((bk+1)*per, rows)
			for first := lo; first < hi; first += BatchRows {
				rec := Batch(w.Schema(), int64(first), min(BatchRows, hi-first))
				_, err := w.Append(ctx, fluss.NoPartition, int32(bk), rec)
				rec.Release()
				if err != nil {
					errs <- fmt.Errorf("writing %s bucket %d: %w", path, bk, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// PeakRSSKB reads this process's peak resident set (VmHWM) from
// /proc/self/status, in KiB; 0 when unavailable.
func PeakRSSKB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
