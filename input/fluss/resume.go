package flussinput

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// startLinesMax is the most buckets whose start lines are logged at info
// level; above it one summary line is, and the buckets' lines at debug.
const startLinesMax = 16

// loadedStart is what the first start's plan takes from the value under
// checkpoint_key, for the start lines.
type loadedStart struct {
	offsets map[bucketKey]int64 // its positions, when planning uses them
	policy  bool                // it cannot be used: on_unresumable_offset applies
}

// loadedOffsets returns, before the first start's plan, what it takes from
// the value under checkpoint_key.
func (in *input) loadedOffsets(info *fluss.TableInfo) loadedStart {
	v := in.loaded
	switch {
	case in.started || v == nil:
		return loadedStart{}
	case v.unresumable || v.TableID != info.TableID:
		// A sharded input ignores it (its per-bucket keys hold the
		// positions).
		return loadedStart{policy: !in.store.perBucket}
	}
	out := make(map[bucketKey]int64, len(v.Buckets))
	for _, b := range v.Buckets {
		out[b.key()] = b.Offset
	}
	return loadedStart{offsets: out}
}

// logStarts logs where each planned bucket starts and why. resumed holds
// the positions of checkpoint_key's value (loadedOffsets). On a reconnect
// the buckets continue from their read positions: debug lines only.
func (in *input) logStarts(plan []plannedBucket, first bool, resumed loadedStart) {
	if len(plan) == 0 {
		return
	}
	counts := map[string]int{}
	var order []string
	lines := make([]string, 0, len(plan))
	for _, pb := range plan {
		verb, why := in.startReason(pb, first, resumed)
		if counts[why] == 0 {
			order = append(order, why)
		}
		counts[why]++
		lines = append(lines, fmt.Sprintf("%s table %s%s bucket %d at %s (%s)", verb, in.tablePath(), partitionSuffix(pb.partition), pb.key.bucket, startPoint(pb), why))
	}
	if !first || len(plan) > startLinesMax {
		for _, l := range lines {
			in.log.Debugf("%s", l)
		}
	}
	if !first {
		return
	}
	if len(plan) <= startLinesMax {
		for _, l := range lines {
			in.log.Infof("%s", l)
		}
		return
	}
	parts := make([]string, len(order))
	for i, why := range order {
		parts[i] = fmt.Sprintf("%d from %s", counts[why], why)
	}
	in.log.Infof("Starting table %s at %d buckets: %s (a line per bucket at debug level)", in.tablePath(), len(plan), strings.Join(parts, ", "))
}

// startPoint says where a planned bucket starts: an offset, or a row of a
// KV snapshot.
func startPoint(pb plannedBucket) string {
	if pb.snap != nil {
		return fmt.Sprintf("row %s of KV snapshot %d (then the changelog from offset %s)", thousands(pb.offset), pb.snap.ID, thousands(pb.snap.LogOffset))
	}
	return "offset " + thousands(pb.offset)
}

// startReason returns the verb of a bucket's start line (Resuming from a
// stored position, else Starting) and where its position came from.
func (in *input) startReason(pb plannedBucket, first bool, resumed loadedStart) (string, string) {
	switch {
	case !first:
		return "Resuming", "read position"
	case pb.snap != nil && pb.offset > 0:
		return "Resuming", "checkpoint"
	case pb.snap != nil:
		return "Starting", fiFieldStartOffset + ": " + startSnapshot
	}
	if off, ok := resumed.offsets[pb.key]; ok && off == pb.offset {
		return "Resuming", "checkpoint"
	}
	if resumed.policy {
		// The value is corrupt or belongs to another table id: every
		// bucket starts by the policy (a warning said so).
		return "Starting", fiFieldOnUnresumable + ": " + in.conf.onUnresumable
	}
	if in.store.perBucket || len(resumed.offsets) > 0 {
		// A per-bucket key or on_unresumable_offset (the position left
		// the log: a warning said so) may have set it; the plan does not
		// say which.
		return "Starting", "checkpoint or " + in.startModeText()
	}
	return "Starting", in.startModeText()
}

// startModeText is start_offset as configured, for a log line.
func (in *input) startModeText() string {
	c := in.conf
	switch c.startMode {
	case startModeLatest:
		return fiFieldStartOffset + ": " + startLatest
	case startModeTimestamp:
		return fiFieldStartOffset + ": " + startTimestamp + " " + time.UnixMilli(c.startTimestamp).UTC().Format(time.RFC3339)
	case startModeOffset:
		return fiFieldStartOffset + ": " + strconv.FormatInt(c.startOffset, 10)
	case startModeSnapshot:
		return fiFieldStartOffset + ": " + startSnapshot
	}
	return fiFieldStartOffset + ": " + startEarliest
}
