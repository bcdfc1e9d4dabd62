package records_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// kindSamples has one column type of each Fluss type root. A root added to
// fluss/types without a sample here fails TestEveryKindEverywhere, which
// then checks that each per-type switch knows it: the Arrow type
// (types.ArrowType), the KV row encoding (records.NewRowEncoder), the
// canonical JSON (jsonrow) and the row-format log decoders (a COMPACTED
// and an INDEXED batch of the type must decode) and the KV value decoder
// (records.ValueDecoder, both formats), and the ARROW log decoder
// (loadArray, a one-row batch of the type). Their values are checked by the
// all-types round trips against the Java tool, the row decoders' by TestRowFormatSeedsMatchArrow (the
// same all-types rows in ARROW, COMPACTED and INDEXED). The KV row
// encoder is test and benchmark support and does not write nested values
// (primary-key tables with them are written by the Java tool).
var kindSamples = map[types.Kind]string{
	types.KindBoolean:      "BOOLEAN",
	types.KindTinyInt:      "TINYINT",
	types.KindSmallInt:     "SMALLINT",
	types.KindInt:          "INT",
	types.KindBigInt:       "BIGINT",
	types.KindFloat:        "FLOAT",
	types.KindDouble:       "DOUBLE",
	types.KindDecimal:      "DECIMAL(12, 3)",
	types.KindChar:         "CHAR(3)",
	types.KindString:       "STRING",
	types.KindBinary:       "BINARY(4)",
	types.KindBytes:        "BYTES",
	types.KindDate:         "DATE",
	types.KindTime:         "TIME(3)",
	types.KindTimestamp:    "TIMESTAMP(6)",
	types.KindTimestampLTZ: "TIMESTAMP_LTZ(3)",
	types.KindArray:        "ARRAY<INT>",
	types.KindMap:          "MAP<STRING, INT>",
	types.KindRow:          "ROW<a INT, b STRING>",
}

func TestEveryKindEverywhere(t *testing.T) {
	for k := types.KindBoolean; k.RootName() != "INVALID"; k++ {
		if _, ok := kindSamples[k]; !ok {
			t.Errorf("type root %s has no sample here: add one, and its cases in every per-type switch", k.RootName())
		}
	}
	for k, syntax := range kindSamples {
		cols, err := types.ParseColumns("id BIGINT NOT NULL, v " + syntax)
		if err != nil {
			t.Fatalf("%s: %v", syntax, err)
		}
		if dt, err := types.ArrowType(cols[1].Type); err != nil || dt == nil {
			t.Errorf("%s (%s): no Arrow type: %v", syntax, k.RootName(), err)
		}
		schema := types.MustSchema(cols, "id")
		as, err := types.ArrowSchemaOfRow(schema.RowType())
		if err != nil {
			t.Fatalf("%s: Arrow schema: %v", syntax, err)
		}
		if _, err := records.NewRowEncoder(as, []int{0}); err != nil && !k.IsNested() {
			t.Errorf("%s (%s): no KV row encoding: %v", syntax, k.RootName(), err)
		}
		if _, err := jsonrow.NewSchemaEncoder(schema); err != nil {
			t.Errorf("%s (%s): no canonical JSON: %v", syntax, k.RootName(), err)
		}
		if err := decodeNullArrow(as); err != nil {
			t.Errorf("%s (%s): no ARROW log decoding: %v", syntax, k.RootName(), err)
		}
		for _, f := range []records.LogFormat{records.LogFormatCompacted, records.LogFormatIndexed} {
			if err := decodeNullRow(schema, as, f); err != nil {
				t.Errorf("%s (%s): no %s log decoding: %v", syntax, k.RootName(), f, err)
			}
			if err := decodeNullValue(schema, f); err != nil {
				t.Errorf("%s (%s): no %s KV value decoding: %v", syntax, k.RootName(), f, err)
			}
		}
	}
}

// nullRow is the row of schema (columns id BIGINT NOT NULL = 7 and a null
// v) in a row format.
func nullRow(schema *types.Schema, f records.LogFormat) []byte {
	row := []byte{0x02} // null bitmap: v
	if f == records.LogFormatIndexed {
		// No length slot for v unless it has variable length: put one
		// before id's 8 bytes exactly when the Fluss type says so.
		if !isFixed(schema.Columns[1].Type) {
			row = append(row, 0, 0, 0, 0)
		}
		return binary.LittleEndian.AppendUint64(row, 7)
	}
	return append(row, 7)
}

// decodeNullValue decodes nullRow as a KV value (schema id 1) with
// records.ValueDecoder.
func decodeNullValue(schema *types.Schema, f records.LogFormat) error {
	d, err := records.NewValueDecoder(func(int16) (*types.Schema, error) { return schema, nil }, 1, f)
	if err != nil {
		return err
	}
	defer d.Release()
	if err := d.Append(append([]byte{1, 0}, nullRow(schema, f)...)); err != nil {
		return err
	}
	r, err := d.Flush()
	if err != nil {
		return err
	}
	defer r.Release()
	if r.NumRows() != 1 {
		return fmt.Errorf("decoded %d rows, want 1", r.NumRows())
	}
	if id := r.Column(0).(*array.Int64).Value(0); id != 7 || !r.Column(1).IsNull(0) {
		return fmt.Errorf("decoded id %d and v %s, want 7 and null", id, r.Column(1))
	}
	return nil
}

// decodeNullRow decodes a one-row batch of schema (columns id BIGINT NOT
// NULL = 7 and a null v) in a row format.
func decodeNullRow(schema *types.Schema, as *arrow.Schema, f records.LogFormat) error {
	row := nullRow(schema, f)
	rec := binary.LittleEndian.AppendUint32(nil, uint32(len(row)+1))
	rec = append(append(rec, byte(records.AppendOnly)), row...)
	batch := make([]byte, records.HeaderSize, records.HeaderSize+len(rec))
	batch = append(batch, rec...)
	le := binary.LittleEndian
	le.PutUint32(batch[8:], uint32(len(batch)-records.LogOverhead))
	le.PutUint16(batch[25:], 1)          // schema id
	batch[27] = 1                        // append-only
	le.PutUint64(batch[32:], ^uint64(0)) // no writer id (-1)
	le.PutUint32(batch[40:], ^uint32(0)) // no batch sequence (-1)
	le.PutUint32(batch[44:], 1)
	dec, err := records.NewDecoder(func(int16) (*arrow.Schema, error) { return as, nil },
		records.WithCRCCheck(false),
		records.WithLogFormat(f, func(int16) (*types.Schema, error) { return schema, nil }))
	if err != nil {
		return err
	}
	return decodeOneNullRow(dec, batch, as)
}

// isFixed reports whether an IndexedRow stores t in a fixed number of bytes.
func isFixed(t types.DataType) bool {
	switch t.Kind {
	case types.KindString, types.KindBytes, types.KindArray, types.KindMap, types.KindRow:
		return false
	case types.KindDecimal:
		return t.Precision <= 18
	}
	return true
}

// decodeNullArrow encodes a one-row ARROW log batch of schema as (id 7, v
// null) and decodes it.
func decodeNullArrow(as *arrow.Schema) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, as)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(7)
	b.Field(1).AppendNull()
	rec := b.NewRecordBatch()
	defer rec.Release()
	batch, err := records.EncodeLogBatch(rec, records.LogBatchOptions{SchemaID: 1})
	if err != nil {
		return fmt.Errorf("encoding: %w", err)
	}
	dec, err := records.NewDecoder(func(int16) (*arrow.Schema, error) { return as, nil })
	if err != nil {
		return err
	}
	return decodeOneNullRow(dec, batch, as)
}

// decodeOneNullRow decodes batch and checks that it holds one row, id 7 and
// a null v of the Arrow type as gives it.
func decodeOneNullRow(dec *records.Decoder, batch []byte, as *arrow.Schema) error {
	res, err := dec.Decode(batch, 0)
	defer res.Release()
	if err != nil {
		return err
	}
	if len(res.Batches) != 1 || res.Batches[0].NumRows() != 1 {
		return fmt.Errorf("decoded %d batches, want one of one row", len(res.Batches))
	}
	r := res.Batches[0].Record
	if id := r.Column(0).(*array.Int64).Value(0); id != 7 || !r.Column(1).IsNull(0) || !arrow.TypeEqual(r.Column(1).DataType(), as.Field(1).Type) {
		return fmt.Errorf("decoded id %d and v %s (%s), want 7 and null", id, r.Column(1), r.Column(1).DataType())
	}
	return nil
}
