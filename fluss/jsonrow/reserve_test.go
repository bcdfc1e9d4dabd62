package jsonrow

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// TestReserve checks that Reserve changes no value: batches of the
// mixed10 and all-types tables (STRING, BYTES, nested columns) built after
// Reserve of fewer, as many or more rows than appended, before and after a
// first record, equal those built without.
func TestReserve(t *testing.T) {
	for _, tc := range []struct {
		columns string
		rowsOf  func(int) [][]any
	}{{mixed10, mixed10Rows}, {allTypes, allTypesRows}} {
		cols, err := types.ParseColumns(tc.columns)
		if err != nil {
			t.Fatal(err)
		}
		s := types.MustSchema(cols)
		const n = 300
		rec := buildRecord(t, memory.DefaultAllocator, s, tc.rowsOf(n))
		enc, err := NewSchemaEncoder(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Bind(rec); err != nil {
			t.Fatal(err)
		}
		plain, reserved := newTestBuilder(t, s), newTestBuilder(t, s)
		for k, reserve := range []int{n, 0, 7, n, 5 * n, n / 2} {
			reserved.Reserve(reserve)
			for i := 0; i < n; i++ {
				line := enc.AppendRow(nil, i)
				if err := plain.AppendJSON(line); err != nil {
					t.Fatal(err)
				}
				if err := reserved.AppendJSON(line); err != nil {
					t.Fatal(err)
				}
			}
			want, got := plain.NewRecord(), reserved.NewRecord()
			if !array.RecordEqual(want, got) {
				t.Errorf("%d columns, round %d: the record built after Reserve(%d) differs", len(cols), k, reserve)
			}
			want.Release()
			got.Release()
		}
		rec.Release()
	}
}
