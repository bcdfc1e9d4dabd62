package flussoutput

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/internal/speclint"
)

// Field names.
const (
	foFieldBootstrap        = "bootstrap_servers"
	foFieldDatabase         = "database"
	foFieldTable            = "table"
	foFieldWaitForTable     = "wait_for_table"
	foFieldSASL             = "sasl"
	foFieldSASLMechanism    = "mechanism"
	foFieldSASLUsername     = "username"
	foFieldSASLPassword     = "password"
	foFieldConnectTimeout   = "connect_timeout"
	foFieldRequestTimeout   = "request_timeout"
	foFieldChangeType       = "change_type"
	foFieldUnknownColumns   = "unknown_columns"
	foFieldCreatePartitions = "create_partitions"
	foFieldAcks             = "acks"
	foFieldIdempotent       = "idempotent"
	foFieldDedupe           = "dedupe"
	foFieldDedupeCache      = "cache"
	foFieldDedupeKey        = "key"
	foFieldDedupeSource     = "source_metadata"
	foFieldDedupeOffset     = "offset_metadata"
	foFieldWriteTimeout     = "write_timeout"
	foFieldMaxInFlight      = "max_in_flight"
	foFieldConnections      = "connections_per_server"
	foFieldBatching         = "batching"
)

// Values of enum fields.
const (
	acksAll    = "all"
	acksLeader = "leader"
	acksNone   = "none"

	unknownError  = "error"
	unknownIgnore = "ignore"
)

const specDescription = `
Each message is one row: a JSON object whose keys are the table's column names, with values in the canonical
JSON mapping the ` + "`fluss`" + ` input writes (docs/json-mapping.md: DECIMAL as a string or a number with at most its
scale's digits, BYTES as base64, DATE ` + "`2026-12-05`" + `, TIMESTAMP ` + "`2026-12-05T10:00:00.123`" + `, TIMESTAMP_LTZ with ` + "`Z`" + ` or
an offset, MAP as an object or a list of key/value objects, ROW as an object). A missing column is null; a message
that does not fit the table (a value of the wrong type, a null in a NOT NULL column, an unknown column unless
` + "`unknown_columns: ignore`" + `) fails on its own with an error naming the column and the value, and the rest of the
batch is written.

What a row does comes from ` + "`change_type`" + ` (by default the ` + "`fluss_change_type`" + ` metadata the ` + "`fluss`" + `
input sets, which the ` + "`iggy`" + ` output keeps as a header and the ` + "`iggy`" + ` input restores):

| change type | log table | primary-key table |
|---|---|---|
| empty, ` + "`+A`" + `, ` + "`+I`" + ` | append | upsert |
| ` + "`+U`" + ` | refused | upsert |
| ` + "`-U`" + ` | refused | skipped (the ` + "`+U`" + ` that follows carries the new row) |
| ` + "`-D`" + ` | refused | delete (only the primary-key columns are read) |

Rows go where the Java client sends them: a primary-key table's by the bucket key's hash, a log table's by its bucket
key when it has one, else each batch to one bucket, the next in turn; a partitioned table's to the partition their
partition-key columns name (missing partitions are created with ` + "`create_partitions: true`" + `, else the rows fail
naming the partition). Batches are encoded in the table's log format (ARROW, COMPACTED or INDEXED) and KV format,
compressed with its codec. A batch is acknowledged only once every bucket it wrote to has acknowledged (` + "`acks`" + `).

Keep ` + "`max_in_flight: 1`" + ` (the default) for primary-key tables: batches in flight at once can reach the server
out of order, and the later state of a key would then depend on which arrived last (and ` + "`pipeline.threads: 1`" + `,
as ` + "`config/iggy_to_fluss.yaml`" + ` does, for the same reason).

What no retry can cure stops the pipeline at connect with the reason, and the process exits 1: servers that are not
Fluss servers or refuse the credentials, a missing table without ` + "`wait_for_table`" + `, a table the writer cannot write
(a type this release does not know). Servers that cannot be reached are retried with a back-off.`

// Spec is the configuration spec of the fluss output.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Version("0.1.0").
		Summary("Writes rows to an Apache Fluss table: appends to log tables, upserts and deletes on primary-key tables, partitions from the rows.").
		Description(specDescription).
		Fields(connectionFields()...).
		Fields(rowFields()...).
		Fields(deliveryFields()...)
}

func connectionFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringListField(foFieldBootstrap).
			Description("Addresses (`host:port`) of Fluss servers (the coordinator or tablet servers) to ask for the cluster's metadata first.").
			Example([]string{"127.0.0.1:9123"}),
		service.NewStringField(foFieldDatabase).
			Description("The database of the table to write.").
			Example("fluss"),
		service.NewStringField(foFieldTable).
			Description("The table to write. It must exist: create it with the Fluss CLI, Flink SQL or `fluss-java.sh create-table`.").
			Example("orders_copy"),
		service.NewBoolField(foFieldWaitForTable).
			Description("When the table does not exist: `false` stops the pipeline, saying so (the process exits 1); `true` waits for it, looking again with a back-off that grows to a minute.").
			Default(false),
		service.NewObjectField(foFieldSASL,
			service.NewStringEnumField(foFieldSASLMechanism, "PLAIN").
				Description("The SASL mechanism. Fluss supports `PLAIN`.").
				Default("PLAIN"),
			service.NewStringField(foFieldSASLUsername).
				Description("The user name."),
			service.NewStringField(foFieldSASLPassword).
				Description("The password.").
				Secret(),
		).
			Description("SASL authentication, when the Fluss servers require it.").
			Optional(),
		service.NewDurationField(foFieldConnectTimeout).
			Description("The longest time to open one connection to a Fluss server, including the handshake and authentication.").
			Default("10s").
			Advanced().
			LintRule(speclint.PositiveDuration(foFieldConnectTimeout)),
		service.NewDurationField(foFieldRequestTimeout).
			Description("The longest time to wait for the answer to one request other than a write.").
			Default("30s").
			Advanced().
			LintRule(speclint.PositiveDuration(foFieldRequestTimeout)),
	}
}

// metaChangeType is the metadata key the fluss input sets.
const metaChangeType = "fluss_change_type"

// defaultChangeType is change_type's default: the metaChangeType metadata.
const defaultChangeType = `${! @` + metaChangeType + `.or("") }`

func rowFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewInterpolatedStringField(foFieldChangeType).
			Description("The change type of each message's row: `+A` or `+I` (insert; also an empty value), `+U` (update), `-U` (the row before an update: skipped), `-D` (delete). See the table above.").
			Default(defaultChangeType),
		service.NewStringAnnotatedEnumField(foFieldUnknownColumns, map[string]string{
			unknownError:  "A key that is not a column of the table fails the message.",
			unknownIgnore: "Keys that are not columns are ignored.",
		}).
			Description("What a JSON key that is not a column of the table does.").
			Default(unknownError).
			LintRule(speclint.Enum(foFieldUnknownColumns, unknownError, unknownIgnore)),
		service.NewBoolField(foFieldCreatePartitions).
			Description("Create a partition that a row names and the table lacks (partitioned tables). When false such rows fail, naming the partition.").
			Default(false),
	}
}

func deliveryFields() []*service.ConfigField {
	return []*service.ConfigField{
		service.NewStringAnnotatedEnumField(foFieldAcks, map[string]string{
			acksAll:    "Every in-sync replica has the rows (the Java client's `acks: all`, -1).",
			acksLeader: "The bucket's leader has them (1).",
			acksNone:   "The request was sent (0); nothing is known of the write.",
		}).
			Description("What a write waits for before its batch is acknowledged.").
			Default(acksAll).
			LintRule(speclint.Enum(foFieldAcks, acksAll, acksLeader, acksNone)),
		service.NewBoolField(foFieldIdempotent).
			Description("Number the batches with a writer id and a per-bucket sequence, as the Java client does by default, so that a batch whose answer was lost (a timeout, a dropped connection, a leader change) is sent again and the servers keep it once. Each bucket then has one batch in flight at a time. When unset it is on with `acks: all` and off with `leader` or `none`; setting it true with those is an error. It does not span restarts: rows written but not yet acknowledged to the input when the process dies are written again.").
			Optional().
			Advanced(),
		service.NewObjectField(foFieldDedupe,
			service.NewStringField(foFieldDedupeCache).
				Description("The cache resource the journal is kept in (a `bbolt` file or `redis`, which outlive the process)."),
			service.NewStringField(foFieldDedupeKey).
				Description("The prefix of the journal's cache keys; empty: `fluss_output/<database>.<table>`. Give each output writing the same table its own.").
				Default(""),
			service.NewStringListField(foFieldDedupeSource).
				Description("The metadata keys whose values, joined with `/`, name the source a message's offset counts in (the `iggy` input's by default).").
				Default([]any{"iggy_stream", "iggy_topic", "iggy_partition"}),
			service.NewStringField(foFieldDedupeOffset).
				Description("The metadata key of the message's offset in its source, an integer.").
				Default("iggy_offset"),
		).
			Description("Appends to a log table survive a crash without repeats: before a batch is sent, a journal in a cache records where its Fluss batches go (bucket, writer id, sequence) and which source positions its rows came from; after a restart, messages the input delivers again whose batches the table holds are acknowledged without being written. Needs `idempotent`. A primary-key table needs none (an upsert written twice leaves the same row): there it is off.").
			Optional().
			Advanced(),
		service.NewDurationField(foFieldWriteTimeout).
			Description("How long the servers may take to replicate a write (the request's timeout).").
			Default("30s").
			Advanced().
			LintRule(speclint.PositiveDuration(foFieldWriteTimeout)),
		speclint.IntField(foFieldConnections).
			Description("How many connections to each tablet server the writes are spread over; a bucket always takes the same one (bucket mod this), so its batches keep their order. A Fluss server handles the requests of one connection one after another: with more than one, it writes several buckets of a batch at once (upserts into a table of 4 buckets: 1.3x the rows/s of one connection on 2 cores).").
			Default(fluss.DefaultWriteConnections).
			Advanced().
			LintRule(speclint.MinInt(foFieldConnections, 1)),
		speclint.IntField(foFieldMaxInFlight).
			Description("The most batches written at once. Keep 1 for primary-key tables (see above).").
			Default(1).
			LintRule(speclint.MinInt(foFieldMaxInFlight, 1)),
		service.NewBatchPolicyField(foFieldBatching),
	}
}

func init() {
	service.MustRegisterBatchOutput("fluss", Spec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
		out, err := NewFromConfig(conf, mgr)
		if err != nil {
			return nil, service.BatchPolicy{}, 0, err
		}
		return out, out.conf.batchPolicy, out.conf.maxInFlight, nil
	})
}
