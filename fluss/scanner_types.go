package fluss

import (
	"fmt"
	"strconv"

	"github.com/fluss-iggy/fluss-iggy/fluss/records"
)

// Release it when done; its arrays may alias the fetched bytes.
type ScanBatch struct {
	*records.Batch
	// Table is the table the batch belongs to.
	Table TablePath
	// Bucket identifies the bucket (table id, partition id, bucket id).
	Bucket TableBucket
	// Partition is the partition name ("" for non-partitioned tables).
	Partition string
	// HighWatermark is the bucket's high watermark when it was fetched:
	// the lag of the batch's last row is HighWatermark-Offset(NumRows()-1)-1.
	HighWatermark int64
	// Remote reports that the batch was read from a remote log segment.
	Remote bool
}

// BucketError is a non-retriable error of one bucket. The bucket is paused
// until SeekBucket or Unsubscribe.
type BucketError struct {
	Table     TablePath
	Bucket    TableBucket
	Partition string
	// Offset is the fetch offset that failed.
	Offset int64
	Err    error
}

// Error implements error.
func (e *BucketError) Error() string {
	return fmt.Sprintf("fluss: scan %s %s offset %d: %v", e.Table, describeBucket(e.Bucket, e.Partition), e.Offset, e.Err)
}

// Unwrap returns the cause.
func (e *BucketError) Unwrap() error { return e.Err }

// OffsetOutOfRangeError reports a fetch offset outside the bucket's log
// (LOG_OFFSET_OUT_OF_RANGE) together with the valid range [Earliest, Latest]
// (Latest is the high watermark; -1 when it could not be listed). The
// bucket is paused until SeekBucket or Unsubscribe. It unwraps to the server
// error (errors.Is(err, errcode.LogOffsetOutOfRange)).
type OffsetOutOfRangeError struct {
	Table            TablePath
	Bucket           TableBucket
	Partition        string
	Offset           int64
	Earliest, Latest int64
	Err              error
}

// Error implements error.
func (e *OffsetOutOfRangeError) Error() string {
	return fmt.Sprintf("fluss: scan %s %s: offset %d is out of range, the log holds [%d, %d): %v",
		e.Table, describeBucket(e.Bucket, e.Partition), e.Offset, e.Earliest, e.Latest, e.Err)
}

// Unwrap returns the server error.
func (e *OffsetOutOfRangeError) Unwrap() error { return e.Err }

func describeBucket(b TableBucket, partition string) string {
	if b.PartitionID == NoPartition {
		return "bucket " + strconv.Itoa(int(b.Bucket))
	}
	if partition == "" {
		partition = "id " + strconv.FormatInt(b.PartitionID, 10)
	}
	return "partition " + partition + " bucket " + strconv.Itoa(int(b.Bucket))
}

// ScanStats counts what a scanner fetched.
type ScanStats struct {
	// Fetches is the number of fetch responses received.
	Fetches int64
	// RecordsBytes is the size of the log batches received (as stored,
	// compressed), remote segments included.
	RecordsBytes int64
	// Batches and Rows count what Poll returned.
	Batches, Rows int64
}
