package caches_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/cachetest"

	_ "github.com/fluss-iggy/fluss-iggy/resources/bbolt"
	_ "github.com/fluss-iggy/fluss-iggy/resources/redis"
	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

// checkpoint is a value the size of a checkpoint for a 16-bucket table.
var checkpoint = func() []byte {
	b := []byte(`{"table":"fluss.orders","partition":"","buckets":{`)
	for i := range 16 {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `"%d":%d`, i, 1_000_000_000+i*7919)
	}
	return append(b, "}}"...)
}()

type target struct {
	name string
	conf func(b *testing.B) string
}

func targets() []target {
	return []target{
		{"memory", func(*testing.B) string { return "memory:\n  default_ttl: 5m\n" }},
		{"file", func(b *testing.B) string { return fmt.Sprintf("file:\n  directory: %q\n", b.TempDir()) }},
		{"bbolt-sync", func(b *testing.B) string {
			return fmt.Sprintf("bbolt:\n  path: %q\n", filepath.Join(b.TempDir(), "bench.db"))
		}},
		{"bbolt-nosync", func(b *testing.B) string {
			return fmt.Sprintf("bbolt:\n  path: %q\n  sync: false\n", filepath.Join(b.TempDir(), "bench.db"))
		}},
		{"redis", func(b *testing.B) string {
			srv := cachetest.StartRedis(b, cachetest.RedisOptions{})
			return fmt.Sprintf("redis:\n  url: %q\n", srv.URL())
		}},
		{"redis-aof-always", func(b *testing.B) string {
			srv := cachetest.StartRedis(b, cachetest.RedisOptions{AppendOnly: true})
			return fmt.Sprintf("redis:\n  url: %q\n", srv.URL())
		}},
	}
}

func report(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	if len(lat) == 0 || elapsed <= 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkSet measures one writer overwriting one key, as a single-bucket
// checkpoint does.
func BenchmarkSet(b *testing.B) {
	for _, tg := range targets() {
		b.Run(tg.name, func(b *testing.B) {
			c := cachetest.FromYAML(b, tg.conf(b))
			ctx := context.Background()
			if err := c.Set(ctx, "checkpoint", checkpoint, nil); err != nil {
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				t0 := time.Now()
				if err := c.Set(ctx, "checkpoint", checkpoint, nil); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			elapsed := time.Since(start)
			b.StopTimer()
			report(b, lat, elapsed)
		})
	}
}

// BenchmarkSetParallel measures GOMAXPROCS writers, each overwriting its own
// key, as per-bucket checkpoints written from several goroutines do.
func BenchmarkSetParallel(b *testing.B) {
	for _, tg := range targets() {
		b.Run(tg.name, func(b *testing.B) {
			c := cachetest.FromYAML(b, tg.conf(b))
			var worker atomic.Int64
			var total atomic.Int64
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				key := fmt.Sprintf("bucket-%d", worker.Add(1))
				ctx := context.Background()
				n := int64(0)
				for pb.Next() {
					if err := c.Set(ctx, key, checkpoint, nil); err != nil {
						b.Error(err)
						return
					}
					n++
				}
				total.Add(n)
			})
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(total.Load())/elapsed.Seconds(), "ops/s")
		})
	}
}

var _ service.Cache // the caches are reached through service.Cache
