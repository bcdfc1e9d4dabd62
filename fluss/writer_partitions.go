package fluss

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// partitionGroup is the rows of a write that belong to one partition.
type partitionGroup struct {
	name string            // Fluss's partition name: the values joined by '$'
	spec map[string]string // partition key -> value, to create it
	rows []int32
}

// partitionGroups groups the rows of rec by the partition their
// partition-key columns name, in the order partitions first appear.
func (w *Writer) partitionGroups(rec arrow.RecordBatch) ([]*partitionGroup, error) {
	keys := w.info.PartitionKeys
	cols, err := w.info.Schema.ProjectionIndices(keys)
	if err != nil {
		return nil, fmt.Errorf("fluss: write to %s: partition keys: %w", w.info.Path, err)
	}
	byName := map[string]*partitionGroup{}
	var order []*partitionGroup
	vals := make([]string, len(cols))
	for i := 0; i < int(rec.NumRows()); i++ {
		for j, c := range cols {
			if vals[j], err = partitionValue(rec.Column(c), i); err != nil {
				return nil, fmt.Errorf("fluss: write to %s row %d: partition key %s: %w", w.info.Path, i, keys[j], err)
			}
		}
		name := strings.Join(vals, "$")
		g := byName[name]
		if g == nil {
			g = &partitionGroup{name: name, spec: make(map[string]string, len(keys))}
			for j, k := range keys {
				g.spec[k] = vals[j]
			}
			byName[name] = g
			order = append(order, g)
		}
		g.rows = append(g.rows, int32(i))
	}
	return order, nil
}

// partitionValue renders a partition-key value as Fluss names partitions
// (PartitionUtils.convertValueOfType in Fluss 0.9): strings as they are,
// booleans and integers in decimal, binary values in lower-case hex, DATE
// as yyyy-MM-dd, TIME as HH-mm-ss_SSS, FLOAT and DOUBLE as Java prints
// them with "_" for ".", timestamps as yyyy-MM-dd-HH-mm-ss_ and the
// fraction of the second.
func partitionValue(col arrow.Array, i int) (string, error) {
	if col.IsNull(i) {
		return "", errors.New("is null (a partition key needs a value)")
	}
	switch a := col.(type) {
	case *array.String:
		return a.Value(i), nil
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), nil
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10), nil
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), nil
	case *array.Binary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.FixedSizeBinary:
		return hex.EncodeToString(a.Value(i)), nil
	case *array.Date32:
		d := time.Unix(int64(a.Value(i))*86400, 0).UTC()
		return fmt.Sprintf("%04d-%02d-%02d", d.Year(), int(d.Month()), d.Day()), nil
	case *array.Time32:
		ms := int64(a.Value(i))
		if a.DataType().(*arrow.Time32Type).Unit == arrow.Second {
			ms *= 1000
		}
		return timePartition(ms), nil
	case *array.Time64:
		div := int64(1000)
		if a.DataType().(*arrow.Time64Type).Unit == arrow.Nanosecond {
			div = 1000000
		}
		return timePartition(int64(a.Value(i)) / div), nil
	case *array.Float32:
		return floatPartition(float64(a.Value(i)), 32), nil
	case *array.Float64:
		return floatPartition(a.Value(i), 64), nil
	case *array.Timestamp:
		return timestampPartition(int64(a.Value(i)), a.DataType().(*arrow.TimestampType).Unit)
	}
	return "", fmt.Errorf("values of type %s cannot name a partition (supported: strings, booleans, integers, FLOAT, DOUBLE, binary, DATE, TIME, timestamps)", col.DataType())
}

// timePartition renders a millisecond of the day as HH-mm-ss_SSS.
func timePartition(ms int64) string {
	return fmt.Sprintf("%02d-%02d-%02d_%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}

// partitionID returns the id of a group's partition, creating the
// partition when the writer may (WriteCreatePartitions).
func (w *Writer) partitionID(ctx context.Context, g *partitionGroup) (int64, error) {
	p, err := w.c.PartitionByName(ctx, w.info, g.name)
	if err == nil {
		return p.ID, nil
	}
	if !errors.Is(err, errcode.PartitionNotExists) {
		return 0, fmt.Errorf("fluss: write to %s: %w", w.info.Path, err)
	}
	if !w.cfg.createPartitions {
		return 0, fmt.Errorf("fluss: write to %s: partition %q does not exist (create it, or let the writer create partitions)", w.info.Path, g.name)
	}
	if err := w.c.CreatePartition(ctx, w.info.Path, g.spec, true); err != nil {
		return 0, fmt.Errorf("fluss: write to %s: %w", w.info.Path, err)
	}
	// The new partition is in the metadata once the coordinator has made it.
	for attempt := 0; ; attempt++ {
		if p, err = w.c.PartitionByName(ctx, w.info, g.name); err == nil || !errors.Is(err, errcode.PartitionNotExists) || attempt >= 20 {
			break
		}
		w.c.forgetPartitions(w.info.Path)
		if serr := wire.Sleep(ctx, w.c.backoff().Delay(attempt)); serr != nil {
			return 0, fmt.Errorf("fluss: write to %s: partition %q created but not listed: %w", w.info.Path, g.name, serr)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("fluss: write to %s: partition %q created but not listed: %w", w.info.Path, g.name, err)
	}
	return p.ID, nil
}
