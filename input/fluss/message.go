package flussinput

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/internal/flussmeta"
	"github.com/fluss-iggy/fluss-iggy/internal/slab"
)

// tableMeta is the metadata shared by every message of a table.
type tableMeta struct {
	database string
	table    string
	tableID  int64
	pkTable  bool
}

// changeTypeValues holds the change types as metadata values, boxed once.
var changeTypeValues = func() (v [5]any) {
	for i := range v {
		v[i] = fluss.ChangeType(i).String()
	}
	return v
}()

func changeTypeValue(ct fluss.ChangeType) any {
	if ct.Valid() {
		return changeTypeValues[ct]
	}
	return ct.String()
}

// batchContext is where a chunk of rows comes from.
type batchContext struct {
	key       bucketKey
	partition string
	schemaID  int16
	timestamp int64
	// snap is set for the rows of a KV snapshot, whose "offsets" count its
	// rows: fluss_offset is then the log offset the snapshot covers.
	snap *checkpointSnapshot
}

// messageBuilder turns rows of decoded record batches into messages. It is
// used by one goroutine at a time.
type messageBuilder struct {
	meta  tableMeta
	arrow bool

	// Metadata values boxed once (storing a string or a large integer in
	// an interface allocates): per table, and per chunk in setMeta.
	dbValue, tableValue, tableIDValue any
	metaBC                            *batchContext
	metaValues                        [5]any // partition, partition id, bucket, timestamp, schema id
	// The per-row values (offset, message id) boxed from shared blocks.
	offsetBoxes slab.Slab[int64]
	idBoxes     slab.Slab[string]
	idText      slab.Text

	// tmpl holds the metadata of every row message of tmplBC (see
	// jsonTemplate); nil when the messages are built key by key.
	tmpl   *service.Message
	tmplBC *batchContext

	// json
	enc     *jsonrow.Encoder
	bufHint int // bytes per row seen last, to size the next buffer
	// values is set when rows are handed over as structured values
	// (structuredRows) instead of JSON bytes.
	values *jsonrow.Values

	// arrow_ipc
	ipcSchema   *arrow.Schema // with _change_type for primary-key tables
	ipcHint     int           // bytes per row of the last message
	ipcOverhead int           // a guess of the schema and framing bytes
	ipcCodec    string        // arrow_ipc_compression
	mem         memory.Allocator
}

// newMessageBuilder prepares a builder for records of the given (projected)
// schema.
func newMessageBuilder(meta tableMeta, schema *fluss.Schema, arrowSchema *arrow.Schema, arrowPayload bool) (*messageBuilder, error) {
	b := &messageBuilder{meta: meta, arrow: arrowPayload, mem: memory.DefaultAllocator,
		dbValue: meta.database, tableValue: meta.table, tableIDValue: meta.tableID}
	if arrowPayload {
		b.ipcSchema = arrowSchema
		if meta.pkTable {
			fields := make([]arrow.Field, 0, arrowSchema.NumFields()+1)
			fields = append(fields, arrow.Field{Name: changeTypeColumn, Type: arrow.BinaryTypes.String, Nullable: false})
			fields = append(fields, arrowSchema.Fields()...)
			md := arrowSchema.Metadata()
			b.ipcSchema = arrow.NewSchema(fields, &md)
		}
		return b, nil
	}
	enc, err := jsonrow.NewEncoder(schema.RowType(), arrowSchema)
	if err != nil {
		return nil, fmt.Errorf("preparing the JSON encoder of table %s.%s: %w", meta.database, meta.table, err)
	}
	b.enc = enc
	return b, nil
}

// useStructuredRows (payload_format: structured) hands rows over as structured values
// (service.Message.SetStructuredMut of a map built straight from the Arrow
// columns by jsonrow.Values, the values the row's canonical JSON decodes
// to) rather than as canonical JSON bytes: a Bloblang mapping then reads
// the row without parsing JSON, and the iggy output serialises the result
// itself (jsonrow.AnyWriter, keys sorted as Benthos sorts them). Without a
// mapping the bytes are the cheaper path, and keep the columns in table
// order. It does nothing for arrow_ipc.
func (b *messageBuilder) useStructuredRows() {
	if b.enc != nil {
		b.values = jsonrow.NewValues(b.enc)
	}
}

// setMeta sets the metadata common to every message of a chunk.
func (b *messageBuilder) setMeta(m *service.Message, bc *batchContext) {
	v := &b.metaValues
	if b.metaBC != bc {
		b.metaBC = bc
		v[0], v[1], v[2], v[3], v[4] = bc.partition, bc.key.partitionID, int64(bc.key.bucket), bc.timestamp, int64(bc.schemaID)
	}
	m.MetaSetMut(metaDatabase, b.dbValue)
	m.MetaSetMut(metaTable, b.tableValue)
	m.MetaSetMut(metaTableID, b.tableIDValue)
	if bc.key.partitionID != fluss.NoPartition {
		m.MetaSetMut(metaPartition, v[0])
		m.MetaSetMut(metaPartID, v[1])
	}
	m.MetaSetMut(metaBucket, v[2])
	m.MetaSetMut(metaTimestamp, v[3])
	m.MetaSetMut(metaSchemaID, v[4])
	if bc.snap != nil {
		m.MetaSetMut(metaSnapshotID, bc.snap.ID)
	}
}

// messageID is the fluss_message_id of the record at offset of bc's bucket
// (of row offset of its snapshot, for snapshot rows).
// It is boxed from the builder's blocks: one allocation per block of ids
// instead of two per message.
func (b *messageBuilder) messageID(bc *batchContext, offset int64) any {
	if bc.snap != nil {
		offset |= snapshotIDMark
	}
	var buf [34]byte
	id := flussmeta.AppendMessageID(buf[:0], b.meta.tableID, bc.key.partitionID, bc.key.bucket, offset)
	return b.idBoxes.Box(b.idText.String(id))
}

// offsetMeta is the fluss_offset of the record at offset: the offset, or
// for snapshot rows the log offset their snapshot covers.
func (bc *batchContext) offsetMeta(offset int64) int64 {
	if bc.snap != nil {
		return bc.snap.LogOffset
	}
	return offset
}

// build returns the messages of rows [from, to) of rec, whose row i has log
// offset firstOffset+i and change type changeTypes[i] (nil: all +A).
func (b *messageBuilder) build(bc *batchContext, rec arrow.RecordBatch, changeTypes []fluss.ChangeType, firstOffset int64, from, to int) (service.MessageBatch, error) {
	if b.arrow {
		m, err := b.buildArrow(bc, rec, changeTypes, firstOffset, from, to)
		if err != nil {
			return nil, err
		}
		return service.MessageBatch{m}, nil
	}
	return b.buildJSON(bc, rec, changeTypes, firstOffset, from, to)
}

// smallMetaKeys is the most metadata keys a message can hold in the
// smallest Go map: Benthos creates a message's metadata map on its first
// key with room for 5, which holds up to 8 keys in one 8-slot group without
// growing; a 9th key turns it into a hash table (more allocations, rehash).
const smallMetaKeys = 8

// jsonTemplate returns a message holding the metadata keys of every row of
// bc, the per-row ones (offset, change type) with placeholder values, or
// nil when the rows' messages are cheaper to build key by key.
//
// A row's message is then template.Copy(): Benthos shares the template's
// metadata and clones it, sized for all the keys, on the first write, so
// the row's offset and change type overwrite the placeholders without
// growing the map. That saves the growth when a message has more keys than
// fit a small map (partitioned tables: 10). With 8 keys or fewer it costs
// more: the clone is then a small map that is full, and Go grows a full
// small map on any assignment, even one to an existing key.
func (b *messageBuilder) jsonTemplate(bc *batchContext) *service.Message {
	keys := 6 + 2 // database, table, table id, bucket, timestamp, schema id; offset, message id
	if b.meta.pkTable {
		keys++ // change type
	}
	if bc.key.partitionID != fluss.NoPartition {
		keys += 2 // partition, partition id
	}
	if keys <= smallMetaKeys {
		return nil
	}
	if b.tmplBC != bc {
		t := service.NewMessage(nil)
		b.setMeta(t, bc)
		t.MetaSetMut(metaOffset, nil)
		t.MetaSetMut(metaMessageID, nil)
		if b.meta.pkTable {
			t.MetaSetMut(metaChangeType, nil)
		}
		b.tmpl, b.tmplBC = t, bc
	}
	return b.tmpl
}

func (b *messageBuilder) buildJSON(bc *batchContext, rec arrow.RecordBatch, changeTypes []fluss.ChangeType, firstOffset int64, from, to int) (service.MessageBatch, error) {
	var err error
	if b.values != nil {
		err = b.values.Bind(rec)
	} else {
		err = b.enc.Bind(rec)
	}
	if err != nil {
		return nil, fmt.Errorf("encoding rows of %s at offset %d: %w", bc.key, firstOffset+int64(from), err)
	}
	n := to - from
	hint := b.bufHint
	if hint <= 0 {
		hint = 128
	}
	var buf []byte
	if b.values == nil {
		buf = make([]byte, 0, n*hint+hint)
	}
	out := make(service.MessageBatch, n)
	tmpl := b.jsonTemplate(bc)
	for i := from; i < to; i++ {
		var m *service.Message
		if tmpl != nil {
			m = tmpl.Copy()
		} else {
			m = service.NewMessage(nil)
			b.setMeta(m, bc)
		}
		if b.values != nil {
			m.SetStructuredMut(b.values.Row(i))
		} else {
			start := len(buf)
			buf = b.enc.AppendRow(buf, i)
			// Slices of one buffer: a later append that grows buf copies
			// it, leaving the bytes already handed out untouched.
			m.SetBytes(buf[start:len(buf):len(buf)])
		}
		// Every message gets these, overwriting the template's placeholders.
		m.MetaSetMut(metaOffset, b.offsetBoxes.Box(bc.offsetMeta(firstOffset+int64(i))))
		m.MetaSetMut(metaMessageID, b.messageID(bc, firstOffset+int64(i)))
		if b.meta.pkTable {
			ct := fluss.AppendOnly
			if changeTypes != nil {
				ct = changeTypes[i]
			}
			m.MetaSetMut(metaChangeType, changeTypeValue(ct))
		}
		out[i-from] = m
	}
	if n > 0 && b.values == nil {
		b.bufHint = len(buf)/n + 8
	}
	return out, nil
}

func (b *messageBuilder) buildArrow(bc *batchContext, rec arrow.RecordBatch, changeTypes []fluss.ChangeType, firstOffset int64, from, to int) (*service.Message, error) {
	slice := rec
	if from != 0 || int64(to) != rec.NumRows() {
		slice = rec.NewSlice(int64(from), int64(to))
		defer slice.Release()
	}
	out := slice
	if b.meta.pkTable {
		sb := array.NewStringBuilder(b.mem)
		sb.Reserve(to - from)
		for i := from; i < to; i++ {
			ct := fluss.AppendOnly
			if changeTypes != nil {
				ct = changeTypes[i]
			}
			sb.Append(ct.String())
		}
		ctCol := sb.NewArray()
		sb.Release()
		cols := make([]arrow.Array, 0, slice.NumCols()+1)
		cols = append(cols, ctCol)
		cols = append(cols, slice.Columns()...)
		out = array.NewRecordBatch(b.ipcSchema, cols, int64(to-from))
		ctCol.Release()
		defer out.Release()
	}
	// Each message gets its own buffer, sized from the previous ones, so
	// that the stream is written once and handed over without a copy.
	rows := to - from
	buf := bytes.NewBuffer(make([]byte, 0, b.ipcHint*rows+b.ipcOverhead+512))
	w := ipc.NewWriter(buf, b.ipcOptions()...)
	if err := w.Write(out); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("writing Arrow IPC of %s at offset %d: %w", bc.key, firstOffset+int64(from), err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("writing Arrow IPC of %s at offset %d: %w", bc.key, firstOffset+int64(from), err)
	}
	data := buf.Bytes()
	if b.ipcOverhead == 0 {
		b.ipcOverhead = len(data) / 2
	}
	b.ipcHint = max(0, len(data)-b.ipcOverhead)/rows + 1
	m := service.NewMessage(data)
	b.setMeta(m, bc)
	m.MetaSetMut(metaOffset, bc.offsetMeta(firstOffset+int64(from)))
	m.MetaSetMut(metaMessageID, b.messageID(bc, firstOffset+int64(from)))
	m.MetaSetMut(metaLastOffset, bc.offsetMeta(firstOffset+int64(to-1)))
	if !b.meta.pkTable {
		return m, nil
	}
	if ct, ok := uniformChangeType(changeTypes, from, to); ok {
		m.MetaSetMut(metaChangeType, changeTypeValue(ct))
	}
	return m, nil
}

// ipcOptions are the options of the Arrow IPC writer of one message.
func (b *messageBuilder) ipcOptions() []ipc.Option {
	opts := []ipc.Option{ipc.WithSchema(b.ipcSchema), ipc.WithAllocator(b.mem)}
	switch b.ipcCodec {
	case compressionLZ4:
		opts = append(opts, ipc.WithLZ4())
	case compressionZstd:
		opts = append(opts, ipc.WithZstd())
	}
	return opts
}

// uniformChangeType returns the change type shared by rows [from, to).
func uniformChangeType(cts []fluss.ChangeType, from, to int) (fluss.ChangeType, bool) {
	if cts == nil {
		return fluss.AppendOnly, true
	}
	if from >= to {
		return 0, false
	}
	first := cts[from]
	for _, c := range cts[from+1 : to] {
		if c != first {
			return 0, false
		}
	}
	return first, true
}
