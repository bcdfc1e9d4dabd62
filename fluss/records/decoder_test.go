package records

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

var allCompressions = []Compression{CompressionNone, CompressionLZ4Frame, CompressionZSTD}

func TestChangeTypeString(t *testing.T) {
	want := map[ChangeType]string{AppendOnly: "+A", Insert: "+I", UpdateBefore: "-U", UpdateAfter: "+U", Delete: "-D", 9: "ChangeType(9)"}
	for c, s := range want {
		if c.String() != s {
			t.Errorf("%d.String() = %q, want %q", c, c.String(), s)
		}
	}
}

func TestParseCompression(t *testing.T) {
	for in, want := range map[string]Compression{"none": CompressionNone, "LZ4_FRAME": CompressionLZ4Frame, "zstd": CompressionZSTD, "": CompressionZSTD} {
		got, err := ParseCompression(in)
		if err != nil || got != want {
			t.Errorf("ParseCompression(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseCompression("snappy"); err == nil {
		t.Error("ParseCompression(snappy) succeeded")
	}
}

// TestRoundTrip encodes several batches per compression, with and without a
// change-type vector, concatenates them as a fetch response does and decodes
// them on a checked allocator.
func TestRoundTrip(t *testing.T) {
	s := testSchema()
	for _, c := range allCompressions {
		for _, withCT := range []bool{false, true} {
			for _, align := range []bool{false, true} {
				name := fmt.Sprintf("%v/changetypes=%v/align=%v", c, withCT, align)
				t.Run(name, func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
					defer mem.AssertSize(t, 0)
					var wire []byte
					var want []arrow.RecordBatch
					var wantCT [][]ChangeType
					base := int64(0)
					for k, n := range []int{1, 37, 300} {
						rec := buildRecord(t, mem, s, n, base, uint64(k))
						defer rec.Release()
						var cts []ChangeType
						if withCT {
							cts = randomChangeTypes(n, uint64(k))
						}
						wire = append(wire, mustEncode(t, rec, c, base, cts, mem)...)
						want = append(want, rec)
						wantCT = append(wantCT, cts)
						base += int64(n)
					}
					res := mustDecode(t, s, wire, WithAllocator(mem), WithAlignedBuffers(align))
					defer res.Release()
					if len(res.Batches) != len(want) {
						t.Fatalf("got %d batches, want %d", len(res.Batches), len(want))
					}
					if res.NextOffset != base || res.TruncatedBytes != 0 {
						t.Fatalf("next offset %d truncated %d, want %d and 0", res.NextOffset, res.TruncatedBytes, base)
					}
					off := int64(0)
					for i, b := range res.Batches {
						requireRecordsEqual(t, want[i], b.Record)
						if b.FirstOffset != off || b.BaseOffset != off || b.CommitTimestamp != 1700000000000+off || b.SchemaID != 1 {
							t.Fatalf("batch %d header %+v", i, b.Header)
						}
						if b.WriterID != NoWriterID || b.BatchSequence != NoBatchSequence {
							t.Fatalf("batch %d writer fields %d %d", i, b.WriterID, b.BatchSequence)
						}
						if b.AppendOnly() == withCT {
							t.Fatalf("batch %d attributes %#x", i, b.Attributes)
						}
						for r := 0; r < b.NumRows(); r++ {
							wantC := AppendOnly
							if withCT {
								wantC = wantCT[i][r]
							}
							if b.ChangeType(r) != wantC {
								t.Fatalf("batch %d row %d change type %v, want %v", i, r, b.ChangeType(r), wantC)
							}
						}
						off = b.NextOffset()
					}
				})
			}
		}
	}
}

// mustDecode decodes wire, batches of schema s, from offset 0.
func mustDecode(t *testing.T, s *arrow.Schema, wire []byte, opts ...Option) Result {
	t.Helper()
	d, err := NewDecoder(fixedLookup(s), opts...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Decode(wire, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestZeroCopy checks that uncompressed buffers point into the input.
func TestZeroCopy(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
	rec := buildRecord(t, memory.DefaultAllocator, s, 100, 0, 1)
	defer rec.Release()
	wire := mustEncode(t, rec, CompressionNone, 0, nil, nil)
	d, _ := NewDecoder(fixedLookup(s), WithAlignedBuffers(false))
	res, err := d.Decode(wire, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Release()
	vals := res.Batches[0].Record.Column(0).Data().Buffers()[1].Bytes()
	lo, hi := &wire[0], &wire[len(wire)-1]
	p := &vals[0]
	if uintptrOf(p) < uintptrOf(lo) || uintptrOf(p) > uintptrOf(hi) {
		t.Fatal("values buffer was copied")
	}
}

func TestFetchOffsetSkipsRows(t *testing.T) {
	s := testSchema()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := buildRecord(t, mem, s, 10, 100, 3)
	defer rec.Release()
	cts := randomChangeTypes(10, 3)
	for _, c := range allCompressions {
		wire := mustEncode(t, rec, c, 100, cts, mem)
		d, _ := NewDecoder(fixedLookup(s), WithAllocator(mem))
		res, err := d.Decode(wire, 105)
		if err != nil {
			t.Fatal(err)
		}
		b := res.Batches[0]
		if b.FirstOffset != 105 || b.NumRows() != 5 || b.Offset(0) != 105 || res.NextOffset != 110 {
			t.Fatalf("%v: first %d rows %d next %d", c, b.FirstOffset, b.NumRows(), res.NextOffset)
		}
		want := rec.NewSlice(5, 10)
		requireRecordsEqual(t, want, b.Record)
		want.Release()
		for i := 0; i < 5; i++ {
			if b.ChangeType(i) != cts[5+i] {
				t.Fatalf("row %d change type %v want %v", i, b.ChangeType(i), cts[5+i])
			}
		}
		res.Release()
		// A fetch offset past the batch drops it but still advances.
		res, err = d.Decode(wire, 110)
		if err != nil || len(res.Batches) != 0 || res.NextOffset != 110 {
			t.Fatalf("past batch: %v %d %d", err, len(res.Batches), res.NextOffset)
		}
	}
}

func TestTruncatedTrailingBatch(t *testing.T) {
	s := testSchema()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var wire []byte
	var ends []int
	for k := 0; k < 3; k++ {
		rec := buildRecord(t, mem, s, 20, int64(20*k), uint64(k))
		wire = append(wire, mustEncode(t, rec, CompressionZSTD, int64(20*k), nil, mem)...)
		ends = append(ends, len(wire))
		rec.Release()
	}
	d, _ := NewDecoder(fixedLookup(s), WithAllocator(mem))
	// Every cut near the batch's edges, a sample in between (fast under -race).
	for cut := ends[1]; cut < ends[2]; cut++ {
		if cut > ends[1]+64 && cut < ends[2]-64 && (cut-ends[1])%37 != 0 {
			continue
		}
		res, err := d.Decode(wire[:cut], 0)
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if len(res.Batches) != 2 || res.NextOffset != 40 || res.TruncatedBytes != cut-ends[1] {
			t.Fatalf("cut at %d: %d batches, next %d, truncated %d", cut, len(res.Batches), res.NextOffset, res.TruncatedBytes)
		}
		res.Release()
	}
}

func TestEmptyBatchAdvances(t *testing.T) {
	s := testSchema()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	empty := buildRecord(t, mem, s, 0, 0, 1)
	defer empty.Release()
	one := buildRecord(t, mem, s, 1, 8, 2)
	defer one.Release()
	wire := mustEncode(t, empty, CompressionZSTD, 7, []ChangeType{}, mem)
	if len(wire) != HeaderSize {
		t.Fatalf("empty batch is %d bytes, want %d", len(wire), HeaderSize)
	}
	wire = append(wire, mustEncode(t, one, CompressionZSTD, 8, []ChangeType{Insert}, mem)...)
	d, _ := NewDecoder(fixedLookup(s), WithAllocator(mem))
	res, err := d.Decode(wire[:HeaderSize], 7)
	if err != nil || len(res.Batches) != 0 || res.NextOffset != 8 {
		t.Fatalf("empty alone: %v %d %d", err, len(res.Batches), res.NextOffset)
	}
	res, err = d.Decode(wire, 7)
	if err != nil || len(res.Batches) != 1 || res.NextOffset != 9 || res.Batches[0].FirstOffset != 8 {
		t.Fatalf("empty then one: %v %d %d", err, len(res.Batches), res.NextOffset)
	}
	res.Release()
}

func TestBadMagic(t *testing.T) {
	s := testSchema()
	rec := buildRecord(t, memory.DefaultAllocator, s, 3, 0, 1)
	defer rec.Release()
	wire := mustEncode(t, rec, CompressionNone, 0, nil, nil)
	wire[offMagic] = 3
	d, _ := NewDecoder(fixedLookup(s))
	_, err := d.Decode(wire, 0)
	if !errors.Is(err, ErrUnsupportedMagic) || !strings.Contains(err.Error(), "magic 3") {
		t.Fatalf("err = %v", err)
	}
}

func TestBadCRC(t *testing.T) {
	s := testSchema()
	rec := buildRecord(t, memory.DefaultAllocator, s, 3, 0, 1)
	defer rec.Release()
	good := mustEncode(t, rec, CompressionNone, 0, nil, nil)
	for _, pos := range []int{offCRC, offSchemaID + 1, offRecordCount, HeaderSize + 20, len(good) - 1} {
		wire := bytes.Clone(good)
		wire[pos] ^= 0x10
		d, _ := NewDecoder(fixedLookup(s))
		res, err := d.Decode(append(bytes.Clone(good), wire...), 0)
		if !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("byte %d flipped: err = %v", pos, err)
		}
		// The good batch before the corrupt one is still returned.
		if len(res.Batches) != 1 || res.NextOffset != 3 {
			t.Fatalf("byte %d flipped: %d batches, next %d", pos, len(res.Batches), res.NextOffset)
		}
		res.Release()
	}
	// Without the check a CRC-only corruption decodes.
	wire := bytes.Clone(good)
	wire[offCRC] ^= 1
	d, _ := NewDecoder(fixedLookup(s), WithCRCCheck(false))
	res, err := d.Decode(wire, 0)
	if err != nil {
		t.Fatal(err)
	}
	res.Release()
}

// TestProjection covers both the server-projected body (only the sorted
// projected columns, CRC not valid) and local projection of full batches;
// the output follows the requested order.
func TestProjection(t *testing.T) {
	s := testSchema()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	proj := []int{18, 7, 0, 17}
	rec := buildRecord(t, mem, s, 50, 0, 4)
	defer rec.Release()
	want := selectColumns(t, rec, proj)
	defer want.Release()
	sorted := []int{0, 7, 17, 18}
	if got := ServerProjection(proj); fmt.Sprint(got) != fmt.Sprint(sorted) {
		t.Fatalf("ServerProjection = %v", got)
	}
	for _, c := range allCompressions {
		// What the server sends: a body with the sorted columns, CRC left as it was.
		serverRec := selectColumns(t, rec, sorted)
		pushed := mustEncode(t, serverRec, c, 0, nil, mem)
		serverRec.Release()
		pushed[offCRC] ^= 0xff
		d, err := NewDecoder(fixedLookup(s), WithAllocator(mem), WithProjection(proj), WithProjectionPushedDown(true))
		if err != nil {
			t.Fatal(err)
		}
		res, err := d.Decode(pushed, 0)
		if err != nil {
			t.Fatalf("%v pushed down: %v", c, err)
		}
		requireRecordsEqual(t, want, res.Batches[0].Record)
		res.Release()

		full := mustEncode(t, rec, c, 0, nil, mem)
		d, _ = NewDecoder(fixedLookup(s), WithAllocator(mem), WithProjection(proj))
		res, err = d.Decode(full, 0)
		if err != nil {
			t.Fatalf("%v local: %v", c, err)
		}
		requireRecordsEqual(t, want, res.Batches[0].Record)
		res.Release()

		// A full body handed to a decoder expecting a projected one fails clearly.
		d, _ = NewDecoder(fixedLookup(s), WithAllocator(mem), WithProjection(proj), WithProjectionPushedDown(true))
		if _, err := d.Decode(full, 0); !errors.Is(err, ErrInvalidBatch) {
			t.Fatalf("%v full body as projected: %v", c, err)
		}
	}
	d, _ := NewDecoder(fixedLookup(s), WithProjection([]int{99}))
	wire := mustEncode(t, rec, CompressionNone, 0, nil, mem)
	if _, err := d.Decode(wire, 0); err == nil || !strings.Contains(err.Error(), "99") {
		t.Fatalf("out of range projection: %v", err)
	}
	if _, err := NewDecoder(fixedLookup(s), WithProjection([]int{1, 1})); err == nil {
		t.Fatal("duplicate projection accepted")
	}
}

func selectColumns(t testing.TB, rec arrow.RecordBatch, cols []int) arrow.RecordBatch {
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		fields[i] = rec.Schema().Field(c)
		arrs[i] = rec.Column(c)
	}
	return arrowNewRecord(arrow.NewSchema(fields, nil), arrs, rec.NumRows())
}

// TestSchemaPerBatch decodes batches written under two schema ids (a column
// added in between) from one response.
func TestSchemaPerBatch(t *testing.T) {
	v1 := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	v2 := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, {Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r1 := buildRecord(t, mem, v1, 4, 0, 1)
	defer r1.Release()
	r2 := buildRecord(t, mem, v2, 4, 0, 2)
	defer r2.Release()
	b1, _ := EncodeLogBatch(r1, LogBatchOptions{SchemaID: 1, Compression: CompressionZSTD, Allocator: mem})
	b2, _ := EncodeLogBatch(r2, LogBatchOptions{SchemaID: 2, Compression: CompressionZSTD, BaseOffset: 4, Allocator: mem})
	lookups := 0
	d, _ := NewDecoder(func(id int16) (*arrow.Schema, error) {
		lookups++
		switch id {
		case 1:
			return v1, nil
		case 2:
			return v2, nil
		}
		return nil, fmt.Errorf("no schema %d", id)
	}, WithAllocator(mem))
	for i := 0; i < 2; i++ {
		res, err := d.Decode(append(bytes.Clone(b1), b2...), 0)
		if err != nil {
			t.Fatal(err)
		}
		requireRecordsEqual(t, r1, res.Batches[0].Record)
		requireRecordsEqual(t, r2, res.Batches[1].Record)
		res.Release()
	}
	if lookups != 2 {
		t.Fatalf("%d schema lookups, want 2 (cached)", lookups)
	}
	b3, _ := EncodeLogBatch(r1, LogBatchOptions{SchemaID: 3, Allocator: mem})
	if _, err := d.Decode(b3, 0); err == nil || !strings.Contains(err.Error(), "schema id 3") {
		t.Fatalf("unknown schema: %v", err)
	}
}

// TestHugeDeclaredLengths rewrites sizes in valid batches to absurd values:
// the decoder must fail (or stop) without allocating them.
func TestHugeDeclaredLengths(t *testing.T) {
	s := testSchema()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := buildRecord(t, mem, s, 20, 0, 5)
	defer rec.Release()
	d, _ := NewDecoder(fixedLookup(s), WithAllocator(mem), WithMaxBatchBytes(1<<20))
	baseline := mem.CurrentAlloc()
	check := func(name string, wire []byte, fix bool, want error) {
		t.Helper()
		if fix {
			binary.LittleEndian.PutUint32(wire[offCRC:], crc32c(wire[offSchemaID:]))
		}
		res, err := d.Decode(wire, 0)
		res.Release()
		if want == nil {
			if err != nil || res.TruncatedBytes == 0 {
				t.Fatalf("%s: err %v truncated %d, want a truncated tail", name, err, res.TruncatedBytes)
			}
		} else if !errors.Is(err, want) {
			t.Fatalf("%s: err = %v, want %v", name, err, want)
		}
		if mem.CurrentAlloc() != baseline {
			t.Fatalf("%s: %d bytes still allocated", name, mem.CurrentAlloc()-baseline)
		}
	}
	for _, c := range allCompressions {
		good := mustEncode(t, rec, c, 0, nil, mem)
		w := bytes.Clone(good)
		binary.LittleEndian.PutUint32(w[offLength:], 1<<31-1)
		check(c.String()+" batch length", w, false, nil)

		w = bytes.Clone(good)
		binary.LittleEndian.PutUint32(w[offRecordCount:], 1<<31-1)
		check(c.String()+" record count", w, true, ErrInvalidBatch)

		w = bytes.Clone(good)
		binary.LittleEndian.PutUint32(w[HeaderSize+4:], 1<<31-1)
		check(c.String()+" metadata length", w, true, ErrInvalidBatch)

		meta := metaOf(t, good)
		w = bytes.Clone(good)
		binary.LittleEndian.PutUint64(w[meta.bodyLengthAt:], 1<<62)
		check(c.String()+" body length", w, true, ErrInvalidBatch)

		w = bytes.Clone(good)
		binary.LittleEndian.PutUint64(w[meta.firstNodeAt:], 1<<40)
		check(c.String()+" node length", w, true, ErrInvalidBatch)

		w = bytes.Clone(good)
		binary.LittleEndian.PutUint64(w[meta.firstBufferAt+8:], 1<<50)
		check(c.String()+" buffer length", w, true, ErrInvalidBatch)

		if c != CompressionNone {
			w = bytes.Clone(good)
			binary.LittleEndian.PutUint64(w[meta.firstDataAt:], 1<<40)
			check(c.String()+" uncompressed length", w, true, ErrTooLarge)
			w = bytes.Clone(good)
			binary.LittleEndian.PutUint64(w[meta.firstDataAt:], 1<<19)
			check(c.String()+" implausible ratio", w, true, ErrInvalidBatch)
		}
	}
}

type metaPositions struct{ bodyLengthAt, firstNodeAt, firstBufferAt, firstDataAt int }

// metaOf locates fields of the Arrow metadata of an append-only batch (absolute positions).
func metaOf(t testing.TB, batch []byte) metaPositions {
	t.Helper()
	metaStart := HeaderSize + 8
	metaLen := int(binary.LittleEndian.Uint32(batch[HeaderSize+4:]))
	m, err := parseRecordBatchMeta(batch[metaStart : metaStart+metaLen])
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := fbRoot(m.buf)
	var p metaPositions
	p.bodyLengthAt = metaStart + msg.field(fbMessageBodyLength)
	p.firstNodeAt = metaStart + m.nodesAt
	p.firstBufferAt = metaStart + m.buffersAt
	// The first buffer with data (the id column has no validity bitmap).
	for i := 0; i < m.nBuffers; i++ {
		if b := m.buffer(i); b.length > 0 {
			p.firstDataAt = metaStart + metaLen + int(b.offset)
			break
		}
	}
	return p
}

func TestConcurrentDecode(t *testing.T) {
	s := testSchema()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := buildRecord(t, mem, s, 200, 0, 6)
	defer rec.Release()
	var wire []byte
	for _, c := range allCompressions {
		wire = append(wire, mustEncode(t, rec, c, int64(len(wire)), nil, mem)...)
	}
	d, _ := NewDecoder(fixedLookup(s), WithAllocator(mem))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				res, err := d.Decode(wire, 0)
				if err != nil {
					errs <- err
					return
				}
				if len(res.Batches) != 3 {
					errs <- fmt.Errorf("%d batches", len(res.Batches))
				}
				res.Release()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestIteratorErrors(t *testing.T) {
	// A complete header with a bad length stops the iteration with an error.
	h := make([]byte, HeaderSize)
	putHeader(h, &Header{Length: 10})
	it := NewBatchIterator(h)
	if it.Next() || !errors.Is(it.Err(), ErrInvalidBatch) {
		t.Fatalf("short length: %v", it.Err())
	}
	// Fewer than 48 bytes is a truncated tail, not an error.
	it = NewBatchIterator(h[:20])
	if it.Next() || it.Err() != nil || it.Truncated() != 20 {
		t.Fatalf("short buffer: %v %d", it.Err(), it.Truncated())
	}
}

// dirtyAllocator hands out memory filled with 0xAA from AllocateUninit, as
// a recycling allocator may: the decoder must overwrite all of it.
type dirtyAllocator struct{ *memory.CheckedAllocator }

func (a dirtyAllocator) AllocateUninit(n int) []byte {
	b := a.Allocate(n)
	if len(b) > 0 {
		b[0] = 0xAA
		for k := 1; k < len(b); k *= 2 {
			copy(b[k:], b[:k]) // not a loop per byte: fuzzing instruments those
		}
	}
	return b
}

// TestOwnedBuffers checks that with WithOwnedBuffers a decoded batch does
// not change when its input is overwritten (buffers stored uncompressed and
// the change-type vector are copied), for every compression, and that
// memory from AllocateUninit is overwritten whole.
func TestOwnedBuffers(t *testing.T) {
	s := testSchema()
	for _, c := range allCompressions {
		for _, withCT := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/changetypes=%v", c, withCT), func(t *testing.T) {
				checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer checked.AssertSize(t, 0)
				rec := buildRecord(t, memory.DefaultAllocator, s, 300, 0, 7)
				defer rec.Release()
				var cts []ChangeType
				if withCT {
					cts = randomChangeTypes(300, 7)
				}
				wire := mustEncode(t, rec, c, 0, cts, nil)
				res := mustDecode(t, s, wire, WithAllocator(dirtyAllocator{checked}), WithAlignedBuffers(false), WithOwnedBuffers(true))
				defer res.Release()
				for i := range wire {
					wire[i] = 0xFF
				}
				b := res.Batches[0]
				requireRecordsEqual(t, rec, b.Record)
				for r := 0; r < b.NumRows(); r++ {
					if withCT && b.ChangeType(r) != cts[r] {
						t.Fatalf("row %d change type %v, want %v", r, b.ChangeType(r), cts[r])
					}
				}
			})
		}
	}
}
