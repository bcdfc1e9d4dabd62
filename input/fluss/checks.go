package flussinput

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// The checks of single values, shared by parseConfig and the lint rules
// (lint.go). Each returns an error whose message names the field.

// checkBootstrap returns the non-blank addresses, each host:port.
func checkBootstrap(addrs []string) ([]string, error) {
	addrs = slices.DeleteFunc(slices.Clone(addrs), func(s string) bool { return strings.TrimSpace(s) == "" })
	if len(addrs) == 0 {
		return nil, fmt.Errorf("field %s: at least one address (host:port) is required", fiFieldBootstrap)
	}
	for _, a := range addrs {
		if _, port, ok := strings.Cut(a, ":"); !ok || port == "" {
			return nil, fmt.Errorf("field %s: address %s is not host:port", fiFieldBootstrap, jsonText(a))
		}
	}
	return addrs, nil
}

// checkNonEmpty rejects the empty string.
func checkNonEmpty(field, s string) error {
	if s == "" {
		return fmt.Errorf("field %s: must not be empty", field)
	}
	return nil
}

// checkMechanism accepts PLAIN in any case.
func checkMechanism(s string) error {
	if !strings.EqualFold(s, "PLAIN") {
		return enumError(saslMechanismPath, s, "PLAIN")
	}
	return nil
}

// checkEnum accepts only the options.
func checkEnum(field, s string, options ...string) error {
	if !slices.Contains(options, s) {
		return enumError(field, s, options...)
	}
	return nil
}

// checkNames accepts names that are not empty and not repeated.
func checkNames(field, what string, list []string) error {
	for i, n := range list {
		if n == "" {
			return fmt.Errorf("field %s: empty %s", field, what)
		}
		if slices.Contains(list[:i], n) {
			return fmt.Errorf("field %s: %s %s listed twice", field, what, jsonText(n))
		}
	}
	return nil
}

// checkDuration parses a Go duration ("500ms", "1m") that must be positive
// or, with allowZero, not negative.
func checkDuration(field, s string, allowZero bool) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case allowZero && (err != nil || d < 0):
		return 0, fmt.Errorf("field %s: %s is not a duration of 0s or more such as 500ms, 10s or 1m", field, jsonText(s))
	case !allowZero && (err != nil || d <= 0):
		return 0, fmt.Errorf("field %s: %s is not a positive duration such as 500ms, 10s or 1m", field, jsonText(s))
	}
	return d, nil
}

// checkBool accepts true or false (of fields declared "any").
func checkBool(field string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("field %s: %s is not true or false", field, jsonText(v))
	}
	return b, nil
}

// checkWholeNumber accepts a whole number from lo to hi (of fields
// declared "any").
func checkWholeNumber(field string, v any, lo, hi int64) (int64, error) {
	n, ok := asWholeNumber(v)
	switch {
	case !ok:
		return 0, fmt.Errorf("field %s: %s is not a whole number", field, jsonText(v))
	case n < lo || n > hi:
		return 0, fmt.Errorf("field %s: %v is outside %d to %d", field, v, lo, hi)
	}
	return n, nil
}

// asWholeNumber converts a decoded number without a fraction (values
// beyond int64 are clamped, so that a range check rejects them).
func asWholeNumber(v any) (int64, bool) {
	switch t := v.(type) {
	case int:
		return int64(t), true
	case int64:
		return t, true
	case uint64:
		return int64(min(t, uint64(maxInt64))), true
	case float64:
		if t != math.Trunc(t) || math.IsInf(t, 0) {
			return 0, false
		}
		return int64(max(min(t, math.MaxInt64), math.MinInt64)), true
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n, true
		}
		if f, err := t.Float64(); err == nil {
			return asWholeNumber(f)
		}
	}
	return 0, false
}

// checkBuckets accepts bucket numbers in int32 range, none twice.
func checkBuckets(items []any) ([]int32, error) {
	var out []int32
	for _, v := range items {
		b, err := checkWholeNumber(fiFieldBuckets, v, 0, maxBucket)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, int32(b)) {
			return nil, fmt.Errorf("field %s: bucket %d listed twice", fiFieldBuckets, b)
		}
		out = append(out, int32(b))
	}
	return out, nil
}

// maxBucket is the largest bucket number (an int32).
const maxBucket = 1<<31 - 1

// checkShard checks a shard object's index against its count; each of
// them is checked by its own rule.
func checkShard(m map[string]any) error {
	index, ierr := shardIndexOf(m[fiFieldShardIndex])
	count, cok := asWholeNumber(m[fiFieldShardCount])
	if ierr != nil || !cok || count < 1 || count > maxShardCount {
		return nil
	}
	return checkShardIndex(index, count)
}

// shardIndexOf reads shard.index: a whole number, or a name that ends in
// "-<number>", such as a StatefulSet's pod name (fluss-iggy-2 is shard 2),
// so that a manifest can pass its pod name as the index.
func shardIndexOf(v any) (int64, error) {
	s, ok := v.(string)
	if !ok {
		return checkWholeNumber(shardIndexPath, v, 0, maxShardCount-1)
	}
	digits := s[strings.LastIndexByte(s, '-')+1:]
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || digits == "" || digits[0] == '+' {
		return 0, fmt.Errorf("field %s: %q is neither a whole number nor a name ending in -<number> (a StatefulSet pod name such as fluss-iggy-2)", shardIndexPath, s)
	}
	if n < 0 || n > maxShardCount-1 {
		return 0, fmt.Errorf("field %s: %q gives %d, outside 0 to %d", shardIndexPath, s, n, maxShardCount-1)
	}
	return n, nil
}

// checkShardIndex requires index < count.
func checkShardIndex(index, count int64) error {
	if index >= count {
		return fmt.Errorf("field %s: must be between 0 and %d (shard.count - 1), got %d", shardIndexPath, count-1, index)
	}
	return nil
}

// checkCheckpointKey rejects an empty key and '/'.
func checkCheckpointKey(s string) error {
	if err := checkNonEmpty(fiFieldCheckpointKey, s); err != nil {
		return err
	}
	if strings.Contains(s, "/") {
		return fmt.Errorf("field %s: %s must not contain '/'", fiFieldCheckpointKey, jsonText(s))
	}
	return nil
}

// checkStartOffset reads start_offset: earliest, latest, timestamp or an
// offset.
func checkStartOffset(raw string) (startMode, int64, error) {
	switch s := strings.TrimSpace(raw); s {
	case startEarliest:
		return startModeEarliest, 0, nil
	case startLatest:
		return startModeLatest, 0, nil
	case startTimestamp:
		return startModeTimestamp, 0, nil
	case startSnapshot:
		return startModeSnapshot, 0, nil
	default:
		if n, ok := offsetNumber(s); ok {
			return startModeOffset, n, nil
		}
	}
	return 0, 0, fmt.Errorf("field %s: %s is not earliest, latest, timestamp, snapshot or an offset (a whole number from 0)", fiFieldStartOffset, jsonText(raw))
}

// offsetNumber parses a non-negative decimal int64 without sign.
func offsetNumber(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// parseTimestamp reads start_timestamp: an RFC 3339 time or epoch
// milliseconds, not before 1970.
func parseTimestamp(raw string) (int64, error) {
	s := strings.TrimSpace(raw)
	if rest, neg := strings.CutPrefix(s, "-"); neg && rest != "" && strings.Trim(rest, "0123456789") == "" {
		return 0, fmt.Errorf("field %s: timestamp %s is negative", fiFieldStartTimestamp, s)
	}
	if n, ok := offsetNumber(s); ok {
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("field %s: %s is neither an RFC 3339 time nor milliseconds since the epoch", fiFieldStartTimestamp, jsonText(raw))
	}
	if t.Before(time.Unix(0, 0)) {
		return 0, fmt.Errorf("field %s: timestamp %s is before 1970", fiFieldStartTimestamp, jsonText(raw))
	}
	return t.UnixMilli(), nil
}

// ---------------------------------------------------------------------------
// Readers of parsed fields, with the checks above.

// nonEmpty reads a string field (path "a.b" for nested fields) that must
// not be empty.
func nonEmpty(pc *service.ParsedConfig, field string) (string, error) {
	s, err := pc.FieldString(strings.Split(field, ".")...)
	if err != nil {
		return "", err
	}
	return s, checkNonEmpty(field, s)
}

// enumField reads a string field that must be one of options.
func enumField(pc *service.ParsedConfig, field string, options ...string) (string, error) {
	s, err := pc.FieldString(field)
	if err != nil {
		return "", err
	}
	return s, checkEnum(field, s, options...)
}

// names reads a list of names, none empty and none twice.
func names(pc *service.ParsedConfig, field, what string) ([]string, error) {
	list, err := pc.FieldStringList(field)
	if err != nil {
		return nil, err
	}
	return list, checkNames(field, what, list)
}

// durationField reads a duration that must be positive or, with
// allowZero, not negative.
func durationField(pc *service.ParsedConfig, field string, allowZero bool) (time.Duration, error) {
	s, err := pc.FieldString(field)
	if err != nil {
		return 0, err
	}
	return checkDuration(field, s, allowZero)
}

// boolField reads a field declared "any" that must be true or false.
func boolField(pc *service.ParsedConfig, field string) (bool, error) {
	v, err := pc.FieldAny(field)
	if err != nil {
		return false, err
	}
	return checkBool(field, v)
}

// wholeNumber reads a field declared "any" (path "a.b" for nested fields)
// that must be a whole number from lo to hi.
func wholeNumber(pc *service.ParsedConfig, field string, lo, hi int64) (int64, error) {
	v, err := pc.FieldAny(strings.Split(field, ".")...)
	if err != nil {
		return 0, err
	}
	return checkWholeNumber(field, v, lo, hi)
}
