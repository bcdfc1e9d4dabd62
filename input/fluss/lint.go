package flussinput

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/bloblang"
)

// The input's lint rules run the checks of parseConfig, so that
// `fluss-iggy lint` reports at the field's line exactly what `fluss-iggy
// run` would refuse, with the same message. Each field's rule is
//
//	root = this.fluss_input_check("<field>")
//
// a Bloblang method, registered by this package, that applies the Go check
// of that field to the value and returns its message (or nothing).
//
// Two facts about Benthos 4.60's linter shape this:
//
//   - A field rule is called with the value decoded by the field's type,
//     and is skipped when that decoding fails; so are the rules of the
//     enclosing objects, the spec's own rule included. `checkpoint_limit:
//     lots` in an int field is therefore never linted (Benthos checks no
//     number or bool types itself). Numbers and booleans are declared as
//     "any" fields and their checks include the type.
//   - A field rule is reported at the field's line; a spec rule at the line
//     of the component's first field. Each field's own checks are field
//     rules; only checks that combine fields are a spec rule, whose messages
//     name every field involved.
//
// Rules of list fields run on the list and on each element; the checks
// look at the whole list and ignore the elements.

// lintMethod is the Bloblang method the field rules call.
const lintMethod = "fluss_input_check"

var registerLintMethod = sync.OnceFunc(func() {
	spec := bloblang.NewPluginSpec().
		Category("fluss-iggy").
		Description("Used by the lint rules of the `fluss` input: applies the input's check of the named field to the value and returns the error message, or null when the value is valid.").
		Param(bloblang.NewStringParam("field").Description("The field, such as `checkpoint_limit` or `shard.index`."))
	bloblang.MustRegisterMethodV2(lintMethod, spec, func(args *bloblang.ParsedParams) (bloblang.Method, error) {
		field, err := args.GetString("field")
		if err != nil {
			return nil, err
		}
		check, ok := fieldChecks[field]
		if !ok {
			return nil, fmt.Errorf("%s: no check for field %q", lintMethod, field)
		}
		return func(v any) (any, error) {
			if err := check(v); err != nil {
				return err.Error(), nil
			}
			return nil, nil
		}, nil
	})
})

// lintRule is the lint rule of a field: its check.
func lintRule(field string) string {
	return fmt.Sprintf("root = this.%s(%s)", lintMethod, strconv.Quote(field))
}

// fieldChecks are the checks of single fields, by field path, applied to
// the value as Benthos's linter decodes it. parseConfig runs the same
// functions (check*).
var fieldChecks = map[string]func(any) error{
	fiFieldBootstrap:          onStrings(func(l []string) error { _, err := checkBootstrap(l); return err }),
	fiFieldDatabase:           onString(func(s string) error { return checkNonEmpty(fiFieldDatabase, s) }),
	fiFieldTable:              onString(func(s string) error { return checkNonEmpty(fiFieldTable, s) }),
	fiFieldWaitForTable:       func(v any) error { _, err := checkBool(fiFieldWaitForTable, v); return err },
	saslMechanismPath:         onString(checkMechanism),
	saslUsernamePath:          onString(func(s string) error { return checkNonEmpty(saslUsernamePath, s) }),
	fiFieldConnectTimeout:     durationCheck(fiFieldConnectTimeout, false),
	fiFieldRequestTimeout:     durationCheck(fiFieldRequestTimeout, false),
	fiFieldColumns:            onStrings(func(l []string) error { return checkNames(fiFieldColumns, "column", l) }),
	fiFieldTableType:          enumCheck(fiFieldTableType, tableTypeLog, tableTypePK),
	fiFieldStartOffset:        onString(func(s string) error { _, _, err := checkStartOffset(s); return err }),
	fiFieldStartTimestamp:     onString(func(s string) error { _, err := parseTimestamp(s); return err }),
	fiFieldOnUnresumable:      enumCheck(fiFieldOnUnresumable, unresumableFail, unresumableEarliest, unresumableLatest),
	fiFieldEndAt:              enumCheck(fiFieldEndAt, endAtNone, endAtLatest),
	fiFieldPayloadFormat:      enumCheck(fiFieldPayloadFormat, formatJSON, formatStructured, formatArrow),
	fiFieldOrdering:           enumCheck(fiFieldOrdering, orderingBucket, orderingNone),
	fiFieldArrowCompression:   enumCheck(fiFieldArrowCompression, compressionNone, compressionLZ4, compressionZstd),
	fiFieldPartitions:         onStrings(func(l []string) error { return checkNames(fiFieldPartitions, "partition", l) }),
	fiFieldDiscoveryInterval:  durationCheck(fiFieldDiscoveryInterval, true),
	fiFieldBuckets:            onList(func(l []any) error { _, err := checkBuckets(l); return err }),
	fiFieldShard:              onMap(checkShard),
	shardIndexPath:            func(v any) error { _, err := shardIndexOf(v); return err },
	shardCountPath:            numberCheck(shardCountPath, 1, maxShardCount),
	fiFieldCheckpointCache:    onString(func(s string) error { return checkNonEmpty(fiFieldCheckpointCache, s) }),
	fiFieldCheckpointKey:      onString(checkCheckpointKey),
	fiFieldCheckpointLimit:    numberCheck(fiFieldCheckpointLimit, 1, maxCheckpointLimit),
	fiFieldAutoReplayNacks:    func(v any) error { _, err := checkBool(fiFieldAutoReplayNacks, v); return err },
	fiFieldStallTimeout:       durationCheck(fiFieldStallTimeout, true),
	fiFieldFetchMaxBytes:      numberCheck(fiFieldFetchMaxBytes, 1, maxInt32),
	fiFieldFetchMaxBucketByte: numberCheck(fiFieldFetchMaxBucketByte, 1, maxInt32),
	fiFieldFetchMaxWait:       durationCheck(fiFieldFetchMaxWait, true),
	fiFieldMaxBatchRows:       numberCheck(fiFieldMaxBatchRows, 0, maxInt32),
	readAheadPath:             numberCheck(readAheadPath, 1, maxInt32),
}

// Paths of nested fields.
const (
	saslMechanismPath = fiFieldSASL + "." + fiFieldSASLMechanism
	saslUsernamePath  = fiFieldSASL + "." + fiFieldSASLUsername
	shardIndexPath    = fiFieldShard + "." + fiFieldShardIndex
	shardCountPath    = fiFieldShard + "." + fiFieldShardCount
	readAheadPath     = fiFieldRemote + "." + fiFieldReadAhead
	s3Path            = fiFieldRemote + "." + fiFieldRemoteS3
)

// onString applies f to string values (string fields only hold strings;
// anything else is not this rule's to judge).
func onString(f func(string) error) func(any) error {
	return func(v any) error {
		if s, ok := v.(string); ok {
			return f(s)
		}
		return nil
	}
}

// onList applies f to lists, not to their elements.
func onList(f func([]any) error) func(any) error {
	return func(v any) error {
		if l, ok := v.([]any); ok {
			return f(l)
		}
		return nil
	}
}

// onStrings applies f to lists of strings.
func onStrings(f func([]string) error) func(any) error {
	return onList(func(l []any) error {
		ss := make([]string, len(l))
		for i, e := range l {
			ss[i] = fmt.Sprint(e)
		}
		return f(ss)
	})
}

// onMap applies f to objects.
func onMap(f func(map[string]any) error) func(any) error {
	return func(v any) error {
		if m, ok := v.(map[string]any); ok {
			return f(m)
		}
		return nil
	}
}

func durationCheck(field string, allowZero bool) func(any) error {
	return onString(func(s string) error { _, err := checkDuration(field, s, allowZero); return err })
}

func enumCheck(field string, options ...string) func(any) error {
	return onString(func(s string) error { return checkEnum(field, s, options...) })
}

func numberCheck(field string, lo, hi int64) func(any) error {
	return func(v any) error { _, err := checkWholeNumber(field, v, lo, hi); return err }
}

// lintCombinations is the spec's rule: the checks that involve several
// fields (parseConfig's messages are the same constants). Benthos reports
// it at the line of the input's first field, so every message names the
// fields.
func lintCombinations() string {
	return fmt.Sprintf(`let start = this.%s.or("").string().trim()
let s3 = this.%s.%s.or({})
root = [
  if this.%s.or(null) != null && this.%s.or([]).length() > 0 { %q },
  if ($s3.%s.or("") == "") != ($s3.%s.or("") == "") { %q },
  if $start == %q && this.%s.or("") == %q { %q },
  if $start == %q && this.%s.or(null) == null { %q },
  if $start != %q && this.%s.or(null) != null { %q.format($start) },
].filter(m -> m != null)`,
		fiFieldStartOffset,
		fiFieldRemote, fiFieldRemoteS3,
		fiFieldShard, fiFieldBuckets, bucketsAndShard,
		fiFieldS3AccessKey, fiFieldS3SecretKey, s3KeysTogether,
		startSnapshot, fiFieldTableType, tableTypeLog, snapshotNeedsPK,
		startTimestamp, fiFieldStartTimestamp, timestampNeedsTimestamp,
		startTimestamp, fiFieldStartTimestamp, timestampOnlyWith)
}

// Messages of the checks that combine fields.
const (
	bucketsAndShard         = "fields buckets and shard: set one, not both"
	timestampNeedsTimestamp = "field start_offset: timestamp needs field start_timestamp"
	timestampOnlyWith       = "field start_timestamp: only used with start_offset: timestamp (it is %v)"
	s3KeysTogether          = "fields remote_storage.s3.access_key and secret_key: set both or neither"
	snapshotNeedsPK         = "field start_offset: snapshot reads primary-key tables, but table_type is log"
)

// jsonText renders a value in a message as JSON: strings quoted.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

const maxInt64 = int64(^uint64(0) >> 1)

// enumError is the message for a value that is not one of the options (in
// the words of internal/speclint, which the other components use).
func enumError(field, value string, options ...string) error {
	return fmt.Errorf("field %s: %s is not one of: %s", field, jsonText(value), strings.Join(options, ", "))
}
