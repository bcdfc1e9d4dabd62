package iggytest

import (
	"strconv"
	"time"
)

// Command is an Iggy binary-protocol command code.
type Command uint32

// Command codes of Iggy 0.8 (core/binary_protocol codes). CmdAny matches every
// command in a Fault. A 0.9 server counts and matches each request under
// the command it corresponds to: a read under its code, a replicated
// operation under the command of the same name (CreateStream 128 as
// CmdCreateStream, SendMessages 160 as CmdSendMessages, ...), a Register
// login as CmdLoginUser (username and password) or
// CmdLoginWithPersonalAccessToken, a Logout as CmdLogoutUser.
const (
	CmdAny                          Command = 0
	CmdPing                         Command = 1
	CmdGetStats                     Command = 10
	CmdGetSnapshot                  Command = 11
	CmdGetClusterMetadata           Command = 12
	CmdGetMe                        Command = 20
	CmdGetClient                    Command = 21
	CmdGetClients                   Command = 22
	CmdGetUser                      Command = 31
	CmdGetUsers                     Command = 32
	CmdCreateUser                   Command = 33
	CmdDeleteUser                   Command = 34
	CmdUpdateUser                   Command = 35
	CmdUpdatePermissions            Command = 36
	CmdChangePassword               Command = 37
	CmdLoginUser                    Command = 38
	CmdLogoutUser                   Command = 39
	CmdGetPersonalAccessTokens      Command = 41
	CmdCreatePersonalAccessToken    Command = 42
	CmdDeletePersonalAccessToken    Command = 43
	CmdLoginWithPersonalAccessToken Command = 44
	CmdPollMessages                 Command = 100
	CmdSendMessages                 Command = 101
	CmdFlushUnsavedBuffer           Command = 102
	CmdGetConsumerOffset            Command = 120
	CmdStoreConsumerOffset          Command = 121
	CmdDeleteConsumerOffset         Command = 122
	CmdGetStream                    Command = 200
	CmdGetStreams                   Command = 201
	CmdCreateStream                 Command = 202
	CmdDeleteStream                 Command = 203
	CmdUpdateStream                 Command = 204
	CmdPurgeStream                  Command = 205
	CmdGetTopic                     Command = 300
	CmdGetTopics                    Command = 301
	CmdCreateTopic                  Command = 302
	CmdDeleteTopic                  Command = 303
	CmdUpdateTopic                  Command = 304
	CmdPurgeTopic                   Command = 305
	CmdCreatePartitions             Command = 402
	CmdDeletePartitions             Command = 403
	CmdDeleteSegments               Command = 503
	CmdGetConsumerGroup             Command = 600
	CmdGetConsumerGroups            Command = 601
	CmdCreateConsumerGroup          Command = 602
	CmdDeleteConsumerGroup          Command = 603
	CmdJoinConsumerGroup            Command = 604
	CmdLeaveConsumerGroup           Command = 605
	// CmdSyncConsumerGroup (0.9 only) reads the caller's assignment.
	CmdSyncConsumerGroup Command = 606
)

var commandNames = map[Command]string{
	CmdAny: "any", CmdPing: "ping", CmdGetStats: "get_stats", CmdGetSnapshot: "get_snapshot",
	CmdGetClusterMetadata: "get_cluster_metadata", CmdGetMe: "get_me", CmdGetClient: "get_client",
	CmdGetClients: "get_clients", CmdGetUser: "get_user", CmdGetUsers: "get_users",
	CmdCreateUser: "create_user", CmdDeleteUser: "delete_user", CmdUpdateUser: "update_user",
	CmdUpdatePermissions: "update_permissions", CmdChangePassword: "change_password",
	CmdLoginUser: "login_user", CmdLogoutUser: "logout_user",
	CmdGetPersonalAccessTokens: "get_personal_access_tokens", CmdCreatePersonalAccessToken: "create_personal_access_token",
	CmdDeletePersonalAccessToken: "delete_personal_access_token", CmdLoginWithPersonalAccessToken: "login_with_personal_access_token",
	CmdPollMessages: "poll_messages", CmdSendMessages: "send_messages", CmdFlushUnsavedBuffer: "flush_unsaved_buffer",
	CmdGetConsumerOffset: "get_consumer_offset", CmdStoreConsumerOffset: "store_consumer_offset",
	CmdDeleteConsumerOffset: "delete_consumer_offset", CmdGetStream: "get_stream", CmdGetStreams: "get_streams",
	CmdCreateStream: "create_stream", CmdDeleteStream: "delete_stream", CmdUpdateStream: "update_stream",
	CmdPurgeStream: "purge_stream", CmdGetTopic: "get_topic", CmdGetTopics: "get_topics",
	CmdCreateTopic: "create_topic", CmdDeleteTopic: "delete_topic", CmdUpdateTopic: "update_topic",
	CmdPurgeTopic: "purge_topic", CmdCreatePartitions: "create_partitions", CmdDeletePartitions: "delete_partitions",
	CmdDeleteSegments: "delete_segments", CmdGetConsumerGroup: "get_consumer_group",
	CmdGetConsumerGroups: "get_consumer_groups", CmdCreateConsumerGroup: "create_consumer_group",
	CmdDeleteConsumerGroup: "delete_consumer_group", CmdJoinConsumerGroup: "join_consumer_group",
	CmdLeaveConsumerGroup: "leave_consumer_group", CmdSyncConsumerGroup: "sync_consumer_group",
}

// String returns the server's name for the command, or its number.
func (c Command) String() string {
	if n, ok := commandNames[c]; ok {
		return n
	}
	return "command(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Error codes the test server answers with (the numbers of the server's
// IggyError; the SDK's ierror.FromCode maps them back to its error values).
const (
	CodeOK                             uint32 = 0
	CodeError                          uint32 = 1
	CodeInvalidCommand                 uint32 = 3
	CodeInvalidFormat                  uint32 = 4
	CodeFeatureUnavailable             uint32 = 5
	CodeInvalidIdentifier              uint32 = 6
	CodeDisconnected                   uint32 = 8
	CodeResourceNotFound               uint32 = 20
	CodeStaleClient                    uint32 = 30
	CodeUnauthenticated                uint32 = 40
	CodeUnauthorized                   uint32 = 41
	CodeInvalidCredentials             uint32 = 42
	CodeInvalidUsername                uint32 = 43
	CodeInvalidPassword                uint32 = 44
	CodeUserInactive                   uint32 = 47
	CodeInvalidPersonalAccessTokenName uint32 = 50
	CodePersonalAccessTokenExists      uint32 = 51
	CodeInvalidPersonalAccessToken     uint32 = 53
	CodePersonalAccessTokenExpired     uint32 = 54
	CodeTransientNotCommitted          uint32 = 57
	CodeTransientNotAccepted           uint32 = 58
	CodeRequestAlreadyApplied          uint32 = 59
	CodeInvalidSizeBytes               uint32 = 80
	CodeInvalidUTF8                    uint32 = 81
	CodeInvalidNumberEncoding          uint32 = 82
	CodeStreamIDNotFound               uint32 = 1009
	CodeStreamNameNotFound             uint32 = 1010
	CodeStreamNameAlreadyExists        uint32 = 1012
	CodeInvalidStreamName              uint32 = 1013
	CodeInvalidTopicSize               uint32 = 1019
	CodeTopicIDNotFound                uint32 = 2010
	CodeTopicNameNotFound              uint32 = 2011
	CodeTopicNameAlreadyExists         uint32 = 2013
	CodeInvalidTopicName               uint32 = 2014
	CodeTooManyPartitions              uint32 = 2015
	CodeInvalidPartitionsCount         uint32 = 2019
	CodePartitionNotFound              uint32 = 3007
	CodeNoPartitions                   uint32 = 3008
	CodeConsumerOffsetNotFound         uint32 = 3021
	CodeConsumerNotResolved            uint32 = 3022
	CodeInvalidMessagesCount           uint32 = 4009
	CodeTooBigUserHeaders              uint32 = 4017
	CodeTooBigMessagePayload           uint32 = 4022
	CodeInvalidMessagePayloadLength    uint32 = 4025
	CodeInvalidKeyValueLength          uint32 = 4028
	CodeNonZeroOffset                  uint32 = 4031
	CodeNonZeroTimestamp               uint32 = 4032
	CodeMissingIndex                   uint32 = 4033
	CodeInvalidMessageChecksum         uint32 = 4027
	CodeInvalidMessagesSize            uint32 = 4036
	CodeInvalidBatchChecksum           uint32 = 4039
	CodeUnsupportedOptionKey           uint32 = 4041
	CodeInvalidOptionValue             uint32 = 4042
	CodeInvalidOffset                  uint32 = 4100
	CodeConsumerGroupIDNotFound        uint32 = 5000
	CodeConsumerGroupNameAlreadyExists uint32 = 5004
	CodeConsumerGroupMemberNotFound    uint32 = 5006
	CodeCannotReadIndexPosition        uint32 = 10011
)

// Header kinds of Iggy user headers (the same numbers as iggcon.HeaderKind).
const (
	HeaderRaw     uint8 = 1
	HeaderString  uint8 = 2
	HeaderBool    uint8 = 3
	HeaderInt8    uint8 = 4
	HeaderInt16   uint8 = 5
	HeaderInt32   uint8 = 6
	HeaderInt64   uint8 = 7
	HeaderInt128  uint8 = 8
	HeaderUint8   uint8 = 9
	HeaderUint16  uint8 = 10
	HeaderUint32  uint8 = 11
	HeaderUint64  uint8 = 12
	HeaderUint128 uint8 = 13
	HeaderFloat   uint8 = 14
	HeaderDouble  uint8 = 15
)

// Limits of server 0.8.0.
const (
	maxControlPayload    = 10 * 1024 * 1024 // non-SendMessages request payloads
	maxPayloadSize       = 64 * 1000 * 1000 // one message payload
	maxUserHeadersSize   = 100 * 1000       // one message's user headers
	maxPartitionsPerCall = 1000
	defaultSegmentSize   = 1 << 30 // "1 GiB": the smallest custom max topic size
	messageHeaderSize    = 64
	indexSize            = 16
	unlimited            = ^uint64(0) // u64::MAX: never expire / unlimited size
	minUsernameLen       = 3
	maxUsernameLen       = 50
	minPasswordLen       = 3
	maxPasswordLen       = 100
	minTokenNameLen      = 3
	maxTokenNameLen      = 30
	defaultMaxFrameSize  = 128 << 20
	// defaultRebalancingTimeout is [consumer_group] rebalancing_timeout.
	defaultRebalancingTimeout = 30 * time.Second
)

// Sizes and limits of server 0.9.0.
const (
	headerSize09      = 256      // every frame's header, both ways
	batchHeaderSize   = 256      // a message batch's header
	frameHeaderSize   = 48       // a message frame's header in a batch
	maxFrameSize09    = 64 << 20 // [message_bus] max_message_size
	defaultSizeToSave = 1 << 20  // size_of_messages_required_to_save
	replyRingCapacity = 5        // replies a client table entry keeps
	maxPartitions09   = 1000     // MAX_PARTITIONS_PER_REQUEST
)
