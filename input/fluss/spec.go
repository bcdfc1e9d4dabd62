// Package flussinput provides the `fluss` batch input: it reads the log of an
// Apache Fluss table (log tables, and the changelog of primary-key tables)
// and commits the position of every acknowledged row to a Benthos cache, so
// that a restart resumes right after the last acknowledged row.
//
// The package registers the input in init(); a distribution enables it
// with a blank import.
package flussinput

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/flussmeta"
)

// Field names of the input's configuration.
const (
	fiFieldBootstrap          = "bootstrap_servers"
	fiFieldDatabase           = "database"
	fiFieldTable              = "table"
	fiFieldWaitForTable       = "wait_for_table"
	fiFieldSASL               = "sasl"
	fiFieldSASLMechanism      = "mechanism"
	fiFieldSASLUsername       = "username"
	fiFieldSASLPassword       = "password"
	fiFieldConnectTimeout     = "connect_timeout"
	fiFieldRequestTimeout     = "request_timeout"
	fiFieldColumns            = "columns"
	fiFieldTableType          = "table_type"
	fiFieldStartOffset        = "start_offset"
	fiFieldStartTimestamp     = "start_timestamp"
	fiFieldOnUnresumable      = "on_unresumable_offset"
	fiFieldEndAt              = "end_at"
	fiFieldPayloadFormat      = "payload_format"
	fiFieldArrowCompression   = "arrow_ipc_compression"
	fiFieldPartitions         = "partitions"
	fiFieldDiscoveryInterval  = "partition_discovery_interval"
	fiFieldBuckets            = "buckets"
	fiFieldShard              = "shard"
	fiFieldShardIndex         = "index"
	fiFieldShardCount         = "count"
	fiFieldCheckpointCache    = "checkpoint_cache"
	fiFieldCheckpointKey      = "checkpoint_key"
	fiFieldCheckpointLimit    = "checkpoint_limit"
	fiFieldOrdering           = "ordering"
	fiFieldAutoReplayNacks    = service.AutoRetryNacksToggleFieldName
	fiFieldBatching           = "batching"
	fiFieldFetchMaxBytes      = "fetch_max_bytes"
	fiFieldFetchMaxBucketByte = "fetch_max_bytes_per_bucket"
	fiFieldFetchMaxWait       = "fetch_max_wait"
	fiFieldMaxBatchRows       = "max_batch_rows"
	fiFieldSnapshotDir        = "snapshot_dir"
	fiFieldRemote             = "remote_storage"
	fiFieldRemoteS3           = "s3"
	fiFieldS3Endpoint         = "endpoint"
	fiFieldS3Region           = "region"
	fiFieldS3AccessKey        = "access_key"
	fiFieldS3SecretKey        = "secret_key"
	fiFieldS3SessionToken     = "session_token"
	fiFieldS3PathStyle        = "path_style"
	fiFieldReadAhead          = "read_ahead"
)

// Values of the enum fields.
const (
	startEarliest  = "earliest"
	startLatest    = "latest"
	startTimestamp = "timestamp"
	startSnapshot  = "snapshot"

	unresumableFail     = "fail"
	unresumableEarliest = "earliest"
	unresumableLatest   = "latest"

	endAtNone   = "none"
	endAtLatest = "latest"

	formatJSON       = "json"
	formatStructured = "structured"
	formatArrow      = "arrow_ipc"

	compressionNone = "none"
	compressionLZ4  = "lz4"
	compressionZstd = "zstd"

	orderingBucket = "bucket"
	orderingNone   = "none"

	tableTypeLog = "log"
	tableTypePK  = "primary_key"
)

// Metadata keys set on every message (their one home is internal/flussmeta,
// which the iggy output reads them from too).
const (
	metaDatabase   = flussmeta.Database
	metaTable      = flussmeta.Table
	metaTableID    = flussmeta.TableID
	metaPartition  = flussmeta.Partition
	metaPartID     = flussmeta.PartitionID
	metaBucket     = flussmeta.Bucket
	metaOffset     = flussmeta.Offset
	metaLastOffset = flussmeta.LastOffset
	metaTimestamp  = flussmeta.Timestamp
	metaChangeType = flussmeta.ChangeType
	metaSchemaID   = flussmeta.SchemaID
	metaMessageID  = flussmeta.MessageID
	metaSnapshotID = flussmeta.SnapshotID
)

// changeTypeColumn is the column prepended to arrow_ipc payloads of
// primary-key tables.
const changeTypeColumn = "_change_type"

const specDescription = `
Reads the log of one Fluss table: the rows of a log table, or the changelog (inserts, updates and
deletes) of a primary-key table. Every bucket of the table (of every partition, for partitioned
tables) is read in parallel through one connection per tablet server, and the columns named in
` + "`columns`" + ` are cut out by the server (projection push-down).

Tables of every log format are read (` + "`table.log.format`" + ` ARROW, COMPACTED and INDEXED) into the same
rows; for the row formats the columns are cut out by the input, as servers project ARROW logs only.
Log segments the cluster has tiered to its remote storage are read from there: a local path, or S3
(` + "`s3://`" + `, with the cluster's security tokens or the credentials in ` + "`remote_storage`" + `), streamed with
a bounded read-ahead while the next segment is fetched.

=== Payloads

With ` + "`payload_format: json`" + ` (the default) every row becomes one message holding a JSON
object keyed by column name, in the project's canonical JSON mapping (the text the Java fixture
tool prints): exact integers, decimals as strings with all their fraction digits, dates and
timestamps as ISO-8601 strings with the column's precision, bytes as base64, nested arrays, maps
and rows as JSON arrays and objects.

With ` + "`payload_format: arrow_ipc`" + ` every Fluss record batch (or slice of one, see
` + "`max_batch_rows`" + `) becomes one message holding a complete Arrow IPC stream: the schema
message, one record batch and the end-of-stream marker, readable by any Arrow library
(` + "`pyarrow.ipc.open_stream`" + `, arrow-go ` + "`ipc.NewReader`" + `). For primary-key
tables a ` + "`" + changeTypeColumn + "`" + ` string column (` + "`+I`, `-U`, `+U`, `-D`" + `) is
prepended to the table's columns. The rows of a message have consecutive offsets from
` + "`fluss_offset`" + ` to ` + "`fluss_last_offset`" + `.

=== Metadata

This input adds the following metadata fields to each message (numbers are typed integers):

- ` + "`" + metaDatabase + "`" + `: the database of the table.
- ` + "`" + metaTable + "`" + `: the table name.
- ` + "`" + metaTableID + "`" + `: the table id (it changes when a table is dropped and created again).
- ` + "`" + metaPartition + "`" + `: the partition name (partition values joined with ` + "`$`" + `); only for partitioned tables.
- ` + "`" + metaPartID + "`" + `: the partition id; only for partitioned tables.
- ` + "`" + metaBucket + "`" + `: the bucket the row was read from.
- ` + "`" + metaOffset + "`" + `: the log offset of the row; for ` + "`arrow_ipc`" + ` the offset of the message's first row.
- ` + "`" + metaLastOffset + "`" + `: for ` + "`arrow_ipc`" + ` only, the offset of the message's last row.
- ` + "`" + metaTimestamp + "`" + `: the commit time of the row's batch, in milliseconds since the Unix epoch.
- ` + "`" + metaChangeType + "`" + `: only for primary-key tables, the change type: ` + "`+I`" + ` (insert), ` + "`-U`" + ` (update before), ` + "`+U`" + ` (update after) or ` + "`-D`" + ` (delete). A log table's rows are all appends (` + "`+A`" + `), so it is not set there (` + "`@" + metaChangeType + ".or(\"+A\")`" + ` reads both kinds the same way); leaving it out keeps a message's 8 metadata keys in Go's smallest map, which took a quarter of the CPU off the json pipeline without a mapping (a seventh with the example's). For ` + "`arrow_ipc`" + ` messages it is set only when every row of the message has the same change type; the ` + "`" + changeTypeColumn + "`" + ` column carries it per row.
- ` + "`" + metaSchemaID + "`" + `: the id of the table schema the row was written with.
- ` + "`" + metaSnapshotID + "`" + `: with ` + "`start_offset: snapshot`" + `, on the rows of a bucket's KV snapshot only: the snapshot's id.
  Those rows are ` + "`+I`" + `, their ` + "`fluss_offset`" + ` is the log offset the snapshot covers (the bucket's changelog
  continues from there) and ` + "`fluss_timestamp`" + ` is 0.
- ` + "`" + metaMessageID + "`" + `: an id that is the same every time the same record is read again:
  ` + "`0x`" + ` and 32 hex digits packing the table id plus one (32 bits), the partition id plus one (32 bits, 0
  without partitions), the bucket (16) and the offset (48; the first row's for ` + "`arrow_ipc`" + `). The ` + "`iggy`" + `
  output takes it as ` + "`message_id: ${! @" + metaMessageID + " }`" + `, so that a record read again after a
  restart gets the id it had.

Bloblang can use them to route deletes (` + "`@fluss_change_type == \"-D\"`" + `), drop
update-before rows, or build keys from the table, partition and bucket.

=== Delivery guarantees

The input keeps, for every (partition, bucket) it reads, the next offset to read, and moves it
only over rows whose batches have been acknowledged by the output: acknowledgements may arrive in
any order, but the position never moves past a batch that has not been acknowledged. Positions are
written to the cache resource named by ` + "`checkpoint_cache`" + ` under ` + "`checkpoint_key`" + `,
as one JSON value for the table that also records the table id. Writes are coalesced (while one is
in progress further acknowledgements are gathered into the next), and every acknowledged position
is written before the input finishes a graceful shutdown. A bucket's position is also written when
the input starts reading it, so rows written while the pipeline is down are not skipped with
` + "`start_offset: latest`" + `.

On restart the input resumes every bucket exactly after its last written position: delivery is
at least once. After a crash, the rows delivered again are at most those of the batches that were in
flight, because a batch only stops counting against ` + "`checkpoint_limit`" + ` once its position
has been written: at most ` + "`checkpoint_limit`" + ` × ` + "`max_batch_rows`" + ` rows per
bucket set (without a ` + "`batching`" + ` policy; for ` + "`arrow_ipc`" + ` the rows of one record batch take the place of ` + "`max_batch_rows`" + `). Use a cache that survives crashes, such as
` + "`bbolt`" + ` or ` + "`redis`" + ` (the ` + "`memory`" + ` cache forgets everything on restart
and expires entries after five minutes by default).

A batch rejected by the output (a nack) is delivered again until it succeeds when
` + "`auto_replay_nacks`" + ` is true (the default): the input builds it again from the Arrow record
batches it keeps until the batch is acknowledged, before any new batch, with its buckets held back
under ` + "`ordering: bucket`" + `. Benthos's own replay keeps a copy of every message instead, which
makes each processor that changes a message in place (a ` + "`mutation`" + `, a ` + "`meta`" + ` assignment) clone it
first; here a ` + "`mutation`" + ` changes the row the input built. When ` + "`auto_replay_nacks`" + ` is false a
nacked batch's rows are skipped: the position moves past them and a warning names the bucket and
offsets.

A position that cannot be resumed, because the rows it points to have expired from the log
(` + "`table.log.ttl`" + `), or because the table was dropped and created again under the same name
(its table id changed), or because the stored value cannot be parsed, is handled by
` + "`on_unresumable_offset`" + `: by default the input refuses to start (and keeps retrying, logging
why), so nothing is skipped silently.

=== Start-up errors

What no retry can cure stops the pipeline at start-up with one message that names the field: a
database or table that does not exist (unless ` + "`wait_for_table: true`" + `, which waits for it,
looking again with a back-off that grows to a minute), a ` + "`table_type`" + `, ` + "`columns`" + `,
` + "`buckets`" + ` or ` + "`partitions`" + ` the table does not match, servers that are not Fluss
servers (such as an HTTP server) or that refuse the credentials. The ` + "`fluss-iggy`" + ` binary
then exits non-zero, printing ` + "`fluss-iggy: stopped: <the reason>`" + `. Anything else (a
refused connection, a moving leader, an unresumable checkpoint with
` + "`on_unresumable_offset: fail`" + `) is retried; each attempt is logged with its number and the
wait before the next, which doubles up to 30 seconds.

=== Metrics

- ` + "`fluss_input_rows`" + `, ` + "`fluss_input_batches`" + `, ` + "`fluss_input_bytes`" + `: rows, record batches and bytes (as stored, compressed) read from Fluss.
- ` + "`fluss_input_committed_offset`" + ` (labels ` + "`partition`" + `, ` + "`bucket`" + `): the position last written to the cache.
- ` + "`fluss_input_lag`" + ` (labels ` + "`partition`" + `, ` + "`bucket`" + `): the bucket's high watermark minus that position.
- ` + "`fluss_input_skipped_rows`" + `: rows skipped after a nack with ` + "`auto_replay_nacks: false`" + `.
- ` + "`fluss_input_stalled`" + `: 1 while the input is stalled (see ` + "`stall_timeout`" + `), else 0.
- ` + "`fluss_input_shard_count`" + `: ` + "`shard.count`" + `, exported only with ` + "`shard`" + `: fewer instances reporting it than its value means a shard is missing.
- ` + "`fluss_input_fetch_latency_ns`" + ` (timer, label ` + "`server`" + `: the tablet server id): the time of each fetch request to a tablet server, from sending it to receiving its answer; it includes the time the server holds a fetch waiting for data (up to ` + "`fetch_max_wait`" + `), so an idle table shows about ` + "`fetch_max_wait`" + `. Failed requests are not counted.

=== Logs and readiness

At start the input logs where each bucket starts and why: ` + "`Resuming table shop.orders bucket 2 at offset 1,234 (checkpoint)`" + `, or
` + "`Starting … (start_offset: earliest)`" + ` (with more than 16 buckets, one summary line, and the buckets' lines at debug level).
A streaming run (without ` + "`end_at`" + `) logs every 30 seconds the rows delivered since the last line, their rate and the
total lag, unless all three are 0, and once ` + "`Caught up with table …`" + ` when every bucket's committed offset has reached
the high watermark first seen for it (again after each stall).

A stall is no committed offset moving for ` + "`stall_timeout`" + ` while rows wait (lag above 0): the input logs a warning
naming the table, the lag and since when, sets ` + "`fluss_input_stalled`" + ` to 1, and Benthos's ` + "`/ready`" + ` answers 503 with the
reason as the input's error, until rows are acknowledged again (it logs that too). Reading and acknowledging go on all the
while. ` + "`/ready`" + ` can only change while the engine waits in the input (for rows from Fluss, for a free
` + "`checkpoint_limit`" + ` slot, for a nacked batch): when the output blocks with more batches allowed by ` + "`checkpoint_limit`" + `
than the pipeline holds, the engine waits to hand a batch to the pipeline instead, and only the metric and the warning
report the stall.

=== Sharing a table

Several instances can split one table between them with ` + "`shard`" + ` (or disjoint
` + "`buckets`" + ` lists); each needs its own ` + "`checkpoint_key`" + ` (the default key includes
the shard and the bucket list).
`

// Spec returns the configuration spec of the fluss input.
func Spec() *service.ConfigSpec {
	// Lint rules are compiled when they are set, and use our method: it
	// must be registered first. (Only core Bloblang methods are used
	// besides: plugin methods may not be registered yet during init.)
	registerLintMethod()
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Version("0.1.0").
		Summary("Reads the log of an Apache Fluss table, row by row as JSON or batch by batch as Arrow IPC, and commits acknowledged positions to a cache.").
		Description(specDescription).
		Fields(connectionFields()...).
		Fields(tableFields()...).
		Fields(positionFields()...).
		Fields(selectionFields()...).
		Fields(checkpointFields()...).
		Fields(fetchFields()...).
		Fields(snapshotDirField(), remoteField()).
		LintRule(lintCombinations()).
		Example("Stream a table into a file",
			"Reads every row of `shop.orders` from the beginning as JSON and keeps its position in a bbolt file, so a restart continues where it stopped.",
			`
input:
  fluss:
    bootstrap_servers: [ "127.0.0.1:9123" ]
    database: shop
    table: orders
    checkpoint_cache: checkpoints
output:
  file:
    path: ./orders.jsonl
    codec: lines
cache_resources:
  - label: checkpoints
    bbolt:
      path: ./data/checkpoints.db
`).
		Example("Route a primary-key table's changelog",
			"Reads only new changes of a primary-key table, drops update-before rows and marks deletes.",
			`
input:
  fluss:
    bootstrap_servers: [ "fluss-coordinator:9123" ]
    database: shop
    table: customers
    table_type: primary_key
    start_offset: latest
    checkpoint_cache: checkpoints
  processors:
    - mapping: |
        root = if @fluss_change_type == "-U" { deleted() } else { this }
        meta deleted = @fluss_change_type == "-D"
cache_resources:
  - label: checkpoints
    redis:
      url: redis://127.0.0.1:6379
`).
		Example("Backfill as Arrow",
			"Copies what a table holds now, as Arrow IPC record batches, and then stops.",
			`
input:
  fluss:
    bootstrap_servers: [ "127.0.0.1:9123" ]
    database: analytics
    table: events
    columns: [ event_id, user_id, ts ]
    payload_format: arrow_ipc
    end_at: latest
    checkpoint_cache: checkpoints
`).
		Example("Two instances share a table",
			"Run the same config with `index: 1` on a second machine; between them every (partition, bucket) is read once.",
			`
input:
  fluss:
    bootstrap_servers: [ "127.0.0.1:9123" ]
    database: shop
    table: orders
    shard: { index: 0, count: 2 }
    checkpoint_cache: checkpoints
`)
}

func init() {
	service.MustRegisterBatchInput("fluss", Spec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
		in, err := newInputFromParsed(conf, mgr)
		if err != nil {
			return nil, err
		}
		if in.conf.replayNacks {
			return newReplayer(in), nil
		}
		return in, nil
	})
}
