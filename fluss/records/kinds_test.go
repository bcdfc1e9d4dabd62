package records_test

import (
	"testing"

	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
	"github.com/fluss-iggy/fluss-iggy/fluss/records"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// kindSamples has one column type of each Fluss type root. A root added to
// fluss/types without a sample here fails TestEveryKindEverywhere, which
// then checks that each per-type switch knows it: the Arrow type
// (types.ArrowType), the KV row encoding (records.NewRowEncoder) and the
// canonical JSON (jsonrow). The log-batch decoder's side (loadArray) is
// checked by the all-types round trips against the Java tool. The KV row
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
	}
}
