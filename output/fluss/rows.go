package flussoutput

import (
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
)

// rowBuilder collects the rows of one batch.
type rowBuilder interface {
	// Append appends the row a message's bytes hold (a JSON object); with
	// keyOnly only the primary-key columns are read (a delete).
	Append(data []byte, keyOnly bool) error
	Len() int
	NewRecord() arrow.RecordBatch
	// Reserve makes room for n more rows.
	Reserve(n int)
}

// rowFactory makes and reuses the row builders of one table.
type rowFactory struct {
	primaryKey bool
	newBuilder func() (*jsonrow.RowBuilder, error)
	pool       sync.Pool
}

func newRowFactory(info *fluss.TableInfo, schema *arrow.Schema, ignoreUnknown bool) (*rowFactory, error) {
	var opts []jsonrow.BuilderOption
	if ignoreUnknown {
		opts = append(opts, jsonrow.IgnoreUnknownKeys())
	}
	if info.HasPrimaryKey() {
		opts = append(opts, jsonrow.WithKeyColumns(info.PrimaryKey...))
	}
	f := &rowFactory{primaryKey: info.HasPrimaryKey()}
	f.newBuilder = func() (*jsonrow.RowBuilder, error) { return jsonrow.NewSchemaRowBuilder(info.Schema, opts...) }
	b, err := f.newBuilder() // compiles once, so that Connect reports a table it cannot write
	if err != nil {
		return nil, err
	}
	if !b.Schema().Equal(schema) {
		b.Release()
		return nil, fmt.Errorf("rows would have the Arrow schema %s, the writer expects %s", b.Schema(), schema)
	}
	f.pool.Put(&jsonBuilder{b})
	return f, nil
}

// get returns a builder with no rows.
func (f *rowFactory) get() (*jsonBuilder, error) {
	if b, ok := f.pool.Get().(*jsonBuilder); ok {
		return b, nil
	}
	b, err := f.newBuilder()
	if err != nil {
		return nil, err
	}
	return &jsonBuilder{b}, nil
}

// put gives a builder back; rows it still holds are dropped.
func (f *rowFactory) put(b *jsonBuilder) {
	if b.Len() > 0 {
		b.NewRecord().Release()
	}
	f.pool.Put(b)
}

// jsonBuilder reads messages as JSON objects.
type jsonBuilder struct{ *jsonrow.RowBuilder }

func (b *jsonBuilder) Append(data []byte, keyOnly bool) error {
	if keyOnly {
		return b.AppendJSONKey(data)
	}
	return b.AppendJSON(data)
}
