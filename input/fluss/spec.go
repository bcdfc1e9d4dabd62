// Package fluss provides the `fluss` batch input: it reads the log of an
// Apache Fluss table (log tables, and the changelog of primary-key tables)
// and commits the position of every acknowledged row to a Benthos cache, so
// that a restart resumes right after the last acknowledged row.
//
// The package registers the input in init(); a distribution enables it
// with a blank import.
package fluss

import (
	"github.com/redpanda-data/benthos/v4/public/service"
)

// Field names of the input's configuration.
const (
	fiFieldBootstrap          = "bootstrap_servers"
	fiFieldDatabase           = "database"
	fiFieldTable              = "table"
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
	fiFieldPartitions         = "partitions"
	fiFieldDiscoveryInterval  = "partition_discovery_interval"
	fiFieldBuckets            = "buckets"
	fiFieldShard              = "shard"
	fiFieldShardIndex         = "index"
	fiFieldShardCount         = "count"
	fiFieldCheckpointCache    = "checkpoint_cache"
	fiFieldCheckpointKey      = "checkpoint_key"
	fiFieldCheckpointLimit    = "checkpoint_limit"
	fiFieldBatching           = "batching"
	fiFieldFetchMaxBytes      = "fetch_max_bytes"
	fiFieldFetchMaxBucketByte = "fetch_max_bytes_per_bucket"
	fiFieldFetchMaxWait       = "fetch_max_wait"
	fiFieldMaxBatchRows       = "max_batch_rows"
)

// Values of the enum fields.
const (
	startEarliest  = "earliest"
	startLatest    = "latest"
	startTimestamp = "timestamp"

	unresumableFail     = "fail"
	unresumableEarliest = "earliest"
	unresumableLatest   = "latest"

	endAtNone   = "none"
	endAtLatest = "latest"

	formatJSON  = "json"
	formatArrow = "arrow_ipc"

	tableTypeLog = "log"
	tableTypePK  = "primary_key"
)

// Metadata keys set on every message.
const (
	metaDatabase   = "fluss_database"
	metaTable      = "fluss_table"
	metaTableID    = "fluss_table_id"
	metaPartition  = "fluss_partition"
	metaPartID     = "fluss_partition_id"
	metaBucket     = "fluss_bucket"
	metaOffset     = "fluss_offset"
	metaLastOffset = "fluss_last_offset"
	metaTimestamp  = "fluss_timestamp"
	metaChangeType = "fluss_change_type"
	metaSchemaID   = "fluss_schema_id"
)

// changeTypeColumn is the column prepended to arrow_ipc payloads of
// primary-key tables.
const changeTypeColumn = "_change_type"

const specDescription = `
Reads the log of one Fluss table: the rows of a log table, or the changelog (inserts, updates and
deletes) of a primary-key table. Every bucket of the table (of every partition, for partitioned
tables) is read in parallel through one connection per tablet server, and the columns named in
` + "`columns`" + ` are cut out by the server (projection push-down).

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
- ` + "`" + metaChangeType + "`" + `: the change type: ` + "`+A`" + ` (append, log tables), ` + "`+I`" + ` (insert), ` + "`-U`" + ` (update before), ` + "`+U`" + ` (update after) or ` + "`-D`" + ` (delete). For ` + "`arrow_ipc`" + ` messages it is set only when every row of the message has the same change type (always for log tables); the ` + "`" + changeTypeColumn + "`" + ` column carries it per row.
- ` + "`" + metaSchemaID + "`" + `: the id of the table schema the row was written with.

Bloblang can use them to route deletes (` + "`@fluss_change_type == \"-D\"`" + `), drop
update-before rows, or build keys and idempotent message ids from the table id, partition id,
bucket and offset.

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
` + "`auto_replay_nacks`" + ` is true (the default); when it is false its rows are skipped: the
position moves past them and a warning names the bucket and offsets.

A position that cannot be resumed, because the rows it points to have expired from the log
(` + "`table.log.ttl`" + `), or because the table was dropped and created again under the same name
(its table id changed), or because the stored value cannot be parsed, is handled by
` + "`on_unresumable_offset`" + `: by default the input refuses to start (and keeps retrying, logging
why), so nothing is skipped silently.

=== Metrics

- ` + "`fluss_input_rows`" + `, ` + "`fluss_input_batches`" + `, ` + "`fluss_input_bytes`" + `: rows, record batches and bytes (as stored, compressed) read from Fluss.
- ` + "`fluss_input_committed_offset`" + ` (labels ` + "`partition`" + `, ` + "`bucket`" + `): the position last written to the cache.
- ` + "`fluss_input_lag`" + ` (labels ` + "`partition`" + `, ` + "`bucket`" + `): the bucket's high watermark minus that position.
- ` + "`fluss_input_skipped_rows`" + `: rows skipped after a nack with ` + "`auto_replay_nacks: false`" + `.
- ` + "`fluss_input_fetch_latency_ns`" + ` (timer, label ` + "`server`" + `: the tablet server id): the time of each fetch request to a tablet server, from sending it to receiving its answer; it includes the time the server holds a fetch waiting for data (up to ` + "`fetch_max_wait`" + `), so an idle table shows about ` + "`fetch_max_wait`" + `. Failed requests are not counted.

=== Sharing a table

Several instances can split one table between them with ` + "`shard`" + ` (or disjoint
` + "`buckets`" + ` lists); each needs its own ` + "`checkpoint_key`" + ` (the default key includes
the shard and the bucket list).
`

// Spec returns the configuration spec of the fluss input.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Version("0.1.0").
		Summary("Reads the log of an Apache Fluss table, row by row as JSON or batch by batch as Arrow IPC, and commits acknowledged positions to a cache.").
		Description(specDescription).
		Fields(
			service.NewStringListField(fiFieldBootstrap).
				Description("Addresses (`host:port`) of Fluss servers (the coordinator or tablet servers) to ask for the cluster's metadata first.").
				Example([]string{"127.0.0.1:9123"}),
			service.NewStringField(fiFieldDatabase).
				Description("The database of the table to read.").
				Example("fluss"),
			service.NewStringField(fiFieldTable).
				Description("The table to read.").
				Example("orders"),
			service.NewObjectField(fiFieldSASL,
				service.NewStringEnumField(fiFieldSASLMechanism, "PLAIN").
					Description("The SASL mechanism. Fluss supports `PLAIN`.").
					Default("PLAIN"),
				service.NewStringField(fiFieldSASLUsername).
					Description("The user name."),
				service.NewStringField(fiFieldSASLPassword).
					Description("The password.").
					Secret(),
			).
				Description("SASL authentication, when the Fluss servers require it.").
				Optional(),
			service.NewDurationField(fiFieldConnectTimeout).
				Description("The longest time to open one connection to a Fluss server, including the handshake and authentication.").
				Default("10s").
				Advanced(),
			service.NewDurationField(fiFieldRequestTimeout).
				Description("The longest time to wait for the answer to one request (a fetch waits at most `fetch_max_wait` on the server, well within this).").
				Default("30s").
				Advanced(),
			service.NewStringListField(fiFieldColumns).
				Description("The columns to read, by name and in this order. The server sends only these columns. Empty reads every column in table order.").
				Example([]string{"id", "amount", "created_at"}).
				Default([]string{}),
			service.NewStringAnnotatedEnumField(fiFieldTableType, map[string]string{
				tableTypeLog: "The table must be a log table (no primary key).",
				tableTypePK:  "The table must be a primary-key table; its changelog is read.",
			}).
				Description("An optional assertion on the kind of the table, which is otherwise read from the table itself. A mismatch stops the input at start-up with an error.").
				Optional(),
			service.NewStringField(fiFieldStartOffset).
				Description("Where to start reading a bucket that has no checkpoint yet: `earliest` (the oldest row still stored), `latest` (only rows written from now on), `timestamp` (the first batch committed at or after `start_timestamp`), or a non-negative number (that offset in every bucket). Buckets with a checkpoint always resume from it, and partitions created while the input runs always start from `earliest`.").
				Examples("earliest", "latest", "timestamp", "1000").
				Default(startEarliest),
			service.NewStringField(fiFieldStartTimestamp).
				Description("The time to start from with `start_offset: timestamp`: an RFC 3339 time or milliseconds since the Unix epoch.").
				Examples("2026-01-31T12:00:00Z", "1769860800000").
				Optional(),
			service.NewStringAnnotatedEnumField(fiFieldOnUnresumable, map[string]string{
				unresumableFail:     "Refuse to start, logging which bucket and checkpoint are the cause. The input keeps retrying, so it starts once the cause is removed (for example the checkpoint deleted from the cache).",
				unresumableEarliest: "Log a warning and read the bucket from its oldest stored row.",
				unresumableLatest:   "Log a warning and read only rows written from now on.",
			}).
				Description("What to do with a checkpoint that cannot be resumed: its offset lies outside the bucket's log (the rows expired), the table was dropped and created again (its table id changed), or the stored value cannot be parsed. Also applies to a `start_offset` number outside a bucket's log.").
				Default(unresumableFail),
			service.NewStringAnnotatedEnumField(fiFieldEndAt, map[string]string{
				endAtNone:   "Stream forever, waiting for new rows.",
				endAtLatest: "Read up to the end offsets the buckets had when the input started, then end the input (and, in the CLI, the process) once every batch is acknowledged. For backfills and tests. Partitions created later are not read.",
			}).
				Description("When to stop reading.").
				Default(endAtNone),
			service.NewStringAnnotatedEnumField(fiFieldPayloadFormat, map[string]string{
				formatJSON:  "One message per row: a JSON object keyed by column name.",
				formatArrow: "One message per Fluss record batch: a complete Arrow IPC stream (schema and one record batch); primary-key tables get an extra `" + changeTypeColumn + "` column.",
			}).
				Description("The content of the messages.").
				Default(formatJSON),
			service.NewStringListField(fiFieldPartitions).
				Description("For partitioned tables, only read these partitions, by name (the partition values joined with `$` in partition-key order, e.g. `2026$01`). A listed partition that does not exist yet is read once it is created. Empty reads every partition.").
				Example([]string{"2026", "2027"}).
				Default([]string{}),
			service.NewDurationField(fiFieldDiscoveryInterval).
				Description("How often to look for partitions created (or dropped) while the input runs. New partitions are read from their first row. `0s` disables discovery.").
				Default("1m"),
			service.NewIntListField(fiFieldBuckets).
				Description("Only read these bucket numbers (of every partition). Empty reads every bucket. Cannot be combined with `shard`.").
				Example([]int{0, 1}).
				Default([]int{}),
			service.NewObjectField(fiFieldShard,
				service.NewIntField(fiFieldShardIndex).
					Description("The number of this instance, from 0 to `count` - 1."),
				service.NewIntField(fiFieldShardCount).
					Description("How many instances share the table."),
			).
				Description("Splits the (partition, bucket) pairs of the table between `count` instances: this instance reads the pairs with `(partition id + bucket) mod count == index` (partition id 0 for tables without partitions). Running instances `0` to `count-1` together reads every row exactly once between them.").
				Example(map[string]any{fiFieldShardIndex: 0, fiFieldShardCount: 2}).
				Optional(),
			service.NewStringField(fiFieldCheckpointCache).
				Description("The label of a cache resource that stores the read positions. It must exist when the input starts. Use a cache that survives restarts (`bbolt`, `redis`)."),
			service.NewStringField(fiFieldCheckpointKey).
				Description("The cache key holding the positions of this table. Default: `fluss_<database>_<table>`, followed by `_shard_<index>_of_<count>` with `shard`, `_buckets_<b>_<b>...` with `buckets` and `_partitions_<hash of the names>` with `partitions`. Instances reading different parts of a table need different keys.").
				Example("fluss_shop_orders").
				Optional().
				LintRule(`root = if this.contains("/") { [ "checkpoint_key must not contain '/'" ] }`),
			service.NewIntField(fiFieldCheckpointLimit).
				Description("The most batches in flight at once, counted from when a batch is read until its acknowledged position has been written to the cache. When reached, reading pauses (back-pressure; nothing is dropped). It also bounds the rows delivered again after a crash.").
				Default(1024).
				LintRule(`root = if this < 1 { [ "checkpoint_limit must be at least 1" ] }`),
			service.NewAutoRetryNacksToggleField(),
			service.NewBatchPolicyField(fiFieldBatching).
				Description("Optionally groups messages into larger batches before they enter the pipeline. Without it every batch holds the rows of one Fluss record batch (at most `max_batch_rows`)."),
			service.NewIntField(fiFieldFetchMaxBytes).
				Description("The most bytes one fetch request asks a tablet server for, over all its buckets.").
				Default(16<<20).
				Advanced(),
			service.NewIntField(fiFieldFetchMaxBucketByte).
				Description("The most bytes one fetch request asks for from one bucket.").
				Default(1<<20).
				Advanced(),
			service.NewDurationField(fiFieldFetchMaxWait).
				Description("How long a tablet server may hold a fetch request open while it has no new rows.").
				Default("500ms").
				Advanced(),
			service.NewIntField(fiFieldMaxBatchRows).
				Description("The most rows in one batch (for `arrow_ipc`, in one message); larger Fluss record batches are split without copying. `0` never splits. Default: 1024 with `payload_format: json`; with `arrow_ipc` every message is a whole record batch unless this is set.").
				Example(1024).
				Optional().
				Advanced(),
		).
		LintRule(`root = [
  if this.shard.or(null) != null && this.buckets.string() != "[]" { "set either buckets or shard, not both" } else { null },
  if this.start_offset.or("").string() == "timestamp" && this.start_timestamp.or(null) == null { "start_offset: timestamp needs start_timestamp" } else { null },
].filter(m -> m != null)`).
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
		return service.AutoRetryNacksBatchedToggled(conf, in)
	})
}
