package flussinput

import (
	"strconv"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// Metric names.
const (
	metricRows        = "fluss_input_rows"
	metricBatches     = "fluss_input_batches"
	metricBytes       = "fluss_input_bytes"
	metricSkippedRows = "fluss_input_skipped_rows"
	metricLag         = "fluss_input_lag"
	metricCommitted   = "fluss_input_committed_offset"
	metricFetch       = "fluss_input_fetch_latency_ns"
	metricStalled     = "fluss_input_stalled"
	metricShardCount  = "fluss_input_shard_count"
)

// inputMetrics are the input's own metrics (Benthos adds label and path).
type inputMetrics struct {
	rows      *service.MetricCounter // rows read from Fluss
	batches   *service.MetricCounter // Fluss record batches read
	bytes     *service.MetricCounter // log batch bytes read (as stored)
	skipped   *service.MetricCounter // rows skipped after a nack (auto_replay_nacks: false)
	lag       *service.MetricGauge   // high watermark - committed offset, per bucket
	committed *service.MetricGauge   // committed (written) offset, per bucket
	fetch     *service.MetricTimer   // FetchLog round trips, per tablet server
	stalled   *service.MetricGauge   // 1 while the input is stalled (stall_timeout), else 0
}

func newInputMetrics(m *service.Metrics) *inputMetrics {
	return &inputMetrics{
		rows:      m.NewCounter(metricRows),
		batches:   m.NewCounter(metricBatches),
		bytes:     m.NewCounter(metricBytes),
		skipped:   m.NewCounter(metricSkippedRows),
		lag:       m.NewGauge(metricLag, "partition", "bucket"),
		committed: m.NewGauge(metricCommitted, "partition", "bucket"),
		fetch:     m.NewTimer(metricFetch, "server"),
		stalled:   m.NewGauge(metricStalled),
	}
}

// exportShardCount exports shard.count (only a sharded input has the
// series): an alert that counts the instances reporting it against the
// value spots a shard that is down.
func exportShardCount(m *service.Metrics, count int) {
	if count > 0 {
		m.NewGauge(metricShardCount).Set(int64(count))
	}
}

// observeFetch records the latency of a FetchLog request that was answered,
// labelled with the tablet server's id (one series per server of the
// cluster). Failed requests are left out: their duration is that of a
// timeout or a broken connection, not of a fetch.
func (m *inputMetrics) observeFetch(f fluss.FetchInfo) {
	if f.Err != nil {
		return
	}
	m.fetch.Timing(f.Duration.Nanoseconds(), strconv.Itoa(int(f.Server)))
}

// bucketLabels returns the label values of a bucket: the partition name
// ("" for tables without partitions) and the bucket number.
func bucketLabels(partition string, k bucketKey) (string, string) {
	return partition, strconv.Itoa(int(k.bucket))
}
