package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Fixtures of the Fluss 1.0 log batch magics, built from magic-0 batches
// with offsets written out here from LogRecordBatchFormat (apache/fluss
// main) and fluss-rs 1.0.0 src/record/log_record_batch.rs, not taken from
// header.go: V1 = the V0 header + StatisticsLength (int32 at 48), the
// statistics, then the V0 records area; V2 = V1 with LeaderEpoch (int32)
// at 21, which moves the CRC to 25 and everything after it by 4.

// statsFunc returns the statistics bytes to put in the V1/V2 form of one
// magic-0 batch (nil: StatisticsLength 0).
type statsFunc func(v0 []byte) []byte

// withMagic rewrites the magic-0 batches of records (back to back; a cut-off
// tail is dropped) in the layout of magic 1 or 2, with fresh lengths and
// CRCs. epoch is the leader epoch of magic 2.
func withMagic(t testing.TB, records []byte, magic byte, stats statsFunc, epoch int32) []byte {
	t.Helper()
	le := binary.LittleEndian
	var out []byte
	for len(records) >= 48 {
		size := 12 + int(le.Uint32(records[8:]))
		if size > len(records) {
			break
		}
		v0 := records[:size]
		records = records[size:]
		if v0[12] != 0 {
			t.Fatalf("withMagic: batch of magic %d", v0[12])
		}
		var st []byte
		if stats != nil {
			st = stats(v0)
		}
		b := append([]byte(nil), v0[:21]...) // base offset, length, magic, commit timestamp
		if magic == 2 {
			b = le.AppendUint32(b, uint32(epoch))
		}
		b = append(b, v0[21:48]...) // CRC to record count
		b = le.AppendUint32(b, uint32(len(st)))
		b = append(b, st...)
		b = append(b, v0[48:]...) // change types and records
		b[12] = magic
		le.PutUint32(b[8:], uint32(len(b)-12))
		crcAt := 21
		if magic == 2 {
			crcAt = 25
		}
		le.PutUint32(b[crcAt:], crc32.Checksum(b[crcAt+4:], crc32.MakeTable(crc32.Castagnoli)))
		out = append(out, b...)
	}
	return out
}

// statsOf returns a statsFunc that decodes each batch with d and writes the
// statistics of columns cols (indices into the decoded record).
func statsOf(t testing.TB, d *Decoder, cols []int) statsFunc {
	return func(v0 []byte) []byte {
		res, err := d.Decode(v0, 0)
		if err != nil {
			t.Fatalf("statistics of a batch: %v", err)
		}
		defer res.Release()
		if len(res.Batches) == 0 {
			return nil // an empty batch: no statistics, as fluss-rs writes it
		}
		return statsBlock(t, res.Batches[0].Record, cols)
	}
}

// statsBlock writes the Fluss 1.0 statistics of columns cols of rec
// (LogRecordBatchStatisticsWriter; fluss-rs src/record/statistics.rs): the
// version byte 1, an int16 column count, the int16 column indices, the int32
// null counts, then an int32 length and an aligned row of the minima, and
// the same for the maxima; little-endian.
func statsBlock(t testing.TB, rec arrow.RecordBatch, cols []int) []byte {
	le := binary.LittleEndian
	out := []byte{1}
	out = le.AppendUint16(out, uint16(len(cols)))
	for _, c := range cols {
		out = le.AppendUint16(out, uint16(c))
	}
	mins, maxs := make([]any, len(cols)), make([]any, len(cols))
	for i, c := range cols {
		col := rec.Column(c)
		out = le.AppendUint32(out, uint32(col.NullN()))
		mins[i], maxs[i] = bounds(t, col)
	}
	for _, row := range [][]any{mins, maxs} {
		r := alignedRow(t, row)
		out = le.AppendUint32(out, uint32(len(r)))
		out = append(out, r...)
	}
	return out
}

// bounds returns the minimum and maximum of a column (nil, nil when all
// values are null), ordered as Fluss orders them.
func bounds(t testing.TB, col arrow.Array) (lo, hi any) {
	var vals []any
	for i := 0; i < col.Len(); i++ {
		if col.IsNull(i) {
			continue
		}
		switch c := col.(type) {
		case *array.Int64:
			vals = append(vals, c.Value(i))
		case *array.Int32:
			vals = append(vals, c.Value(i))
		case *array.Float64:
			vals = append(vals, c.Value(i))
		case *array.Boolean:
			vals = append(vals, c.Value(i))
		case *array.String:
			vals = append(vals, c.Value(i))
		case *array.Timestamp:
			vals = append(vals, microsTimestamp(int64(c.Value(i))))
		default:
			t.Fatalf("no statistics for %s columns in this test", col.DataType())
		}
	}
	if len(vals) == 0 {
		return nil, nil
	}
	lo, hi = vals[0], vals[0]
	for _, v := range vals[1:] {
		if less(v, lo) {
			lo = v
		}
		if less(hi, v) {
			hi = v
		}
	}
	return lo, hi
}

// microsTimestamp is a TIMESTAMP(6) value as an aligned row stores it:
// epoch milliseconds and the nanoseconds within the millisecond.
type microsTimestamp int64

func less(a, b any) bool {
	switch a := a.(type) {
	case int64:
		return a < b.(int64)
	case int32:
		return a < b.(int32)
	case float64: // Java's Double.compare: -0.0 < 0.0, NaN above everything
		bf := b.(float64)
		switch {
		case math.IsNaN(a):
			return false
		case math.IsNaN(bf):
			return true
		case a == bf:
			return math.Signbit(a) && !math.Signbit(bf)
		}
		return a < bf
	case bool:
		return !a && b.(bool)
	case string:
		return a < b.(string) // UTF-8 byte order
	case microsTimestamp:
		return a < b.(microsTimestamp)
	}
	panic("unreachable")
}

// alignedRow encodes one row in Fluss's AlignedRow (BinaryRow) format:
// null bits (8 header bits first) padded to 8-byte words, one 8-byte slot
// per field, then the variable-length part in 8-byte words. Values of 7
// bytes or less sit in their slot with 0x80|length in the slot's last byte;
// longer ones store offset<<32|length. A TIMESTAMP(6) stores its
// milliseconds in the variable part and offset<<32|nanos in the slot.
func alignedRow(t testing.TB, vals []any) []byte {
	le := binary.LittleEndian
	nullBytes := (len(vals) + 63 + 8) / 64 * 8
	b := make([]byte, nullBytes+8*len(vals))
	for i, v := range vals {
		slot := b[nullBytes+8*i:]
		switch v := v.(type) {
		case nil:
			b[(i+8)/8] |= 1 << ((i + 8) % 8)
		case int64:
			le.PutUint64(slot, uint64(v))
		case int32:
			le.PutUint32(slot, uint32(v))
		case float64:
			le.PutUint64(slot, math.Float64bits(v))
		case bool:
			if v {
				slot[0] = 1
			}
		case string:
			if len(v) <= 7 {
				copy(slot, v)
				slot[7] = 0x80 | byte(len(v))
				continue
			}
			le.PutUint64(slot, uint64(len(b))<<32|uint64(len(v)))
			b = append(b, v...)
			b = append(b, make([]byte, (8-len(v)%8)%8)...)
		case microsTimestamp:
			ms, us := int64(v)/1000, int64(v)%1000
			if us < 0 {
				ms, us = ms-1, us+1000
			}
			le.PutUint64(slot, uint64(len(b))<<32|uint64(us*1000))
			b = le.AppendUint64(b, uint64(ms))
		default:
			t.Fatalf("alignedRow: %T", v)
		}
	}
	return b
}

// decodeAll decodes records with d and returns the rows of every batch in
// one record, the batches' headers and the rows' change types.
func decodeAll(t testing.TB, d *Decoder, records []byte) (arrow.RecordBatch, []Header, []ChangeType) {
	t.Helper()
	res, err := d.Decode(records, 0)
	if err != nil {
		res.Release()
		t.Fatal(err)
	}
	defer res.Release()
	var recs []arrow.RecordBatch
	var hs []Header
	var cts []ChangeType
	for _, b := range res.Batches {
		recs = append(recs, b.Record)
		hs = append(hs, b.Header)
		for i := 0; i < b.NumRows(); i++ {
			cts = append(cts, b.ChangeType(i))
		}
	}
	if len(recs) == 0 {
		t.Fatal("no rows")
	}
	tbl := array.NewTableFromRecords(recs[0].Schema(), recs)
	defer tbl.Release()
	tr := array.NewTableReader(tbl, -1)
	defer tr.Release()
	tr.Next()
	rec := tr.RecordBatch()
	rec.Retain()
	return rec, hs, cts
}

// magicCase is one way of writing a magic-0 seed in a 1.0 magic.
type magicCase struct {
	name  string
	magic byte
	stats bool // statistics (else StatisticsLength 0, as a projected reply)
}

var magicCases = []magicCase{{"v1-stats", 1, true}, {"v1-nostats", 1, false}, {"v2-stats", 2, true}, {"v2-nostats", 2, false}}

// checkMagics decodes the V1 and V2 forms of a magic-0 seed with d and
// checks they give the V0 seed's rows and change types, and headers that
// say where the records start. stats gives the statistics of each batch.
func checkMagics(t *testing.T, d *Decoder, v0 []byte, stats statsFunc) {
	t.Helper()
	want, wantHs, wantCTs := decodeAll(t, d, v0)
	defer want.Release()
	for _, c := range magicCases {
		if c.stats && stats == nil {
			continue
		}
		st := stats
		if !c.stats {
			st = nil
		}
		wire := withMagic(t, v0, c.magic, st, 42)
		got, hs, ct := decodeAll(t, d, wire)
		same := sameRecords(want, got)
		got.Release()
		if !same {
			t.Fatalf("%s: other rows than the V0 batches", c.name)
		}
		if !slices.Equal(ct, wantCTs) {
			t.Fatalf("%s: change types %v, want %v", c.name, ct, wantCTs)
		}
		for i, h := range hs {
			w := wantHs[i]
			epoch := NoLeaderEpoch
			if c.magic == 2 {
				epoch = 42
			}
			if h.Magic != int8(c.magic) || h.LeaderEpoch != epoch || (h.StatisticsLength > 0) != c.stats ||
				h.RecordsOffset() != 48+4*int(c.magic)+int(h.StatisticsLength) || h.Size() != w.Size()+int64(h.RecordsOffset()-48) ||
				h.SchemaID != w.SchemaID || h.Attributes != w.Attributes || h.RecordCount != w.RecordCount ||
				h.LastOffsetDelta != w.LastOffsetDelta || h.WriterID != w.WriterID || h.BatchSequence != w.BatchSequence ||
				h.CommitTimestamp != w.CommitTimestamp || h.BaseOffset != w.BaseOffset {
				t.Fatalf("%s: batch %d header %+v\nV0 header %+v", c.name, i, h, w)
			}
		}
	}
}

// allTypesStatsColumns are the columns of the all-types seeds given
// statistics: id BIGINT, c_boolean, c_int, c_double, c_string.
var allTypesStatsColumns = []int{0, 1, 4, 7, 13}

// TestMagicsArrow: the V1 and V2 forms of ARROW batches (append-only and
// PK changelog, compressed and not, the Java client's and ours) decode to
// the rows of the V0 batches they were built from, with statistics and
// without; so does a server-projected batch (magic 1, StatisticsLength 0).
func TestMagicsArrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := testSchema()
	rec := buildRecord(t, mem, s, 40, 100, 5)
	defer rec.Release()
	gen := mustEncode(t, rec, CompressionLZ4Frame, 100, nil, mem)
	gen = append(gen, mustEncode(t, rec, CompressionZSTD, 140, randomChangeTypes(40, 3), mem)...)
	d, _ := NewDecoder(fixedLookup(s), WithAllocator(mem))
	t.Run("generated", func(t *testing.T) { checkMagics(t, d, gen, statsOf(t, d, []int{0, 1, 4, 6, 7})) })

	all := allTypesSchema(t)
	cluster, _ := NewDecoder(fixedLookup(all), WithAllocator(mem))
	for _, name := range []string{"cluster-log-none.bin", "cluster-log-zstd.bin", "cluster-pk-changelog.bin"} {
		t.Run(name, func(t *testing.T) {
			checkMagics(t, cluster, readSeed(t, name), statsOf(t, cluster, allTypesStatsColumns))
		})
	}
	projected, _ := NewDecoder(fixedLookup(all), WithAllocator(mem),
		WithProjection([]int{56, 13, 0, 54}), WithProjectionPushedDown(true))
	t.Run("projected", func(t *testing.T) {
		checkMagics(t, projected, readSeed(t, "cluster-log-zstd-projected.bin"), nil)
	})
	owned, _ := NewDecoder(fixedLookup(all), WithAllocator(dirtyAllocator{mem}), WithOwnedBuffers(true), WithAlignedBuffers(true))
	t.Run("owned", func(t *testing.T) {
		checkMagics(t, owned, readSeed(t, "cluster-pk-changelog.bin"), statsOf(t, cluster, allTypesStatsColumns))
	})
}

// TestMagicsRowFormats: the V1 and V2 forms of the Java client's COMPACTED
// and INDEXED batches (log and PK changelog) decode to the same rows.
func TestMagicsRowFormats(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, name := range []string{"cluster-log-compacted.bin", "cluster-log-indexed.bin", "cluster-pk-changelog-compacted.bin"} {
		t.Run(name, func(t *testing.T) {
			d, err := NewDecoder(fixedLookup(allTypesSchema(t)), WithAllocator(mem), WithLogFormat(seedFormat(name), allTypesTypes(t)))
			if err != nil {
				t.Fatal(err)
			}
			checkMagics(t, d, readSeed(t, name), statsOf(t, d, allTypesStatsColumns))
			// Rows before the fetch offset are skipped in V2 too.
			v2 := withMagic(t, readSeed(t, name), 2, statsOf(t, d, allTypesStatsColumns), 7)
			res, err := d.Decode(v2, 3)
			if err != nil || len(res.Batches) == 0 || res.Batches[0].FirstOffset != 3 {
				t.Fatalf("from offset 3: %v", err)
			}
			res.Release()
		})
	}
}

// rustColumns is the schema of the batches the fluss-rs 1.0.0 writer made
// (testdata/rust/README.md).
const rustColumns = "id BIGINT, name STRING, score DOUBLE, flag BOOLEAN, small INT, amount DECIMAL(10, 2), " +
	"day DATE, ts TIMESTAMP(6), payload BYTES"

// TestMagicRustWriter decodes batches the fluss-rs 1.0.0 writer built
// (magic 1 with statistics of all or some columns, magic 1 with
// StatisticsLength 0, magic 0, mixed in one buffer) and checks they hold
// the rows of its magic-0 batch, and that its statistics are byte for byte
// what statsBlock writes for the same rows.
func TestMagicRustWriter(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := columnsSchema(t, rustColumns)
	d, _ := NewDecoder(fixedLookup(s), WithAllocator(mem))
	want, _, _ := decodeAll(t, d, readSeed(t, "rust/rs-v0-none.bin"))
	defer want.Release()
	for _, tc := range []struct {
		file  string
		stats []int // the statistics columns, nil: StatisticsLength 0
	}{
		{"rs-v1-stats-none.bin", []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"rs-v1-stats-zstd.bin", []int{7, 1, 0}},
		{"rs-v1-nostats-lz4.bin", nil},
	} {
		wire := readSeed(t, "rust/"+tc.file)
		got, hs, _ := decodeAll(t, d, wire)
		requireRecordsEqual(t, want, got)
		got.Release()
		h := hs[0]
		if h.Magic != 1 || h.RecordsOffset() != 52+int(h.StatisticsLength) || (h.StatisticsLength > 0) != (tc.stats != nil) {
			t.Fatalf("%s: header %+v", tc.file, h)
		}
		st := wire[52:h.RecordsOffset()]
		if tc.stats != nil && (st[0] != 1 || int(binary.LittleEndian.Uint16(st[1:])) != len(tc.stats)) {
			t.Fatalf("%s: statistics start % x", tc.file, st[:3])
		}
		if slices.Equal(tc.stats, []int{7, 1, 0}) {
			if ours := statsBlock(t, want, tc.stats); !bytes.Equal(ours, st) {
				t.Fatalf("%s: statistics\nfluss-rs % x\nours     % x", tc.file, st, ours)
			}
		}
	}
	// Three batches at offsets 0, 5 and 10: V1 with statistics, V0, V1 with
	// the statistics of score and small.
	res, err := d.Decode(readSeed(t, "rust/rs-multi.bin"), 7)
	if err != nil || len(res.Batches) != 2 || res.NextOffset != 15 || res.Batches[0].FirstOffset != 7 ||
		res.Batches[0].Magic != 0 || res.Batches[1].Magic != 1 || res.Batches[1].NumRows() != 5 {
		t.Fatalf("multi from 7: %v, next %d", err, res.NextOffset)
	}
	res.Release()
	var raws []*RawBatch
	for it := NewBatchIterator(readSeed(t, "rust/rs-multi.bin")); it.Next(); {
		raw := *it.Batch()
		raws = append(raws, &raw)
	}
	if len(raws) != 3 {
		t.Fatalf("multi: %d batches", len(raws))
	}
	b, err := d.DecodeBatch(raws[2], 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if st, ours := raws[2].Bytes[52:raws[2].RecordsOffset()], statsBlock(t, b.Record, []int{2, 4}); !bytes.Equal(ours, st) {
		t.Fatalf("multi batch 3: statistics\nfluss-rs % x\nours     % x", st, ours)
	}
}

// TestMagicCorrupt: bad statistics lengths, a V2 CRC mismatch, magic 3 and
// a batch in the pre-1.0 magic-1 layout give named errors; a V2 header cut
// off by the fetch size is a truncated tail, not an error.
func TestMagicCorrupt(t *testing.T) {
	s := testSchema()
	rec := buildRecord(t, memory.DefaultAllocator, s, 3, 0, 1)
	defer rec.Release()
	v0 := mustEncode(t, rec, CompressionNone, 0, nil, nil)
	d, _ := NewDecoder(fixedLookup(s))
	stats := func([]byte) []byte { return []byte{1, 0, 0} }
	le := binary.LittleEndian
	for _, tc := range []struct {
		name  string
		magic byte
		edit  func(b []byte)
		is    error
		say   string
	}{
		{"negative stats length", 1, func(b []byte) { le.PutUint32(b[48:], 0xfffffff0) }, ErrInvalidBatch,
			"batch at offset 0 (magic 1): statistics length -16 (byte 48)"},
		{"stats length beyond the batch", 2, func(b []byte) { le.PutUint32(b[52:], uint32(len(b))) }, ErrInvalidBatch,
			"(magic 2): statistics length"},
		{"V2 CRC", 2, func(b []byte) { b[len(b)-1] ^= 1 }, ErrCorruptBatch, "(magic 2) stores"},
		{"V2 CRC field", 2, func(b []byte) { b[25] ^= 1 }, ErrCorruptBatch, "at byte 25, bytes 29 to"},
		{"V1 statistics byte", 1, func(b []byte) { b[53] ^= 1 }, ErrCorruptBatch, "(magic 1) stores"},
		{"magic 3", 1, func(b []byte) { b[12] = 3 }, ErrUnsupportedMagic, "magic 3 at offset 0"},
		{"magic -1", 1, func(b []byte) { b[12] = 0xff }, ErrUnsupportedMagic, "magic -1 at offset 0"},
		{"length below the V2 header", 2, func(b []byte) { le.PutUint32(b[8:], 40) }, ErrInvalidBatch,
			"(magic 2) declares length 40, less than its 56-byte header"},
	} {
		wire := withMagic(t, v0, tc.magic, stats, 1)
		tc.edit(wire)
		res, err := d.Decode(wire, 0)
		res.Release()
		if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.say) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}

	// The 0.7-0.9.1 magic 1: V0 with a leader epoch at 21 (CRC at 25 over
	// the bytes from 29). Read with the 1.0 layout, a non-idempotent
	// writer's batch sequence (-1) is a record count; an idempotent one's
	// gets as far as the CRC check.
	for _, seq := range []int32{NoBatchSequence, 5} {
		w, err := EncodeLogBatch(rec, LogBatchOptions{SchemaID: 1, Writer: &WriterState{WriterID: 9, BatchSequence: seq}})
		if err != nil {
			t.Fatal(err)
		}
		old := append(append(bytes.Clone(w[:21]), 0, 0, 0, 0), w[21:]...)
		old[12] = 1
		le.PutUint32(old[8:], uint32(len(old)-12))
		le.PutUint32(old[25:], crc32c(old[29:]))
		want := ErrInvalidBatch
		if seq >= 0 {
			want = ErrCorruptBatch
		}
		_, err = d.Decode(old, 0)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), "magic-1 layout of Fluss 0.7 to 0.9") {
			t.Errorf("old magic 1, batch sequence %d: %v", seq, err)
		}
	}

	// A V2 batch followed by the first 50 bytes of another: more than a V0
	// header, less than a V2 one.
	v2 := withMagic(t, v0, 2, stats, 1)
	res, err := d.Decode(append(bytes.Clone(v2), v2[:50]...), 0)
	if err != nil || len(res.Batches) != 1 || res.TruncatedBytes != 50 {
		t.Fatalf("cut V2 header: %v, %d batches, %d truncated", err, len(res.Batches), res.TruncatedBytes)
	}
	res.Release()

	// A hand-made RawBatch whose header does not fit its bytes.
	raw := &RawBatch{Header: Header{Magic: 2, StatisticsLength: -4, Length: int32(len(v2) - 12)}, Bytes: v2}
	if _, err := d.DecodeBatch(raw, 0); !errors.Is(err, ErrInvalidBatch) || !strings.Contains(err.Error(), "magic 2") {
		t.Errorf("negative statistics in a RawBatch: %v", err)
	}
	raw = &RawBatch{Header: Header{Magic: 7, Length: int32(len(v2) - 12)}, Bytes: v2}
	if _, err := d.DecodeBatch(raw, 0); !errors.Is(err, ErrUnsupportedMagic) {
		t.Errorf("magic 7 in a RawBatch: %v", err)
	}
}
