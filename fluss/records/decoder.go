package records

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SchemaLookup returns the Arrow schema of the rows a table wrote under
// schemaID, all top-level columns in table order (fluss/types builds it with
// (*types.Schema).ArrowSchema).
type SchemaLookup func(schemaID int16) (*arrow.Schema, error)

// DefaultMaxBatchBytes is the default limit on one batch's declared Arrow
// metadata, body and decompressed sizes.
const DefaultMaxBatchBytes = 256 << 20

type config struct {
	mem        memory.Allocator
	projection []int
	pushedDown bool
	maxBytes   int64
	checkCRC   bool
	align      bool
	owned      bool
	format     LogFormat
	types      TypeLookup
	// valueLayout is the KV value layout (ValueDecoder only).
	valueLayout KVValueLayout
}

// Option configures a Decoder.
type Option func(*config)

// WithAllocator sets the allocator for decompressed buffers and copies.
// Default: memory.DefaultAllocator.
func WithAllocator(mem memory.Allocator) Option { return func(c *config) { c.mem = mem } }

// WithProjection keeps only the given top-level columns (indices into each
// batch's schema), in the given order. Default: all columns.
func WithProjection(columns []int) Option {
	return func(c *config) { c.projection = slices.Clone(columns) }
}

// WithProjectionPushedDown declares that the server already applied the
// projection (FetchLog with projection_pushdown_enabled and
// ServerProjection(columns)): bodies hold only those columns in ascending
// order and the CRC is not checked, as projection invalidates it. Without it
// (the default, and always for remote log segments) the projection is
// applied locally to full batches.
func WithProjectionPushedDown(pushed bool) Option {
	return func(c *config) { c.pushedDown = pushed }
}

// WithMaxBatchBytes limits the declared sizes of one batch: its Arrow
// metadata and body, and the sum of its decompressed buffers. Larger
// declarations fail with ErrTooLarge before anything is allocated. For the
// row formats it also bounds the Arrow arrays built from one batch (values
// and variable-length bytes; a batch needing more fails with ErrTooLarge).
// Default: DefaultMaxBatchBytes.
func WithMaxBatchBytes(n int64) Option { return func(c *config) { c.maxBytes = n } }

// WithCRCCheck turns the CRC-32C check of unprojected batches on or off.
// Default: on.
func WithCRCCheck(check bool) Option { return func(c *config) { c.checkCRC = check } }

// WithAlignedBuffers makes the decoder copy an Arrow body whose start is not
// 8-byte aligned (the change-type vector and batch concatenation leave most
// bodies unaligned) into an aligned allocation. Default: only on CPUs that
// need aligned loads; amd64, arm64, 386, ppc64(le) and s390x read unaligned
// buffers directly, without a copy.
func WithAlignedBuffers(align bool) Option { return func(c *config) { c.align = align } }

// WithOwnedBuffers makes every batch the decoder returns independent of the
// bytes it was decoded from: Arrow buffers stored uncompressed and the
// change-type vector are copied (into the allocator's memory, respectively
// a new slice) instead of referring to the input, so the caller may reuse
// the input once DecodeBatch returns. Compressed buffers are decompressed
// into the allocator's memory either way. Default: off (uncompressed
// buffers are zero-copy slices of the input).
func WithOwnedBuffers(owned bool) Option { return func(c *config) { c.owned = owned } }

// ServerProjection returns the projected_fields to send in a FetchLog
// request for a projection in output order: sorted and without duplicates.
func ServerProjection(columns []int) []int32 {
	out := make([]int32, 0, len(columns))
	for _, c := range columns {
		out = append(out, int32(c))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Decoder decodes Fluss log batches into Arrow records. It is safe for
// concurrent use; the schema of each schema id is looked up once.
type Decoder struct {
	cfg    config
	lookup SchemaLookup

	mu      sync.Mutex
	schemas map[int16]*schemaPlan
}

// schemaPlan says how to load batches of one schema id.
type schemaPlan struct {
	body *arrow.Schema // the columns present in the body, in body order
	keep []bool        // per body column: load it (false: skip, local projection)
	// out is the output schema; outCols[i] is the index among the loaded
	// body columns of output column i.
	out     *arrow.Schema
	outCols []int
	// identity: output == loaded body columns in order.
	identity bool
	// rows decodes the columns of row-format batches (INDEXED, COMPACTED):
	// one spec per body column.
	rows []*fieldSpec
}

// NewDecoder returns a decoder that rebuilds each batch's Arrow schema with lookup.
func NewDecoder(lookup SchemaLookup, opts ...Option) (*Decoder, error) {
	if lookup == nil {
		return nil, errors.New("fluss/records: NewDecoder needs a schema lookup")
	}
	cfg := config{mem: memory.DefaultAllocator, maxBytes: DefaultMaxBatchBytes, checkCRC: true, align: !unalignedOK()}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxBytes <= 0 {
		return nil, fmt.Errorf("fluss/records: max batch bytes %d must be positive", cfg.maxBytes)
	}
	seen := map[int]bool{}
	for _, c := range cfg.projection {
		if c < 0 {
			return nil, fmt.Errorf("fluss/records: projection column index %d is negative", c)
		}
		if seen[c] {
			return nil, fmt.Errorf("fluss/records: projection names column index %d twice", c)
		}
		seen[c] = true
	}
	if cfg.pushedDown && cfg.projection == nil {
		return nil, errors.New("fluss/records: projection pushed down but no projection given")
	}
	if err := cfg.checkFormat(); err != nil {
		return nil, err
	}
	return &Decoder{cfg: cfg, lookup: lookup, schemas: map[int16]*schemaPlan{}}, nil
}

func unalignedOK() bool {
	switch runtime.GOARCH {
	case "amd64", "arm64", "386", "ppc64", "ppc64le", "s390x":
		return true
	}
	return false
}

func (d *Decoder) plan(schemaID int16) (*schemaPlan, error) {
	d.mu.Lock()
	p, ok := d.schemas[schemaID]
	d.mu.Unlock()
	if ok {
		return p, nil
	}
	full, err := d.lookup(schemaID)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", schemaID, err)
	}
	if full == nil {
		return nil, fmt.Errorf("schema id %d: lookup returned no schema", schemaID)
	}
	p, err = newPlan(full, d.cfg.projection, d.cfg.pushedDown)
	if err != nil {
		return nil, fmt.Errorf("schema id %d: %w", schemaID, err)
	}
	if d.cfg.format.isRow() {
		if p.rows, err = d.rowSpecs(schemaID, p.body); err != nil {
			return nil, fmt.Errorf("schema id %d: %w", schemaID, err)
		}
	}
	d.mu.Lock()
	d.schemas[schemaID] = p
	d.mu.Unlock()
	return p, nil
}

func newPlan(full *arrow.Schema, projection []int, pushed bool) (*schemaPlan, error) {
	p := &schemaPlan{}
	if projection == nil {
		p.body, p.out, p.identity = full, full, true
		p.keep = make([]bool, full.NumFields())
		for i := range p.keep {
			p.keep[i] = true
		}
		return p, nil
	}
	for _, c := range projection {
		if c >= full.NumFields() {
			return nil, fmt.Errorf("projection column index %d out of range: the schema has %d columns", c, full.NumFields())
		}
	}
	sorted := slices.Clone(projection)
	slices.Sort(sorted)
	// rank[c] = position of column c among the loaded (sorted) columns.
	rank := make(map[int]int, len(sorted))
	for i, c := range sorted {
		rank[c] = i
	}
	if pushed {
		fields := make([]arrow.Field, len(sorted))
		for i, c := range sorted {
			fields[i] = full.Field(c)
		}
		p.body = arrow.NewSchema(fields, nil)
		p.keep = make([]bool, len(sorted))
		for i := range p.keep {
			p.keep[i] = true
		}
	} else {
		p.body = full
		p.keep = make([]bool, full.NumFields())
		for _, c := range sorted {
			p.keep[c] = true
		}
	}
	outFields := make([]arrow.Field, len(projection))
	p.outCols = make([]int, len(projection))
	p.identity = true
	for i, c := range projection {
		outFields[i] = full.Field(c)
		p.outCols[i] = rank[c]
		if rank[c] != i {
			p.identity = false
		}
	}
	md := full.Metadata()
	p.out = arrow.NewSchema(outFields, &md)
	return p, nil
}

// Batch is one decoded log batch. Rows below the fetch offset have been
// dropped, so Record's row i has log offset FirstOffset+i.
type Batch struct {
	// Header is the batch header as stored (BaseOffset, CommitTimestamp —
	// the timestamp of every row —, SchemaID, ...).
	Header
	// FirstOffset is the log offset of Record's first row.
	FirstOffset int64
	// Record holds the rows, with the projected columns if a projection was
	// set. Its uncompressed buffers alias the decoded input.
	Record arrow.RecordBatch
	// ChangeTypes has one entry per row of Record; nil means every row is
	// AppendOnly (+A). It aliases the decoded input.
	ChangeTypes []ChangeType
}

// NumRows returns the number of rows in Record.
func (b *Batch) NumRows() int {
	if b.Record == nil {
		return 0
	}
	return int(b.Record.NumRows())
}

// Offset returns the log offset of Record's row i.
func (b *Batch) Offset(i int) int64 { return b.FirstOffset + int64(i) }

// ChangeType returns the change type of Record's row i.
func (b *Batch) ChangeType(i int) ChangeType {
	if b.ChangeTypes == nil {
		return AppendOnly
	}
	return b.ChangeTypes[i]
}

// Release releases Record. It is safe to call more than once.
func (b *Batch) Release() {
	if b != nil && b.Record != nil {
		b.Record.Release()
		b.Record = nil
	}
}

// Result is what Decode found in one bucket's records bytes.
type Result struct {
	// Batches holds the decoded batches with at least one row at or above
	// the fetch offset, in log order. The caller must Release each one.
	Batches []*Batch
	// NextOffset is the offset to fetch next: the end of the last complete
	// batch (empty batches included), or the fetch offset if there was none.
	NextOffset int64
	// TruncatedBytes counts trailing bytes of an incomplete batch, ignored.
	TruncatedBytes int
}

// Release releases every batch in r.
func (r *Result) Release() {
	for _, b := range r.Batches {
		b.Release()
	}
	r.Batches = nil
}

// Decode decodes the concatenated log batches of one bucket of a fetch
// response. Rows with offsets below fetchOffset are dropped, empty batches
// only advance NextOffset, and a truncated trailing batch is ignored.
//
// On error, the batches decoded before the failing one are still returned
// (the caller releases them) and NextOffset points at the failing batch.
// records must not be modified while any returned record is alive.
func (d *Decoder) Decode(records []byte, fetchOffset int64) (Result, error) {
	res := Result{NextOffset: fetchOffset}
	it := NewBatchIterator(records)
	for it.Next() {
		raw := it.Batch()
		b, err := d.DecodeBatch(raw, fetchOffset)
		if err != nil {
			return res, err
		}
		if b != nil {
			res.Batches = append(res.Batches, b)
		}
		if n := raw.NextOffset(); n > res.NextOffset {
			res.NextOffset = n
		}
	}
	res.TruncatedBytes = it.Truncated()
	if err := it.Err(); err != nil {
		return res, fmt.Errorf("after offset %d: %w", res.NextOffset, err)
	}
	return res, nil
}

// DecodeBatch decodes one complete batch. It returns a nil Batch and no
// error when the batch has no rows at or above fetchOffset (empty batches
// included); raw.NextOffset() still tells where the next batch starts.
func (d *Decoder) DecodeBatch(raw *RawBatch, fetchOffset int64) (b *Batch, err error) {
	defer func() {
		if r := recover(); r != nil {
			b.Release()
			b = nil
			err = fmt.Errorf("%w: batch at offset %d: decoder panic: %v", ErrInvalidBatch, raw.BaseOffset, r)
		}
	}()
	if err := raw.checkFrame(); err != nil {
		return nil, err
	}
	if raw.Size() > d.cfg.maxBytes {
		return nil, fmt.Errorf("%w: batch at offset %d has %d bytes, limit %d", ErrTooLarge, raw.BaseOffset, raw.Size(), d.cfg.maxBytes)
	}
	if d.cfg.checkCRC && !d.cfg.pushedDown {
		if err := raw.CheckCRC(); err != nil {
			return nil, err
		}
	}
	if raw.RecordCount == 0 || raw.NextOffset() <= fetchOffset {
		return nil, nil
	}
	if d.cfg.format.isRow() {
		return d.decodeRowBatch(raw, fetchOffset)
	}
	rows := int64(raw.RecordCount)
	pos := raw.RecordsOffset()
	var cts []ChangeType
	if !raw.AppendOnly() {
		if int64(len(raw.Bytes)-pos) < rows {
			return nil, fmt.Errorf("%w: batch at offset %d: %d records but %d bytes for the change-type vector",
				ErrInvalidBatch, raw.BaseOffset, rows, len(raw.Bytes)-pos)
		}
		vec := raw.Bytes[pos : pos+int(rows)]
		for i, c := range vec {
			if c > byte(Delete) {
				return nil, fmt.Errorf("%w: batch at offset %d: row %d has change type %d", ErrInvalidBatch, raw.BaseOffset, i, c)
			}
		}
		cts = unsafe.Slice((*ChangeType)(unsafe.Pointer(unsafe.SliceData(vec))), len(vec))
		if d.cfg.owned {
			cts = slices.Clone(cts)
		}
		pos += int(rows)
	}
	plan, err := d.plan(raw.SchemaID)
	if err != nil {
		return nil, fmt.Errorf("batch at offset %d: %w", raw.BaseOffset, err)
	}
	rec, err := d.loadRecord(raw, raw.Bytes[pos:], plan, rows)
	if err != nil {
		return nil, fmt.Errorf("batch at offset %d (schema id %d): %w", raw.BaseOffset, raw.SchemaID, err)
	}
	b = &Batch{Header: raw.Header, FirstOffset: raw.BaseOffset, Record: rec, ChangeTypes: cts}
	if skip := fetchOffset - raw.BaseOffset; skip > 0 {
		if skip >= rows {
			b.Release()
			return nil, nil
		}
		b.Record = rec.NewSlice(skip, rows)
		rec.Release()
		b.FirstOffset = fetchOffset
		if cts != nil {
			b.ChangeTypes = cts[skip:]
		}
	}
	return b, nil
}

// bodyBuffer wraps an Arrow body for its buffers to be sliced from: the
// body itself, or where the CPU needs aligned loads and body is not 8-byte
// aligned, a copy in the allocator's memory (copied).
func (d *Decoder) bodyBuffer(body []byte) (parent *memory.Buffer, copied bool) {
	if d.cfg.align && len(body) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(body)))%8 != 0 {
		parent = memory.NewResizableBuffer(d.cfg.mem)
		parent.Resize(len(body))
		copy(parent.Bytes(), body)
		return parent, true
	}
	return memory.NewBufferBytes(body), false
}

// Arrow IPC encapsulated message framing.
const ipcContinuation = 0xFFFFFFFF

// loadRecord decodes the Arrow RecordBatch message at the start of msg.
func (d *Decoder) loadRecord(raw *RawBatch, msg []byte, plan *schemaPlan, rows int64) (arrow.RecordBatch, error) {
	if len(msg) < 8 {
		return nil, fmt.Errorf("%w: %d bytes left for the Arrow message", ErrInvalidBatch, len(msg))
	}
	if binary.LittleEndian.Uint32(msg) != ipcContinuation {
		return nil, fmt.Errorf("%w: Arrow message does not start with the continuation marker", ErrInvalidBatch)
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(msg[4:])))
	if metaLen <= 0 || metaLen > int64(len(msg)-8) {
		return nil, fmt.Errorf("%w: Arrow metadata length %d with %d bytes left", ErrInvalidBatch, metaLen, len(msg)-8)
	}
	meta, err := parseRecordBatchMeta(msg[8 : 8+metaLen])
	if err != nil {
		return nil, err
	}
	bodyStart := 8 + metaLen
	if meta.bodyLength < 0 || meta.bodyLength > int64(len(msg))-bodyStart {
		return nil, fmt.Errorf("%w: Arrow body length %d with %d bytes left", ErrInvalidBatch, meta.bodyLength, int64(len(msg))-bodyStart)
	}
	if meta.length != rows {
		return nil, fmt.Errorf("%w: Arrow record batch has %d rows, the batch header %d", ErrInvalidBatch, meta.length, rows)
	}
	body := msg[bodyStart : bodyStart+meta.bodyLength]
	for i := 0; i < meta.nBuffers; i++ {
		spec := meta.buffer(i)
		if spec.offset < 0 || spec.length < 0 || spec.offset > int64(len(body)) || spec.length > int64(len(body))-spec.offset {
			return nil, fmt.Errorf("%w: Arrow buffer %d at [%d,+%d) outside the %d-byte body", ErrInvalidBatch, i, spec.offset, spec.length, len(body))
		}
	}
	parent, copied := d.bodyBuffer(body)
	body = parent.Bytes()
	defer parent.Release()

	l := &bodyLoader{meta: &meta, body: body, parent: parent, mem: d.cfg.mem, budget: d.cfg.maxBytes,
		copyRaw: d.cfg.owned && !copied}
	cols := make([]arrow.Array, 0, len(plan.keep))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i, f := range plan.body.Fields() {
		l.col = f.Name
		if !plan.keep[i] {
			if err := l.skipArray(f.Type); err != nil {
				return nil, err
			}
			continue
		}
		data, err := l.loadArray(f.Type)
		if err != nil {
			return nil, err
		}
		if int64(data.Len()) != rows {
			data.Release()
			return nil, l.errf("%d values in a batch of %d rows", data.Len(), rows)
		}
		arr := array.MakeFromData(data)
		data.Release()
		cols = append(cols, arr)
	}
	if l.inode != meta.nNodes || l.ibuf != meta.nBuffers {
		return nil, fmt.Errorf("%w: Arrow body has %d field nodes and %d buffers, schema (%d columns) uses %d and %d",
			ErrInvalidBatch, meta.nNodes, meta.nBuffers, plan.body.NumFields(), l.inode, l.ibuf)
	}
	out := cols
	if !plan.identity {
		out = make([]arrow.Array, len(plan.outCols))
		for i, j := range plan.outCols {
			out[i] = cols[j]
		}
	}
	return array.NewRecordBatch(plan.out, out, rows), nil
}
