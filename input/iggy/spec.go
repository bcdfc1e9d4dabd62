package iggyinput

import (
	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/iggyconn"
	"github.com/fluss-iggy/fluss-iggy/internal/speclint"
)

// Field names of the iggy input's configuration.
const (
	fieldStream          = "stream"
	fieldTopic           = "topic"
	fieldConsumerGroup   = "consumer_group"
	fieldCreateGroup     = "create_consumer_group"
	fieldConsumer        = "consumer"
	fieldPartitions      = "partitions"
	fieldStartFrom       = "start_from"
	fieldPollCount       = "poll_count"
	fieldPollInterval    = "poll_interval"
	fieldCheckpointLimit = "checkpoint_limit"
	fieldAutoReplayNacks = service.AutoRetryNacksToggleFieldName
	startEarliest        = "earliest"
	startLatest          = "latest"
)

// Metadata the input sets on every message, besides the message's user
// headers.
const (
	MetaStream          = "iggy_stream"
	MetaTopic           = "iggy_topic"
	MetaPartition       = "iggy_partition"
	MetaOffset          = "iggy_offset"
	MetaTimestamp       = "iggy_timestamp"
	MetaOriginTimestamp = "iggy_origin_timestamp"
	MetaMessageID       = "iggy_message_id"
)

const specDescription = `
Reads the messages of one Iggy stream and topic over Iggy's TCP protocol (servers 0.8.x and 0.9.x,
found at connect as the ` + "`iggy`" + ` output does) and stores, on the server, the offset of each
partition up to which every message has been acknowledged: a crash or a restart reads again at most
what was not yet acknowledged (at least once), never skips a message.

=== Single consumer or consumer group

Without ` + "`consumer_group`" + ` the input reads every partition of the topic (or those listed in
` + "`partitions`" + `) as the single consumer ` + "`consumer`" + `, whose offsets are its own. With
` + "`consumer_group`" + ` it joins that group (created when missing, with ` + "`create_consumer_group`" + `) and reads
only the partitions the server assigns to it; several instances with the same group share the topic's
partitions, and when one leaves or dies its partitions move to the others, which resume after the
group's stored offsets. Iggy 0.9 drops a member that sent nothing for 36 seconds; the input pings the
server every ` + "`keep_alive`" + ` while it waits (for example on a slow output), and joins again when the
server no longer knows it.

=== Offsets

A partition without a stored offset starts at its oldest message (` + "`start_from: earliest`" + `) or
after its newest one (` + "`latest`" + `). The input reads ahead of what is acknowledged, at most
` + "`checkpoint_limit`" + ` messages per partition, and stores the offset of the last message of the longest
acknowledged run from the start, so acknowledgements that arrive out of order never move the stored
offset past a message still in flight. A store that fails (the connection broke, or the partition was
handed to another group member meanwhile) is logged; the next acknowledgement, or the next connection,
stores again. Offsets still unstored at shutdown are stored before the input leaves the group.

=== Metadata

Each message carries ` + "`iggy_stream`, `iggy_topic`, `iggy_partition`, `iggy_offset`, `iggy_timestamp`" + `
(µs since the epoch, when the server stored it), ` + "`iggy_origin_timestamp`" + ` (µs, as the producer said) and
` + "`iggy_message_id`" + ` (the 128-bit id in UUID form, which the ` + "`iggy`" + ` output's ` + "`message_id`" + ` accepts), and
every user header as a metadata key of the header's key, its value typed as Iggy typed it (strings,
raw bytes, booleans, integers, floats; 128-bit integers as decimal text). Messages that the
` + "`fluss`" + ` input produced and the ` + "`iggy`" + ` output sent with ` + "`headers`" + ` arrive with their
` + "`fluss_change_type`" + `, which the ` + "`fluss`" + ` output reads to upsert or delete.

=== Connections

The input reads and stores offsets on one connection, which is also its group membership. When the
connection breaks it reconnects with back-off (one log line per attempt); a server we cannot speak
with, or a login refused ` + "`max_login_attempts`" + ` times in a row, stops the pipeline with the reason.`

// Spec returns the configuration spec of the iggy input.
func Spec() *service.ConfigSpec {
	return service.NewConfigSpec().
		Beta().
		Categories("Services").
		Version("0.1.0").
		Summary("Reads messages from an Apache Iggy stream and topic, as a single consumer or a consumer group member, storing offsets on the server once acknowledged.").
		Description(specDescription).
		Fields(iggyconn.Fields()...).
		Fields(
			service.NewStringField(fieldStream).
				Description("The stream to read: a name, or a numeric stream id when the value is made only of digits.").
				Examples("fluss", "0"),
			service.NewStringField(fieldTopic).
				Description("The topic to read: a name, or a numeric topic id when the value is made only of digits.").
				Examples("orders", "0"),
			service.NewStringField(fieldConsumerGroup).
				Description("The consumer group to read as (a name, or a numeric id when made only of digits). Empty: read as the single consumer `consumer`.").
				Example("fluss-writers").
				Default(""),
			service.NewBoolField(fieldCreateGroup).
				Description("Create `consumer_group`, when it is given by name and does not exist yet. Otherwise a missing group is an error at connect.").
				Default(true),
			service.NewStringField(fieldConsumer).
				Description("The single consumer to read as, without `consumer_group`: a name (which the server hashes into a numeric id) or a numeric id. Offsets are stored per consumer, so two pipelines with the same consumer share them.").
				Default("fluss-iggy"),
			service.NewIntListField(fieldPartitions).
				Description("The partitions a single consumer reads (0-based). Empty or left out: every partition of the topic when the input connects.").
				Example([]int{0, 1}).
				Optional(),
			service.NewStringAnnotatedEnumField(fieldStartFrom, map[string]string{
				startEarliest: "From the oldest message the partition keeps.",
				startLatest:   "After the newest message at the time the input first reads the partition.",
			}).
				Description("Where a partition without a stored offset starts.").
				Default(startEarliest).
				LintRule(speclint.Enum(fieldStartFrom, startEarliest, startLatest)),
			speclint.IntField(fieldPollCount).
				Description("The most messages one poll reads (1 to 100000); each poll becomes one batch.").
				Default(1000).
				LintRule(speclint.IntRange(fieldPollCount, 1, 100000)),
			service.NewDurationField(fieldPollInterval).
				Description("How long to wait after a round of polls found nothing new.").
				Default("100ms").
				LintRule(speclint.PositiveDuration(fieldPollInterval)).
				Advanced(),
			speclint.IntField(fieldCheckpointLimit).
				Description("The most messages of one partition read but not yet acknowledged; the partition is not polled while it has that many.").
				Default(10000).
				LintRule(speclint.MinInt(fieldCheckpointLimit, 1)).
				Advanced(),
		).
		Fields(iggyconn.TimingFields()...).
		Field(service.NewAutoRetryNacksToggleField())
}

func init() {
	service.MustRegisterBatchInput("iggy", Spec(), func(conf *service.ParsedConfig, mgr *service.Resources) (service.BatchInput, error) {
		c, err := parseConfig(conf)
		if err != nil {
			return nil, err
		}
		return service.AutoRetryNacksBatchedToggled(conf, newInput(c, mgr))
	})
}
