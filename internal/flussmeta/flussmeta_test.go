package flussmeta

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// recipe is the Bloblang form of the id that FormatMessageID documents.
const recipe = `0x${! "%08x%08x%04x%012x".format(@fluss_table_id + 1, @fluss_partition_id.or(-1) + 1, @fluss_bucket, @fluss_offset) }`

// TestFormatMessageIDMatchesRecipe: FormatMessageID gives exactly what the
// documented Bloblang recipe gives, at and beyond the edge of every field.
func TestFormatMessageIDMatchesRecipe(t *testing.T) {
	interp, err := service.NewInterpolatedString(recipe)
	if err != nil {
		t.Fatal(err)
	}
	tables := []int64{-2, -1, 0, 7, 1<<32 - 2, 1<<32 - 1, 1 << 40}
	parts := []int64{-2, -1, 0, 3, 1<<32 - 2, 1<<32 - 1}
	buckets := []int32{-1, 0, 5, 1<<16 - 1, 1 << 16}
	offsets := []int64{-1, 0, 123456, 1<<48 - 1, 1 << 48}
	n := 0
	for _, tv := range tables {
		for _, pv := range parts {
			for _, bv := range buckets {
				for _, ov := range offsets {
					m := service.NewMessage(nil)
					m.MetaSetMut(TableID, tv)
					if pv != -1 {
						m.MetaSetMut(PartitionID, pv)
					}
					m.MetaSetMut(Bucket, int64(bv))
					m.MetaSetMut(Offset, ov)
					want, err := interp.TryString(m)
					if err != nil {
						t.Fatalf("recipe on %d/%d/%d/%d: %v", tv, pv, bv, ov, err)
					}
					if got := FormatMessageID(tv, pv, bv, ov); got != want {
						t.Fatalf("FormatMessageID(%d, %d, %d, %d) = %q, the recipe gives %q", tv, pv, bv, ov, got, want)
					}
					n++
				}
			}
		}
	}
	if got := FormatMessageID(6, -1, 2, 9); got != "0x0000000700000000000200000000000"+"9" {
		t.Fatalf("FormatMessageID(6, -1, 2, 9) = %q", got)
	}
	t.Logf("%d combinations equal", n)
}

func BenchmarkFormatMessageID(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_ = FormatMessageID(12, -1, 3, int64(i))
	}
}
