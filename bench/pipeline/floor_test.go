package pipeline_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// envClusterDir names the Fluss cluster's directory (scripts/fluss-cluster.sh
// --dir; the shared cluster's cluster.env sets it), whose data/tablet-*
// directories hold the table's log segments.
const envClusterDir = "FLUSS_CLUSTER_DIR"

// errSkipped is a stage that cannot run here; it is reported as "–".
var errSkipped = errors.New("skipped")

// segmentFiles returns the log segment files of the benchmark table.
func (bn *bench) segmentFiles() ([]string, error) {
	dir := os.Getenv(envClusterDir)
	if dir == "" {
		return nil, errSkipped
	}
	pattern := filepath.Join(dir, "data", "tablet-*", bn.table.Database, fmt.Sprintf("%s-%d", bn.table.Table, bn.tableID), "log-*", "*.log")
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", pattern, err)
	}
	if len(files) == 0 {
		return nil, errSkipped
	}
	return files, nil
}

// scanFloor measures the physical floor of a scan: the table's log batches
// read as stored (the bytes a FetchLog returns, here from the segment files
// rather than the network) and every Arrow buffer of every batch
// decompressed (one zstd decoder, output buffers reused), building no
// arrays and no rows. Its CPU per row is what the scanner's is compared
// with.
func (bn *bench) scanFloor() (result, error) {
	files, err := bn.segmentFiles()
	if err != nil {
		return result{}, err
	}
	fl, err := newFloor()
	if err != nil {
		return result{}, err
	}
	var ru0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	var rows int64
	bn.storedBytes = 0
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			bn.storedBytes += st.Size()
		}
		n, err := fl.segment(f)
		if err != nil {
			return result{}, err
		}
		rows += n
	}
	elapsed := time.Since(start)
	var ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := tv(ru1.Utime) + tv(ru1.Stime) - tv(ru0.Utime) - tv(ru0.Stime)
	if rows != bn.rows {
		return result{}, fmt.Errorf("the segments hold %d rows, the table %d", rows, bn.rows)
	}
	return result{Rows: rows, Seconds: elapsed.Seconds(), CPU: cpu, PeakRSSKB: ru1.Maxrss}, nil
}

func tv(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }

// schemaMessage is the Arrow IPC schema message of schema, to put in front
// of a record batch message so that arrow-go's stream reader reads it.
func schemaMessage(schema *arrow.Schema) []byte {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	_ = w.Close()
	return buf.Bytes()[:buf.Len()-8] // without the end-of-stream marker
}

// addIPCSizes adds the size of rec as one arrow_ipc message (a stream of the
// schema and the record batch, written as input/fluss does) with each
// arrow_ipc_compression to sizes.
func addIPCSizes(sizes map[string]int64, schema *arrow.Schema, rec arrow.RecordBatch) error {
	for codec, opt := range map[string][]ipc.Option{"none": nil, "lz4": {ipc.WithLZ4()}, "zstd": {ipc.WithZstd()}} {
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, append([]ipc.Option{ipc.WithSchema(schema)}, opt...)...)
		if err := w.Write(rec); err != nil {
			return fmt.Errorf("writing Arrow IPC (%s): %w", codec, err)
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("writing Arrow IPC (%s): %w", codec, err)
		}
		sizes[codec] += int64(buf.Len())
	}
	return nil
}
