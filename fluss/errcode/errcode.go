// Package errcode is the Apache Fluss error-code table and the one place that
// decides which errors are worth retrying.
//
// Every protocol error code has exactly one *Error value (TableNotExist,
// NotLeaderOrFollower, ...). Errors reported by a server are returned as a
// *ServerError that carries the server's message and unwraps to that value, so
// callers test them with errors.Is:
//
//	if errors.Is(err, errcode.TableNotExist) { ... }
//
// or get the code and message with errors.As:
//
//	var se *errcode.ServerError
//	if errors.As(err, &se) { log(se.Err.Code, se.Message) }
//
// IsRetriable and InvalidatesMetadata are the only retry policy of the client:
// the connection layer, the metadata cache, the scanner and the writer all ask
// them instead of listing codes at their call sites.
//
// The table covers Fluss 0.8.0 (codes -1..57), 0.9.1 (..63) and 1.0.0 (..73).
// Names and retriable flags follow the Java server (rpc/protocol/Errors.java;
// retriable = the exception extends RetriableException): of the 1.0 codes,
// DISK_WRITE_LOCKED, STORAGE_BACKPRESSURE_EXCEPTION and
// HISTORICAL_PARTITION_THROTTLED are retriable. fluss-rs 1.0.0 knows only 72
// of them (src/rpc/fluss_api_error.rs), also retriable.
package errcode

import (
	"errors"
	"strconv"
)

// Error is one entry of the Fluss error table. The values are shared: compare
// them with errors.Is, never construct them.
type Error struct {
	// Code is the wire value (int32 error_code fields).
	Code int32
	// Name is the upper-case name Fluss uses for the code.
	Name string
	// Retriable reports whether the operation may succeed when repeated
	// unchanged (after a metadata refresh where InvalidatesMetadata says so).
	Retriable bool
	// Description is a short explanation.
	Description string
}

// Error implements error.
func (e *Error) Error() string {
	return e.Name + " (" + strconv.Itoa(int(e.Code)) + "): " + e.Description
}

// ServerError is an error code returned by a Fluss server together with the
// message the server sent (often empty; for UNKNOWN_SERVER_ERROR a Java stack
// trace cut to 2048 characters).
type ServerError struct {
	// Err is the table entry of the code; never nil.
	Err *Error
	// Message is the server's error_message, possibly empty.
	Message string
}

// Error implements error.
func (e *ServerError) Error() string {
	if e.Message == "" {
		return e.Err.Error()
	}
	return e.Err.Name + " (" + strconv.Itoa(int(e.Err.Code)) + "): " + e.Message
}

// Unwrap returns the table entry so that errors.Is(err, errcode.X) works.
func (e *ServerError) Unwrap() error { return e.Err }

// Retriable reports the retriable flag of the code.
func (e *ServerError) Retriable() bool { return e.Err.Retriable }

// The table. Names follow Fluss; the "(R)" rows are retriable.
var (
	UnknownServerError                  = add(-1, "UNKNOWN_SERVER_ERROR", false, "the server hit an unexpected error")
	NetworkException                    = add(1, "NETWORK_EXCEPTION", true, "the server disconnected before a response was received")
	UnsupportedVersion                  = add(2, "UNSUPPORTED_VERSION", false, "the server does not support this version of the request")
	CorruptMessage                      = add(3, "CORRUPT_MESSAGE", true, "the message failed its checks or is otherwise corrupt")
	DatabaseNotExist                    = add(4, "DATABASE_NOT_EXIST", false, "the database does not exist")
	DatabaseNotEmpty                    = add(5, "DATABASE_NOT_EMPTY", false, "the database is not empty")
	DatabaseAlreadyExist                = add(6, "DATABASE_ALREADY_EXIST", false, "the database already exists")
	TableNotExist                       = add(7, "TABLE_NOT_EXIST", false, "the table does not exist")
	TableAlreadyExist                   = add(8, "TABLE_ALREADY_EXIST", false, "the table already exists")
	SchemaNotExist                      = add(9, "SCHEMA_NOT_EXIST", true, "the schema does not exist")
	LogStorageException                 = add(10, "LOG_STORAGE_EXCEPTION", true, "the server failed to read or write its log")
	KvStorageException                  = add(11, "KV_STORAGE_EXCEPTION", true, "the server failed to read or write its kv store")
	NotLeaderOrFollower                 = add(12, "NOT_LEADER_OR_FOLLOWER", true, "the server is not the leader or a follower of the bucket")
	RecordTooLarge                      = add(13, "RECORD_TOO_LARGE_EXCEPTION", false, "the record is too large")
	CorruptRecord                       = add(14, "CORRUPT_RECORD_EXCEPTION", true, "the record is corrupt (for example a CRC mismatch)")
	InvalidTable                        = add(15, "INVALID_TABLE_EXCEPTION", false, "the table name or descriptor is invalid")
	InvalidDatabase                     = add(16, "INVALID_DATABASE_EXCEPTION", false, "the database name or descriptor is invalid")
	InvalidReplicationFactor            = add(17, "INVALID_REPLICATION_FACTOR", false, "the replication factor is invalid (for example above the tablet server count)")
	InvalidRequiredAcks                 = add(18, "INVALID_REQUIRED_ACKS", false, "acks must be -1, 0 or 1")
	LogOffsetOutOfRange                 = add(19, "LOG_OFFSET_OUT_OF_RANGE_EXCEPTION", false, "the offset is outside the bucket's log")
	NonPrimaryKeyTable                  = add(20, "NON_PRIMARY_KEY_TABLE_EXCEPTION", false, "the table has no primary key")
	UnknownTableOrBucket                = add(21, "UNKNOWN_TABLE_OR_BUCKET_EXCEPTION", true, "the server does not host this table or bucket")
	InvalidUpdateVersion                = add(22, "INVALID_UPDATE_VERSION_EXCEPTION", false, "the update version is invalid")
	InvalidCoordinator                  = add(23, "INVALID_COORDINATOR_EXCEPTION", false, "the coordinator is invalid")
	FencedLeaderEpoch                   = add(24, "FENCED_LEADER_EPOCH_EXCEPTION", false, "the leader epoch is older than the server's")
	RequestTimeOut                      = add(25, "REQUEST_TIME_OUT", true, "the request timed out on the server")
	StorageException                    = add(26, "STORAGE_EXCEPTION", true, "a storage error on the server")
	OperationNotAttempted               = add(27, "OPERATION_NOT_ATTEMPTED_EXCEPTION", false, "the operation was not attempted because another in the batch failed")
	NotEnoughReplicasAfterAppend        = add(28, "NOT_ENOUGH_REPLICAS_AFTER_APPEND_EXCEPTION", true, "the write was appended but fewer replicas than required acknowledged it")
	NotEnoughReplicas                   = add(29, "NOT_ENOUGH_REPLICAS_EXCEPTION", true, "fewer in-sync replicas than required")
	SecurityToken                       = add(30, "SECURITY_TOKEN_EXCEPTION", false, "could not get a file-system security token")
	OutOfOrderSequence                  = add(31, "OUT_OF_ORDER_SEQUENCE_EXCEPTION", false, "the batch sequence is out of order")
	DuplicateSequence                   = add(32, "DUPLICATE_SEQUENCE_EXCEPTION", false, "the batch sequence is a duplicate")
	UnknownWriterID                     = add(33, "UNKNOWN_WRITER_ID_EXCEPTION", false, "the writer id is unknown to the server")
	InvalidColumnProjection             = add(34, "INVALID_COLUMN_PROJECTION", false, "the column projection is invalid")
	InvalidTargetColumn                 = add(35, "INVALID_TARGET_COLUMN", false, "the target columns are invalid")
	PartitionNotExists                  = add(36, "PARTITION_NOT_EXISTS", false, "the partition does not exist")
	TableNotPartitioned                 = add(37, "TABLE_NOT_PARTITIONED_EXCEPTION", false, "the table is not partitioned")
	InvalidTimestamp                    = add(38, "INVALID_TIMESTAMP_EXCEPTION", false, "the timestamp is invalid (for example in the future)")
	InvalidConfig                       = add(39, "INVALID_CONFIG_EXCEPTION", false, "the configuration is invalid")
	LakeStorageNotConfigured            = add(40, "LAKE_STORAGE_NOT_CONFIGURED_EXCEPTION", false, "no lake storage is configured")
	KvSnapshotNotExist                  = add(41, "KV_SNAPSHOT_NOT_EXIST", false, "the kv snapshot does not exist")
	PartitionAlreadyExists              = add(42, "PARTITION_ALREADY_EXISTS", false, "the partition already exists")
	PartitionSpecInvalid                = add(43, "PARTITION_SPEC_INVALID_EXCEPTION", false, "the partition spec is invalid")
	LeaderNotAvailable                  = add(44, "LEADER_NOT_AVAILABLE_EXCEPTION", true, "the bucket has no leader at the moment")
	PartitionMaxNum                     = add(45, "PARTITION_MAX_NUM_EXCEPTION", false, "too many partitions")
	AuthenticateException               = add(46, "AUTHENTICATE_EXCEPTION", false, "authentication failed")
	SecurityDisabled                    = add(47, "SECURITY_DISABLED_EXCEPTION", false, "security is disabled on the server")
	AuthorizationException              = add(48, "AUTHORIZATION_EXCEPTION", false, "authorization failed")
	BucketMaxNum                        = add(49, "BUCKET_MAX_NUM_EXCEPTION", false, "too many buckets")
	FencedTieringEpoch                  = add(50, "FENCED_TIERING_EPOCH_EXCEPTION", false, "the tiering epoch is fenced")
	RetriableAuthenticate               = add(51, "RETRIABLE_AUTHENTICATE_EXCEPTION", true, "authentication failed for a passing reason; try again")
	InvalidServerRackInfo               = add(52, "INVALID_SERVER_RACK_INFO_EXCEPTION", false, "the server rack information is invalid")
	LakeSnapshotNotExist                = add(53, "LAKE_SNAPSHOT_NOT_EXIST", false, "the lake snapshot does not exist")
	LakeTableAlreadyExist               = add(54, "LAKE_TABLE_ALREADY_EXIST", false, "the lake table already exists")
	IneligibleReplica                   = add(55, "INELIGIBLE_REPLICA_EXCEPTION", false, "the replica is not eligible")
	InvalidAlterTable                   = add(56, "INVALID_ALTER_TABLE_EXCEPTION", false, "the table change is not supported")
	DeletionDisabled                    = add(57, "DELETION_DISABLED_EXCEPTION", false, "deletion is disabled")
	ServerNotExist                      = add(58, "SERVER_NOT_EXIST_EXCEPTION", false, "the server does not exist")
	ServerTagAlreadyExist               = add(59, "SEVER_TAG_ALREADY_EXIST_EXCEPTION", false, "the server tag already exists")
	ServerTagNotExist                   = add(60, "SEVER_TAG_NOT_EXIST_EXCEPTION", false, "the server tag does not exist")
	RebalanceFailure                    = add(61, "REBALANCE_FAILURE_EXCEPTION", false, "the rebalance failed")
	NoRebalanceInProgress               = add(62, "NO_REBALANCE_IN_PROGRESS_EXCEPTION", false, "no rebalance is in progress")
	InvalidProducerID                   = add(63, "INVALID_PRODUCER_ID_EXCEPTION", false, "the producer id is invalid")
	ConfigException                     = add(64, "CONFIG_EXCEPTION", false, "configuration error")
	NotCoordinatorLeader                = add(65, "NOT_COORDINATOR_LEADER_EXCEPTION", false, "the server is a standby coordinator, not the leader")
	ScannerExpired                      = add(66, "SCANNER_EXPIRED", false, "the server-side scanner session expired")
	UnknownScannerID                    = add(67, "UNKNOWN_SCANNER_ID", false, "the scanner id is unknown to the server")
	InvalidScanRequest                  = add(68, "INVALID_SCAN_REQUEST", false, "the scan request is invalid")
	TooManyScanners                     = add(69, "TOO_MANY_SCANNERS", false, "the per-bucket or per-server scanner limit is reached")
	DiskWriteLocked                     = add(70, "DISK_WRITE_LOCKED", true, "the server refuses writes: its data disk is over the write-limit ratio")
	InsufficientKvLeaderReplicaCapacity = add(71, "INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY", false, "the cluster does not have enough kv leader replica capacity")
	StorageBackpressure                 = add(72, "STORAGE_BACKPRESSURE_EXCEPTION", true, "the server refuses the write: its kv storage is over its write-pressure threshold")
	HistoricalPartitionThrottled        = add(73, "HISTORICAL_PARTITION_THROTTLED", true, "too many historical-partition requests are in flight")
)

var table = map[int32]*Error{}

func add(code int32, name string, retriable bool, desc string) *Error {
	e := &Error{Code: code, Name: name, Retriable: retriable, Description: desc}
	table[code] = e
	return e
}

// Lookup returns the table entry of code. ok is false for 0 (no error) and
// for codes the table does not know; in that case the entry returned is a
// fresh *Error named UNKNOWN_ERROR_CODE_<n> (not retriable), so an unknown
// code is never mistaken for another one.
func Lookup(code int32) (e *Error, ok bool) {
	if e, ok := table[code]; ok {
		return e, true
	}
	return &Error{
		Code:        code,
		Name:        "UNKNOWN_ERROR_CODE_" + strconv.Itoa(int(code)),
		Description: "an error code this client does not know",
	}, false
}

// New turns an error_code/error_message pair from a response into an error:
// nil for code 0, else a *ServerError.
func New(code int32, message string) error {
	if code == 0 {
		return nil
	}
	e, _ := Lookup(code)
	return &ServerError{Err: e, Message: message}
}

// Code returns the Fluss error code carried by err (through wrapping), and
// false when err carries none.
func Code(err error) (int32, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return 0, false
}

// retriabler is implemented by errors of other packages (connection errors in
// fluss/internal/wire) that know whether they are transient.
type retriabler interface{ Retriable() bool }

// IsRetriable is the client's single retry decision. It reports true when err
// (or an error it wraps) is
//   - a Fluss error code marked retriable in the table, or
//   - an error that says so itself through a Retriable() bool method
//     (dropped connections, requests the server never answered).
//
// It is false for nil, for context cancellation and deadline errors of the
// caller's context, for every non-retriable code, and for anything else.
// Codes that need fresh metadata before a retry can succeed are also reported
// by InvalidatesMetadata; FENCED_LEADER_EPOCH is not retriable as such but
// InvalidatesMetadata is true for it.
func IsRetriable(err error) bool {
	if err == nil {
		return false
	}
	// The first error in the chain that has an opinion decides.
	var r retriabler
	if errors.As(err, &r) {
		return r.Retriable()
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Retriable
	}
	return false
}

// InvalidatesMetadata reports whether err means the cached leader of a bucket
// (or the cached table, partition or coordinator) is stale, so the caller
// should refresh metadata before retrying: NETWORK_EXCEPTION,
// NOT_LEADER_OR_FOLLOWER, UNKNOWN_TABLE_OR_BUCKET, FENCED_LEADER_EPOCH,
// LEADER_NOT_AVAILABLE, NOT_COORDINATOR_LEADER (a standby coordinator of
// Fluss 1.0 refuses every request but API_VERSIONS before running it), and
// connection-level failures (errors implementing InvalidatesMetadata() bool).
func InvalidatesMetadata(err error) bool {
	if err == nil {
		return false
	}
	var m interface{ InvalidatesMetadata() bool }
	if errors.As(err, &m) {
		return m.InvalidatesMetadata()
	}
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e {
	case NetworkException, NotLeaderOrFollower, UnknownTableOrBucket, FencedLeaderEpoch, LeaderNotAvailable,
		NotCoordinatorLeader:
		return true
	}
	return false
}

// All returns every known table entry ordered by code.
func All() []*Error {
	out := make([]*Error, 0, len(table))
	for c := int32(-1); c <= maxCode; c++ {
		if e, ok := table[c]; ok {
			out = append(out, e)
		}
	}
	return out
}

const maxCode = 73
