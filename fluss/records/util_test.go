package records

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func uintptrOf(p *byte) uintptr { return uintptr(unsafe.Pointer(p)) }

func arrowNewRecord(s *arrow.Schema, cols []arrow.Array, n int64) arrow.RecordBatch {
	return array.NewRecordBatch(s, cols, n)
}
