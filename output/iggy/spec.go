package iggyoutput

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/flussmeta"
	"github.com/fluss-iggy/fluss-iggy/internal/iggyconn"
	"github.com/fluss-iggy/fluss-iggy/internal/speclint"
)

// Field names of the iggy output's configuration.
const (
	ioFieldAddress        = "address"
	ioFieldUsername       = "username"
	ioFieldPassword       = "password"
	ioFieldToken          = "personal_access_token"
	ioFieldTLS            = "tls"
	ioFieldStream         = "stream"
	ioFieldTopic          = "topic"
	ioFieldCreateStream   = "create_stream"
	ioFieldCreateTopic    = "create_topic"
	ioFieldPartitions     = "partitions"
	ioFieldMessageExpiry  = "message_expiry"
	ioFieldMaxTopicSize   = "max_topic_size"
	ioFieldPartitioning   = "partitioning"
	ioFieldPartition      = "partition"
	ioFieldKey            = "key"
	ioFieldMessageID      = "message_id"
	ioFieldHeaders        = "headers"
	ioFieldTimeout        = "timeout"
	ioFieldServerVersion  = "server_version"
	ioFieldKeepAlive      = "keep_alive"
	ioFieldMaxLogins      = "max_login_attempts"
	ioFieldAckAfter       = "ack_after"
	ioFieldMaxInFlight    = "max_in_flight"
	ioFieldBatching       = "batching"
	partitioningBalanced  = "balanced"
	partitioningPartition = "partition_id"
	partitioningKey       = "messages_key"
)

// DeterministicIDMapping is the message_id that gives a record from the
// fluss input the same Iggy message id every time it is read: the input's
// fluss_message_id metadata (flussmeta.FormatMessageID), which packs the
// table id plus one, the partition id plus one, the bucket and the log
// offset into one 128-bit number. It is an ordinary interpolation; the
// output has no special case for it.
const DeterministicIDMapping = "${! @" + flussmeta.MessageID + " }"

const specDescription = `
Sends each message to an Iggy stream and topic over Iggy's TCP protocol and acknowledges a batch
only after the server has confirmed every message of it (and, with ` + "`ack_after`" + `, saved it).
It speaks Iggy server 0.8.x and 0.9.x (binary protocol 0.11.0) on connections of its own, and finds
which one the server is at connect (` + "`server_version: auto`" + `).

=== Server versions

With ` + "`server_version: auto`" + ` (the default) the output pings the server in the 0.9 format
when it connects: a 0.9 server answers it, a 0.8 server answers with an error frame of its own
format, and the output then connects again speaking 0.8. It logs which it found. ` + "`0.8`" + ` and
` + "`0.9`" + ` pin the dialect. A server outside these (Iggy 0.10, which speaks protocol 0.12) is
refused at login with the protocols it accepts; the output then stops the pipeline with that
reason instead of retrying. An address that answers nothing Iggy-like gets "is not an Iggy server".

=== Durability

By default (` + "`ack_after: send`" + `) a batch is acknowledged when Iggy has accepted it, which
does not mean it is on disk: Iggy keeps messages in memory until
` + "`messages_required_to_save`" + ` (1024 by default) are waiting or its saver runs, so a crash of
the Iggy server can lose acknowledged messages, after the input has committed their offsets.
` + "`ack_after: flush`" + ` and ` + "`fsync`" + ` close that gap, each the way the server offers:

- Iggy 0.8: before it acknowledges a batch, the output asks Iggy to save every partition the batch
  wrote to (FlushUnsavedBuffer); ` + "`fsync`" + ` also syncs them to disk. The cost is one more request
  per partition written (per partition of the topic for ` + "`balanced`" + ` and keys left to Iggy,
  since 0.8 does not say where those went).
- Iggy 0.9: there is no flush on request (the server refuses FlushUnsavedBuffer); durability is the
  topic option ` + "`durability`" + `, and a ` + "`persisted`" + ` topic answers a send only once its messages
  are on stable storage. With ` + "`flush`" + ` or ` + "`fsync`" + `, topics the output creates
  (` + "`create_topic`" + `) get ` + "`durability: persisted`" + `, so every acknowledged message survives a
  crash (both settings map to it: 0.9 has nothing in between). For a topic that already exists, the output reads
  its durability the first time it writes to it and logs a warning, once per topic, when it is
  ` + "`replicated`" + ` (Iggy 0.9's default), since such a topic cannot give what ` + "`ack_after`" + ` asks;
  it still delivers. A 0.9 pre-release server without the option (it refuses the key) gets the
  topic without it, and the warning says that its durability cannot be told.

The alternative is on the server: for 0.8, ` + "`IGGY_SYSTEM_PARTITION_MESSAGES_REQUIRED_TO_SAVE=1`" + ` and
` + "`IGGY_SYSTEM_PARTITION_ENFORCE_FSYNC=true`" + `; for 0.9, topics created with ` + "`durability: persisted`" + `
by other means.

=== Delivery

A batch is split into groups that share the same stream, topic and partition; each group is sent
with one request (requests are capped at 16 MiB, so very large groups take several), its messages
in batch order. With ` + "`partitioning: messages_key`" + ` the output reads the topic's partition
count (again every 10 seconds, and at once after a send finds a partition missing) and applies
Iggy's own rule, xxHash32 of the key modulo the partition count, so a batch of many keys takes one
request per partition instead of one per key; a topic that does not exist yet gets its keys sent as
they are, for Iggy to place, and a topic without partitions rejects keyed messages. The output acknowledges the batch only when Iggy has answered every request
positively. Delivery is at least once: when a connection breaks, or a request gets no answer within
` + "`timeout`" + `, the connection is closed, the output reconnects with back-off and the whole batch
is sent again, so a consumer may see a message twice. Give messages a deterministic
` + "`message_id`" + ` (below) so consumers can drop such duplicates; Iggy 0.8 does not deduplicate
by default.

A message that Iggy can never accept is rejected on its own, with an error that names the rule
it broke, while the rest of the batch is delivered: an empty payload, a payload over 10 MB
(10,000,000 bytes), a header key or value outside 1 to 255 bytes, headers over 100 KB in total,
a message key outside 1 to 255 bytes, a partition or message id that does not parse, or a stream
or topic that does not exist while ` + "`create_stream`/`create_topic`" + ` is off. Such messages
are nacked back to the input (which, with ` + "`auto_replay_nacks`" + `, retries them), or can be
routed elsewhere with a ` + "`fallback`" + ` or ` + "`switch`" + ` output. Nothing is dropped silently.

=== Connections

` + "`max_in_flight`" + ` batches are written in parallel, each on its own TCP connection from a
pool of at most that many logged-in connections (an Iggy connection runs one request at a time).
With ` + "`max_in_flight`" + ` above 1, batches can reach a partition in a different order than
they left the input. The ` + "`fluss`" + ` input's ` + "`ordering: bucket`" + ` (its default) never has two
batches of one bucket out at once, so each bucket's rows keep their order whatever this field and
` + "`pipeline.threads`" + `, as long as batches reach this output whole: batch in the input, not with this
output's ` + "`batching`" + `, which re-cuts them (as ` + "`config/fluss_to_iggy.yaml`" + ` does, with
` + "`max_in_flight: 4`" + `). With other inputs keep the default of 1, and ` + "`pipeline.threads: 1`" + `, when the
order within a partition matters.

If the server is down at start-up, or refuses the login, the output keeps retrying with a backoff
that doubles from 1s to 30s, with one log line per attempt. Every request, including the login, is
bounded by ` + "`timeout`" + `. Idle connections are pinged every ` + "`keep_alive`" + `; requests
and replies on a connection are strictly paired, one request at a time. When the output is stopped
while messages could not be delivered, it says how many, and the process exits non-zero (they were
not acknowledged, so their offsets are not committed).

=== Stream and topic

` + "`stream`" + ` and ` + "`topic`" + ` are interpolated per message. A value made only of decimal
digits is an Iggy numeric id (0-based in Iggy 0.8), anything else is a name. With
` + "`create_stream`" + ` and ` + "`create_topic`" + ` a missing stream or topic given by name is
created the first time it is used, with ` + "`partitions`" + `, ` + "`message_expiry`" + ` and
` + "`max_topic_size`" + `; these settings never change an existing topic.

=== Message ids

` + "`message_id`" + ` is interpolated per message and must give a UUID
(` + "`01234567-89ab-cdef-0123-456789abcdef`" + `), a decimal 128-bit number, or a hex 128-bit
number with a ` + "`0x`" + ` prefix and at most 32 hex digits. An empty value (the default), ` + "`0`" + ` or the nil UUID lets
the server assign one. A UUID is read as a big-endian 128-bit number, so the UUID
` + "`00000000-0000-0000-0000-0000000000ff`" + ` and the numbers ` + "`255`" + ` and ` + "`0xff`" + `
are the same id; Iggy stores ids as unsigned 128-bit integers (little-endian on the wire).

Messages from the ` + "`fluss`" + ` input carry an id that is the same every time the same record
is read again, ` + "`fluss_message_id`" + `, derived from ` + "`fluss_table_id`" + `, ` + "`fluss_partition_id`" + `,
` + "`fluss_bucket`" + ` and ` + "`fluss_offset`" + `:

` + "```yaml" + `
message_id: '` + DeterministicIDMapping + `'
` + "```" + `

This packs the table id plus one into the top 32 bits (so that no record's id is 0, which would ask
the server for a random id), the partition id plus one (0 for tables without
partitions) into the next 32, the bucket into 16 and the offset into the low 48 bits, so the id
can be decoded back into those four numbers. A value that outgrows its slot (a table id of 2^32 − 1
or more, a bucket above 65,535, an offset of 2^48 or more) makes the text longer than 32 hex
digits and the message is rejected rather than given an id that could collide. It equals the
Bloblang recipe
` + "`" + `0x${! "%08x%08x%04x%012x".format(@fluss_table_id + 1, @fluss_partition_id.or(-1) + 1, @fluss_bucket, @fluss_offset) }` + "`" + `
(which earlier configs used and which still works), computed once by the input instead of per
message by Bloblang. With ` + "`headers: {include_prefixes: [fluss_]}`" + ` it also becomes a header; list the keys you want
with ` + "`include_patterns`" + ` (e.g. ` + "`'^fluss_(table|bucket|offset|change_type)$'`" + `) to leave it out.

=== Headers

The metadata keys matched by ` + "`headers`" + ` become Iggy user headers, in key order. Strings
become string headers, booleans bool headers, integers keep their width and signedness
(int64 metadata such as ` + "`fluss_offset`" + ` becomes an int64 header), float64 becomes double and
float32 becomes float; byte slices become raw headers; any other value is sent as its string form.

=== TLS

Enable ` + "`tls`" + ` when the Iggy server has TLS on. Every field of the standard TLS object
works (root CAs inline or from a file, client certificates, ` + "`skip_cert_verify`" + `); the
server name checked is the host of ` + "`address`" + `.
`

// Spec returns the configuration spec of the iggy output.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Version("0.1.0").
		Summary("Writes messages to Apache Iggy streams and topics, acknowledging them only once Iggy has confirmed them.").
		Description(specDescription).
		Fields(iggyconn.Fields()...).
		Fields(
			service.NewInterpolatedStringField(ioFieldStream).
				Description("The stream to write to: a name, or a numeric stream id when the value is made only of digits. Interpolated per message.").
				Examples("fluss", `${! @fluss_database }`, "0"),
			service.NewInterpolatedStringField(ioFieldTopic).
				Description("The topic to write to: a name, or a numeric topic id when the value is made only of digits. Interpolated per message.").
				Examples("orders", `${! @fluss_table }`, "0"),
			service.NewBoolField(ioFieldCreateStream).
				Description("Create the stream, when it is given by name and does not exist yet. Otherwise messages for a missing stream are rejected.").
				Default(false),
			service.NewBoolField(ioFieldCreateTopic).
				Description("Create the topic, when it is given by name and does not exist yet, with `partitions`, `message_expiry` and `max_topic_size`. Otherwise messages for a missing topic are rejected.").
				Default(false),
			speclint.IntField(ioFieldPartitions).
				Description("The number of partitions of a topic created by `create_topic` (1 to 1000).").
				Default(1).
				LintRule(speclint.IntRange(ioFieldPartitions, 1, 1000)),
			service.NewStringField(ioFieldMessageExpiry).
				Description("How long messages of a topic created by `create_topic` are kept: `server_default`, `never`, or a duration such as `72h`.").
				Examples("server_default", "never", "168h").
				Default("server_default").
				LintRule(speclint.DurationOr(ioFieldMessageExpiry, "server_default", "never", "never_expire")).
				Advanced(),
			service.NewStringField(ioFieldMaxTopicSize).
				Description("The maximum size of a topic created by `create_topic`: `server_default`, `unlimited`, or a size such as `10GiB` or `500MB`.").
				Examples("server_default", "unlimited", "10GiB").
				Default("server_default").
				LintRule(speclint.SizeOr(ioFieldMaxTopicSize, "server_default", "unlimited")).
				Advanced(),
			service.NewStringAnnotatedEnumField(ioFieldPartitioning, map[string]string{
				partitioningBalanced:  "Requests go to the topic's partitions in turn: Iggy 0.8 picks the partition (round-robin per request); on Iggy 0.9, as its own SDK does, each connection picks it (round-robin per topic from partition 0, the partition count read every 10 seconds).",
				partitioningPartition: "Each message goes to the partition given by `partition` (0-based in Iggy 0.8).",
				partitioningKey:       "Each message goes to the partition Iggy's rule gives its `key`: xxHash32 of the key modulo the topic's partition count (the same key always reaches the same partition while the partition count stays the same). The output applies the rule itself, reading the partition count every 10 seconds, and sends one request per partition.",
			}).
				Description("How messages are spread over the topic's partitions.").
				Default(partitioningBalanced).
				LintRule(speclint.Enum(ioFieldPartitioning, partitioningBalanced, partitioningPartition, partitioningKey)),
			service.NewInterpolatedStringField(ioFieldPartition).
				Description("The partition id for `partitioning: partition_id`, interpolated per message; must give a number.").
				Examples("0", `${! @fluss_bucket % 4 }`).
				Optional(),
			service.NewInterpolatedStringField(ioFieldKey).
				Description("The message key for `partitioning: messages_key`, interpolated per message; must give 1 to 255 bytes. "+
					"A key that is exactly one metadata key (`${! @name }`) or one top-level field of the row (`${! this.name }`) is read without running Bloblang for each message.").
				Examples(`${! @fluss_bucket }`, `${! this.customer_id }`).
				Optional(),
			service.NewInterpolatedStringField(ioFieldMessageID).
				Description("The id of each message: a UUID, a decimal number or a `0x` hex number of at most 128 bits. Empty lets the server assign an id. See the description for a deterministic recipe.").
				Examples(DeterministicIDMapping, `${! @event_uuid }`, `${! this.id }`).
				Default(""),
			service.NewMetadataFilterField(ioFieldHeaders).
				Description("Which metadata keys are sent as Iggy user headers. Nothing is sent unless a prefix or pattern matches.").
				Optional(),
		).
		Fields(iggyconn.TimingFields()...).
		Fields(
			service.NewStringAnnotatedEnumField(ioFieldAckAfter, map[string]string{
				ackAfterSend:  "Acknowledge when Iggy has accepted the batch (it may still be only in memory).",
				ackAfterFlush: "Acknowledge once Iggy has saved the batch: Iggy 0.8 is asked to save the partitions written to (FlushUnsavedBuffer); on Iggy 0.9, topics created by the output get durability persisted and existing topics without it are warned about.",
				ackAfterFsync: "As flush, with the saved partitions also synced to disk on Iggy 0.8 (fsync); on Iggy 0.9 the same as flush (durability persisted).",
			}).
				Description("When a batch counts as delivered, and so when the input may commit its offsets. See Durability.").
				Default(ackAfterSend).
				LintRule(speclint.Enum(ioFieldAckAfter, ackAfterSend, ackAfterFlush, ackAfterFsync)),
			speclint.IntField(ioFieldMaxInFlight).
				Description("The number of batches written in parallel, each on its own connection of a pool of that many. Values above 1 raise throughput but can reorder batches within a partition.").
				Default(1).
				LintRule(speclint.MinInt(ioFieldMaxInFlight, 1)),
			service.NewBatchPolicyField(ioFieldBatching),
		).
		LintRule(`root = match {
  this.personal_access_token.or("") != "" && (this.username.or("") != "" || this.password.or("") != "") => [ "set either personal_access_token or username and password, not both" ],
  this.personal_access_token.or("") == "" && (this.username.or("") == "" || this.password.or("") == "") => [ "set username and password, or personal_access_token" ],
  this.partitioning.or("balanced") == "partition_id" && this.partition.or("") == "" => [ "partition must be set when partitioning is partition_id" ],
  this.partitioning.or("balanced") == "messages_key" && this.key.or("") == "" => [ "key must be set when partitioning is messages_key" ],
}`).
		Example("Fluss table to an Iggy topic",
			"Writes each Fluss record to a topic named after its table, keyed by bucket so that a bucket's records stay in order, with ids that let consumers drop replayed duplicates.",
			`
output:
  iggy:
    address: 127.0.0.1:8090
    username: iggy
    password: ${IGGY_PASSWORD}
    stream: fluss
    topic: ${! @fluss_table }
    create_stream: true
    create_topic: true
    partitions: 8
    partitioning: messages_key
    key: ${! @fluss_bucket }
    message_id: '`+DeterministicIDMapping+`'
    headers:
      include_prefixes: [ fluss_ ]
    batching:
      count: 1000
      period: 50ms
`).
		Example("Fixed partition over TLS",
			"Logs in with a personal access token and sends everything to partition 0 of an existing topic over TLS.",
			`
output:
  iggy:
    address: iggy.example.com:8090
    personal_access_token: ${IGGY_TOKEN}
    tls:
      enabled: true
      root_cas_file: /etc/ssl/iggy-ca.pem
    stream: events
    topic: audit
    partitioning: partition_id
    partition: "0"
`)
}

func init() {
	service.MustRegisterBatchOutput("iggy", Spec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchOutput, service.BatchPolicy, int, error) {
		out, err := NewFromConfig(conf, mgr)
		if err != nil {
			return nil, service.BatchPolicy{}, 0, err
		}
		return out, out.batchPolicy, out.maxInFlight, nil
	})
}
