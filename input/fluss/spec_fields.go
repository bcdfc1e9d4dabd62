package flussinput

import (
	"github.com/redpanda-data/benthos/v4/public/service"
)

// The fields of the spec, in documentation order. Each field's lint rule
// runs parseConfig's check of it (lint.go). Numbers and booleans are "any"
// fields whose checks include the type, so that `fluss-iggy lint` rejects
// `checkpoint_limit: lots` (Benthos does not lint number types, and skips
// every rule of a value its declared type cannot decode).

// Limits of numeric fields that are not in the protocol's int32 range or
// would allocate without bound.
const (
	maxInt32           = 1<<31 - 1
	maxCheckpointLimit = 1 << 20
	maxShardCount      = 1 << 16
)

// connectionFields: where the table is and how to reach it.
func connectionFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringListField(fiFieldBootstrap).
			Description("Addresses (`host:port`) of Fluss servers (the coordinator or tablet servers) to ask for the cluster's metadata first.").
			Example([]string{"127.0.0.1:9123"}).
			LintRule(lintRule(fiFieldBootstrap)),
		service.NewStringField(fiFieldDatabase).
			Description("The database of the table to read.").
			Example("fluss").
			LintRule(lintRule(fiFieldDatabase)),
		service.NewStringField(fiFieldTable).
			Description("The table to read.").
			Example("orders").
			LintRule(lintRule(fiFieldTable)),
		service.NewAnyField(fiFieldWaitForTable).
			Description("`true` or `false`. When the database or the table does not exist: `false` stops the pipeline at start-up with an error; `true` waits for them to be created, looking again with a back-off that grows to a minute and logging each attempt.").
			Default(false).
			LintRule(lintRule(fiFieldWaitForTable)),
		service.NewObjectField(fiFieldSASL,
			service.NewStringEnumField(fiFieldSASLMechanism, "PLAIN").
				Description("The SASL mechanism. Fluss supports `PLAIN`.").
				Default("PLAIN").
				LintRule(lintRule(saslMechanismPath)),
			service.NewStringField(fiFieldSASLUsername).
				Description("The user name.").
				LintRule(lintRule(saslUsernamePath)),
			service.NewStringField(fiFieldSASLPassword).
				Description("The password.").
				Secret(),
		).
			Description("SASL authentication, when the Fluss servers require it.").
			Optional(),
		service.NewDurationField(fiFieldConnectTimeout).
			Description("The longest time to open one connection to a Fluss server, including the handshake and authentication.").
			Default("10s").
			Advanced().
			LintRule(lintRule(fiFieldConnectTimeout)),
		service.NewDurationField(fiFieldRequestTimeout).
			Description("The longest time to wait for the answer to one request (a fetch waits at most `fetch_max_wait` on the server, well within this).").
			Default("30s").
			Advanced().
			LintRule(lintRule(fiFieldRequestTimeout)),
	}
}

// tableFields: what to read of the table.
func tableFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringListField(fiFieldColumns).
			Description("The columns to read, by name and in this order. The server sends only these columns. Empty reads every column in table order. A column the table lacks stops the pipeline at start-up.").
			Example([]string{"id", "amount", "created_at"}).
			Default([]string{}).
			LintRule(lintRule(fiFieldColumns)),
		service.NewStringAnnotatedEnumField(fiFieldTableType, map[string]string{
			tableTypeLog: "The table must be a log table (no primary key).",
			tableTypePK:  "The table must be a primary-key table; its changelog is read.",
		}).
			Description("An optional assertion on the kind of the table, which is otherwise read from the table itself. A mismatch stops the pipeline at start-up with an error.").
			Optional().
			LintRule(lintRule(fiFieldTableType)),
	}
}

// positionFields: where to start and stop, and what to deliver.
func positionFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringField(fiFieldStartOffset).
			Description("Where to start reading a bucket that has no checkpoint yet: `earliest` (the oldest row still stored), `latest` (only rows written from now on), `timestamp` (the first batch committed at or after `start_timestamp`), `snapshot` (primary-key tables: the latest KV snapshot of the bucket, every live row as `+I`, then the changelog from the offset the snapshot covers; a bucket without a snapshot yet reads its changelog from the start), or a non-negative number (that offset in every bucket). Buckets with a checkpoint always resume from it, and partitions created while the input runs always start from `earliest`.").
			Examples("earliest", "latest", "timestamp", "snapshot", "1000").
			Default(startEarliest).
			LintRule(lintRule(fiFieldStartOffset)),
		service.NewStringField(fiFieldStartTimestamp).
			Description("The time to start from with `start_offset: timestamp` (and only then): an RFC 3339 time or milliseconds since the Unix epoch.").
			Examples("2026-01-31T12:00:00Z", "1769860800000").
			Optional().
			LintRule(lintRule(fiFieldStartTimestamp)),
		service.NewStringAnnotatedEnumField(fiFieldOnUnresumable, map[string]string{
			unresumableFail:     "Refuse to start, logging which bucket and checkpoint are the cause. The input keeps retrying, so it starts once the cause is removed (for example the checkpoint deleted from the cache).",
			unresumableEarliest: "Log a warning and read the bucket from its oldest stored row.",
			unresumableLatest:   "Log a warning and read only rows written from now on.",
		}).
			Description("What to do with a checkpoint that cannot be resumed: its offset lies outside the bucket's log (the rows expired), the table was dropped and created again (its table id changed), or the stored value cannot be parsed. Also applies to a `start_offset` number outside a bucket's log, and to a KV snapshot (`start_offset: snapshot`) the cluster deleted before the bucket was read to its end (Fluss keeps few; `kv.snapshot.interval` sets how often it takes them; a snapshot deleted before any of its rows was read is replaced by the bucket's newer latest one whatever this field says, as that loses and repeats nothing; this field decides when there is none): `earliest` then reads the bucket's latest snapshot from its start (rows of the older snapshot already delivered may hold keys deleted since: a consumer that keeps state should treat a new `fluss_snapshot_id` as a refresh of that bucket; when the latest is the very snapshot that could not be read, it is tried again after a pause growing from 1s to 30s, with a warning each time, until it opens or the server has a newer one; the other buckets' snapshots and changelogs are read meanwhile), `latest` continues from the changelog's end.").
			Default(unresumableFail).
			LintRule(lintRule(fiFieldOnUnresumable)),
		service.NewStringAnnotatedEnumField(fiFieldEndAt, map[string]string{
			endAtNone:   "Stream forever, waiting for new rows.",
			endAtLatest: "Read up to the end offsets the buckets had when the input started, then end the input (and, in the CLI, the process) once every batch is acknowledged. For backfills and tests. Partitions created later are not read. Progress (rows done of rows to read, rate, time left) is logged every few seconds.",
		}).
			Description("When to stop reading.").
			Default(endAtNone).
			LintRule(lintRule(fiFieldEndAt)),
		service.NewStringAnnotatedEnumField(fiFieldPayloadFormat, map[string]string{
			formatJSON:       "One message per row: a JSON object keyed by column name (the canonical JSON of `docs/json-mapping.md`, columns in table order).",
			formatStructured: "One message per row, handed over as a structured value (the object its canonical JSON decodes to, built straight from the Arrow columns) so that a Bloblang mapping reads it without parsing JSON; the `iggy` output serialises it with keys sorted, as Benthos does. Cheaper than `json` when the pipeline has a mapping, dearer without one (then the bytes are ready-made).",
			formatArrow:      "One message per Fluss record batch: a complete Arrow IPC stream (schema and one record batch); primary-key tables get an extra `" + changeTypeColumn + "` column.",
		}).
			Description("The content of the messages.").
			Default(formatJSON).
			LintRule(lintRule(fiFieldPayloadFormat)),
		service.NewStringAnnotatedEnumField(fiFieldArrowCompression, map[string]string{
			compressionNone: "Uncompressed Arrow buffers: the largest messages, the least CPU for the input and for readers.",
			compressionLZ4:  "LZ4 frame compression of each buffer (Arrow IPC body compression): fast, smaller messages.",
			compressionZstd: "Zstandard compression of each buffer: the smallest messages, more CPU.",
		}).
			Description("With `payload_format: arrow_ipc`, how the record batch's buffers are compressed (Arrow IPC body compression; pyarrow and arrow-go readers decompress transparently). Fluss's own compression is undone when batches are decoded, so without this the messages are several times larger than the table's stored batches. Ignored for `json`.").
			Default(compressionNone).
			Advanced().
			LintRule(lintRule(fiFieldArrowCompression)),
	}
}

// snapshotDirField: where start_offset: snapshot downloads snapshot files.
func snapshotDirField() *service.ConfigField {
	return service.NewStringField(fiFieldSnapshotDir).
		Description("With `start_offset: snapshot`, the directory where a bucket's KV snapshot files (RocksDB SST files) are downloaded while it is read. One snapshot is on disk at a time; its files are removed when it has been read, on close, and, after a crash, by the next start. Empty: the system's temporary directory.").
		Default("").
		Advanced()
}

// selectionFields: which partitions and buckets this instance reads.
func selectionFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringListField(fiFieldPartitions).
			Description("For partitioned tables, only read these partitions, by name (the partition values joined with `$` in partition-key order, e.g. `2026$01`). A listed partition that does not exist yet is read once it is created. Empty reads every partition. Set on a table without partitions, it stops the pipeline at start-up.").
			Example([]string{"2026", "2027"}).
			Default([]string{}).
			LintRule(lintRule(fiFieldPartitions)),
		service.NewDurationField(fiFieldDiscoveryInterval).
			Description("How often to look for partitions created (or dropped) while the input runs. New partitions are read from their first row. `0s` disables discovery.").
			Default("1m").
			LintRule(lintRule(fiFieldDiscoveryInterval)),
		service.NewAnyListField(fiFieldBuckets).
			Description("Only read these bucket numbers (whole numbers from 0) of every partition. Empty reads every bucket. Cannot be combined with `shard`.").
			Example([]int{0, 1}).
			Default([]any{}).
			LintRule(lintRule(fiFieldBuckets)),
		service.NewObjectField(fiFieldShard,
			service.NewAnyField(fiFieldShardIndex).
				Description("The number of this instance, a whole number from 0 to `count` - 1, or a name ending in `-<number>` that gives it: a StatefulSet's pod name (`${POD_NAME}` from the downward API; `fluss-iggy-2` is shard 2), so that each pod's ordinal is its shard (see `deploy/kubernetes`).").
				Example(0).Example("fluss-iggy-2").
				LintRule(lintRule(shardIndexPath)),
			service.NewAnyField(fiFieldShardCount).
				Description("How many instances share the table, a whole number from 1.").
				LintRule(lintRule(shardCountPath)),
		).
			Description("Splits the (partition, bucket) pairs of the table between `count` instances: this instance reads the pairs with `(partition id + bucket) mod count == index` (partition id 0 for tables without partitions). Running instances `0` to `count-1` together reads every row exactly once between them.").
			Example(map[string]any{fiFieldShardIndex: 0, fiFieldShardCount: 2}).
			Optional().
			LintRule(lintRule(fiFieldShard)),
	}
}

// checkpointFields: where positions are committed, and how many batches
// may be in flight.
func checkpointFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringField(fiFieldCheckpointCache).
			Description("The label of a cache resource that stores the read positions. It must exist when the input starts; the shipped ones are in `config/resources/` (`fluss-iggy run -r config/resources/bbolt.yaml …`). Use a cache that survives restarts (`bbolt`, `redis`).").
			LintRule(lintRule(fiFieldCheckpointCache)),
		service.NewStringField(fiFieldCheckpointKey).
			Description("The cache key holding the positions of this table. Default: `fluss_<database>_<table>`, followed by `_buckets_<b>_<b>...` with `buckets` and `_partitions_<hash of the names>` with `partitions`. Instances reading different parts of a table with `buckets` or `partitions` need different keys. With `shard`, each bucket's position has a key of its own, `<checkpoint_key>_bucket_<b>` (`<checkpoint_key>_p<partition id>_bucket_<b>` in a partitioned table), so that any number of shards, changed at any time, and an instance without `shard` find every bucket's committed offset; a bucket whose key is missing is looked up in the value under `checkpoint_key` (written by a run without `shard`), and an instance without `shard` looks up the per-bucket keys the same way. When both hold a position of a bucket, the furthest is taken (each was written only after the rows below it were acknowledged).").
			Example("fluss_shop_orders").
			Optional().
			LintRule(lintRule(fiFieldCheckpointKey)),
		service.NewAnyField(fiFieldCheckpointLimit).
			Description("The most batches in flight at once (a whole number from 1 to 1048576), counted from when a batch is read until its acknowledged position has been written to the cache. When reached, reading pauses (back-pressure; nothing is dropped). It also bounds the rows delivered again after a crash.").
			Default(1024).
			LintRule(lintRule(fiFieldCheckpointLimit)),
		service.NewStringAnnotatedEnumField(fiFieldOrdering, map[string]string{
			orderingBucket: "At most one batch per bucket is in flight: the next batch of a bucket is handed out once the previous one is acknowledged. Rows of a bucket (and so the changes of a key of a primary-key table) reach the output in log order whatever `pipeline.threads` and the output's `max_in_flight`; batches of different buckets still go in parallel, so a table with N buckets can keep N batches busy. This holds while each batch reaches the output whole: an output `batching` policy re-cuts batches (one input batch can end up in two output batches written at once), so with it keep the output's `max_in_flight: 1`, or batch here (this input's `batching` keeps its batches whole) and leave the output's out.",
			orderingNone:   "Batches are handed out as they are read, several per bucket at once: a little faster on append-only tables, but with `pipeline.threads` or `max_in_flight` above 1 the rows of a bucket can reach the output out of order.",
		}).
			Description("Whether the input keeps the rows of each bucket in order through a parallel pipeline.").
			Default(orderingBucket).
			LintRule(lintRule(fiFieldOrdering)),
		service.NewAnyField(fiFieldAutoReplayNacks).
			Description("`true` or `false`. Whether a batch the output rejects (nacks) is delivered again, as often as it takes (after the second attempt with a pause growing from 1 ms to 1 s), which holds its rows and, under `ordering: bucket`, its buckets back until it succeeds: a persistent failure becomes back pressure. The input builds the batch again from the Arrow record batches it keeps until the batch is acknowledged, so the pipeline may change messages in place. With `false` the rows of a nacked batch are skipped with a warning and counted in `fluss_input_skipped_rows`, and the record batches are let go as soon as their messages are built.").
			Default(true).
			LintRule(lintRule(fiFieldAutoReplayNacks)),
		stallTimeoutField(),
		service.NewBatchPolicyField(fiFieldBatching).
			Description("Optionally groups messages into larger batches before they enter the pipeline. Without it every batch holds the rows of one Fluss record batch (at most `max_batch_rows`)."),
	}
}

// fetchFields: how much one fetch asks for.
func fetchFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewAnyField(fiFieldFetchMaxBytes).
			Description("The most bytes one fetch request asks a tablet server for, over all its buckets (a whole number from 1).").
			Default(16 << 20).
			Advanced().
			LintRule(lintRule(fiFieldFetchMaxBytes)),
		service.NewAnyField(fiFieldFetchMaxBucketByte).
			Description("The most bytes one fetch request asks for from one bucket (a whole number from 1). A tablet server cuts a response at this limit, usually inside a record batch, which is then fetched again whole: a limit of several batches fetches fewer bytes twice. The input keeps 1 MiB (the library's `fluss scan` uses 4 MiB) because each fetched byte becomes many more in messages waiting for the output: with 4 MiB, the no-mapping json pipeline over 300,000 rows of the `make bench` table fetched a third fewer bytes but peaked at 1.7x the memory.").
			Default(1 << 20).
			Advanced().
			LintRule(lintRule(fiFieldFetchMaxBucketByte)),
		service.NewDurationField(fiFieldFetchMaxWait).
			Description("How long a tablet server may hold a fetch request open while it has no new rows.").
			Default("500ms").
			Advanced().
			LintRule(lintRule(fiFieldFetchMaxWait)),
		service.NewAnyField(fiFieldMaxBatchRows).
			Description("The most rows in one batch (for `arrow_ipc`, in one message), a whole number; larger Fluss record batches are split without copying. `0` never splits. Default: 1024 with `payload_format: json`; with `arrow_ipc` every message is a whole record batch unless this is set.").
			Example(1024).
			Optional().
			Advanced().
			LintRule(lintRule(fiFieldMaxBatchRows)),
	}
}

// remoteField: how tiered (remote) log segments are read.
func remoteField() *service.ConfigField {
	return service.NewObjectField(fiFieldRemote,
		service.NewObjectField(fiFieldRemoteS3,
			service.NewStringField(fiFieldS3Endpoint).
				Description("The S3 endpoint, `http(s)://host:port` (or `host[:port]` for HTTPS). Empty: the one in the cluster's security token, else AWS S3.").
				Example("http://127.0.0.1:8333").
				Default(""),
			service.NewStringField(fiFieldS3Region).
				Description("The bucket's region. Empty: the token's, else `us-east-1`.").
				Default(""),
			service.NewStringField(fiFieldS3AccessKey).
				Description("A static access key. Empty: credentials come from the cluster's file-system security tokens (renewed before they expire), as the Java client's do.").
				Default(""),
			service.NewStringField(fiFieldS3SecretKey).
				Description("The secret key of `access_key` (both or neither).").
				Default("").
				Secret(),
			service.NewStringField(fiFieldS3SessionToken).
				Description("A session token that goes with temporary `access_key`/`secret_key` credentials.").
				Default("").
				Secret(),
			service.NewBoolField(fiFieldS3PathStyle).
				Description("Address buckets as `endpoint/bucket/key` (most S3-compatible servers) instead of `bucket.endpoint/key`.").
				Default(false),
		).Description("S3 settings for a cluster whose `remote.data.dir` is `s3://` (or `s3a://`)."),
		service.NewAnyField(fiFieldReadAhead).
			Description("The most bytes of one remote segment downloaded ahead of the decoder (a whole number from 1); downloads are streamed, never buffered whole.").
			Default(2<<20).
			LintRule(lintRule(readAheadPath)),
	).
		Description("Reading log segments that the cluster has tiered to its remote storage (`remote.data.dir`), which happens when a bucket is read from further back than its tablet servers keep. Local paths (visible at the same path to this process) need nothing; S3 works with the cluster's security tokens, or with the credentials given here.").
		Advanced()
}
