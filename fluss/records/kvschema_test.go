package records

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestRowEncoderSchemaCheck checks that a RowEncoder encodes records of its
// schema or an equal one (a distinct *arrow.Schema) alike, and refuses
// records of another schema before and after it has seen an equal one.
func TestRowEncoderSchemaCheck(t *testing.T) {
	s := testSchema()
	other := arrow.NewSchema(s.Fields()[:8], nil)
	enc, err := NewRowEncoder(s, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(when string) {
		t.Helper()
		rec := buildRecord(t, memory.DefaultAllocator, other, 2, 0, 1)
		defer rec.Release()
		if _, err := enc.AppendKey(nil, rec, 0); err == nil {
			t.Errorf("%s: AppendKey takes a record of another schema", when)
		}
		if _, err := enc.AppendValue(nil, rec, 0); err == nil {
			t.Errorf("%s: AppendValue takes a record of another schema", when)
		}
	}
	refused("first")
	same := buildRecord(t, memory.DefaultAllocator, s, 3, 0, 2)
	defer same.Release()
	equal := buildRecord(t, memory.DefaultAllocator, arrow.NewSchema(s.Fields(), nil), 3, 0, 2)
	defer equal.Release()
	for i := 0; i < 3; i++ {
		for _, rec := range []arrow.RecordBatch{equal, same, equal} {
			k1, err1 := enc.AppendKey(nil, same, i)
			k2, err2 := enc.AppendKey(nil, rec, i)
			v1, err3 := enc.AppendValue(nil, same, i)
			v2, err4 := enc.AppendValue(nil, rec, i)
			if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
				t.Fatalf("row %d: %v %v %v %v", i, err1, err2, err3, err4)
			}
			if !bytes.Equal(k1, k2) || !bytes.Equal(v1, v2) {
				t.Errorf("row %d: an equal schema's record encodes differently", i)
			}
		}
	}
	refused("after equal schemas")
}
