package flussoutput

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
)

// A journal makes appends to a log table survive a crash without
// duplicates. Before a batch's rows are sent, the journal stores in a cache
// where each of its Fluss batches goes (bucket, writer id, sequence, an
// offset below it) and which source positions (the input's partition and
// offset metadata) its rows came from. After a restart the input delivers
// again what it had not committed; the journal reads the buckets' logs from
// the recorded offsets, and the messages of a journal record whose batches
// are all in the log are acknowledged without being written again.

// journalSlots is how many records the journal keeps: the oldest is
// overwritten. It must exceed the batches that can be written but not yet
// committed by the input when the process dies.
const journalSlots = 256

// journalRecord is what one WriteBatch sent, stored as JSON.
type journalRecord struct {
	N      uint64              `json:"n"`
	Stamps []journalStamp      `json:"stamps"`
	Runs   map[string][]offRun `json:"runs"` // source -> runs of consecutive offsets
}

// journalStamp is a fluss.BatchStamp as stored.
type journalStamp struct {
	Partition   string `json:"partition,omitempty"`
	PartitionID int64  `json:"partition_id"`
	Bucket      int32  `json:"bucket"`
	WriterID    int64  `json:"writer_id"`
	Sequence    int32  `json:"sequence"`
	From        int64  `json:"from"`
}

// offRun is the offsets first..last of one source.
type offRun [2]int64

// journal writes and reads the records of one output.
type journal struct {
	res       *service.Resources
	cache     string
	key       string   // key prefix
	sourceMD  []string // metadata keys naming the source (joined with "/")
	offsetMD  string   // metadata key of the offset
	next      atomic.Uint64
	log       *service.Logger
	skipped   *service.MetricCounter
	replayed  sync.Map // source -> []offRun: positions Fluss already has (merged, sorted)
	hasReplay atomic.Bool
}

// position returns the source and offset of a message.
func (j *journal) position(msg *service.Message) (string, int64, error) {
	src := ""
	for i, k := range j.sourceMD {
		v, ok := msg.MetaGetMut(k)
		if !ok {
			return "", 0, fmt.Errorf("field %s: the message has no %s metadata", foFieldDedupe, k)
		}
		if i > 0 {
			src += "/"
		}
		src += fmt.Sprint(v)
	}
	v, ok := msg.MetaGetMut(j.offsetMD)
	if !ok {
		return "", 0, fmt.Errorf("field %s: the message has no %s metadata", foFieldDedupe, j.offsetMD)
	}
	off, err := metaInt(v)
	if err != nil {
		return "", 0, fmt.Errorf("field %s: metadata %s: %w", foFieldDedupe, j.offsetMD, err)
	}
	return src, off, nil
}

func metaInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return strconv.ParseInt(fmt.Sprint(v), 10, 64)
}

// written tells whether Fluss already holds the message at src, off (a
// replay after a restart).
func (j *journal) written(src string, off int64) bool {
	if !j.hasReplay.Load() {
		return false
	}
	v, ok := j.replayed.Load(src)
	if !ok {
		return false
	}
	runs := v.([]offRun)
	i := sort.Search(len(runs), func(i int) bool { return runs[i][1] >= off })
	return i < len(runs) && runs[i][0] <= off
}

// pending is the record of one WriteBatch, filled in as the writer
// announces its batches.
type pending struct {
	j   *journal
	mu  sync.Mutex
	rec journalRecord
}

// begin starts the record of a WriteBatch whose rows came from the
// positions pos.
func (j *journal) begin(pos []position) *pending {
	p := &pending{j: j, rec: journalRecord{N: j.next.Add(1) - 1, Runs: map[string][]offRun{}}}
	for _, q := range pos {
		runs := p.rec.Runs[q.source]
		if n := len(runs); n > 0 && runs[n-1][1]+1 == q.offset {
			runs[n-1][1] = q.offset
		} else {
			runs = append(runs, offRun{q.offset, q.offset})
		}
		p.rec.Runs[q.source] = runs
	}
	return p
}

// beforeSend stores the record with the batches the writer is about to
// send.
func (p *pending) beforeSend(ctx context.Context, stamps []fluss.BatchStamp) error {
	p.mu.Lock()
	for _, s := range stamps {
		p.rec.Stamps = append(p.rec.Stamps, journalStamp{
			Partition: s.Partition, PartitionID: s.Bucket.PartitionID, Bucket: s.Bucket.Bucket,
			WriterID: s.WriterID, Sequence: s.Sequence, From: s.From,
		})
	}
	data, err := json.Marshal(&p.rec)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	return p.j.set(ctx, p.rec.N%journalSlots, data)
}

func (j *journal) slotKey(slot uint64) string { return j.key + "/" + strconv.FormatUint(slot, 10) }

func (j *journal) set(ctx context.Context, slot uint64, data []byte) error {
	var err error
	aerr := j.res.AccessCache(ctx, j.cache, func(c service.Cache) { err = c.Set(ctx, j.slotKey(slot), data, nil) })
	if err == nil {
		err = aerr
	}
	if err != nil {
		return fmt.Errorf("field %s: storing the journal in cache %s: %w", foFieldDedupe, j.cache, err)
	}
	return nil
}

// load reads the journal's records, oldest first.
func (j *journal) load(ctx context.Context) ([]journalRecord, error) {
	var recs []journalRecord
	var ferr error
	aerr := j.res.AccessCache(ctx, j.cache, func(c service.Cache) {
		for slot := uint64(0); slot < journalSlots; slot++ {
			data, err := c.Get(ctx, j.slotKey(slot))
			if errors.Is(err, service.ErrKeyNotFound) {
				continue
			}
			if err != nil {
				ferr = err
				return
			}
			var r journalRecord
			if err := json.Unmarshal(data, &r); err != nil {
				ferr = fmt.Errorf("record %s: %w", j.slotKey(slot), err)
				return
			}
			recs = append(recs, r)
		}
	})
	if ferr == nil {
		ferr = aerr
	}
	if ferr != nil {
		return nil, fmt.Errorf("field %s: reading the journal from cache %s: %w", foFieldDedupe, j.cache, ferr)
	}
	sort.Slice(recs, func(a, b int) bool { return recs[a].N < recs[b].N })
	if n := len(recs); n > 0 {
		j.next.Store(recs[n-1].N + 1)
	}
	return recs, nil
}

// stampKey identifies a Fluss batch by its bucket and numbering.
type stampKey struct {
	bucket   fluss.TableBucket
	writerID int64
	sequence int32
}

// recover reads the journal and the logs of the buckets its records wrote
// to, and remembers the source positions of every record whose batches
// are all in the log: their messages, delivered again, are not written.
func (j *journal) recover(ctx context.Context, c *fluss.Client, info *fluss.TableInfo) error {
	recs, err := j.load(ctx)
	if err != nil || len(recs) == 0 {
		return err
	}
	found, err := j.findBatches(ctx, c, info, recs)
	if err != nil {
		return fmt.Errorf("field %s: reading table %s for the journal's batches: %w", foFieldDedupe, info.Path, err)
	}
	runs := map[string][]offRun{}
	kept, mixed := 0, 0
	for _, r := range recs {
		n := 0
		for _, s := range r.Stamps {
			if found[stampKey{info.Bucket(s.PartitionID, s.Bucket), s.WriterID, s.Sequence}] {
				n++
			}
		}
		switch {
		case n > 0 && n == len(r.Stamps):
			kept++
			for src, rs := range r.Runs {
				runs[src] = append(runs[src], rs...)
			}
		case n > 0:
			mixed++
		}
	}
	for src, rs := range runs {
		j.replayed.Store(src, mergeRuns(rs))
	}
	j.hasReplay.Store(len(runs) > 0)
	if mixed > 0 {
		j.log.Warnf("Journal of %s: %d batches were written in part when the process stopped; their rows are written again (repeats possible)", info.Path, mixed)
	}
	j.log.Infof("Journal of %s: %d of its %d last batches are in the table; their messages are not written again", info.Path, kept, len(recs))
	return nil
}

// findBatches reads each bucket the records wrote to from the lowest
// recorded offset to its end and returns the numbered batches it holds.
func (j *journal) findBatches(ctx context.Context, c *fluss.Client, info *fluss.TableInfo, recs []journalRecord) (map[stampKey]bool, error) {
	type span struct {
		partition string
		from      int64
	}
	spans := map[fluss.TableBucket]*span{}
	for _, r := range recs {
		for _, s := range r.Stamps {
			tb := info.Bucket(s.PartitionID, s.Bucket)
			if sp := spans[tb]; sp == nil {
				spans[tb] = &span{s.Partition, s.From}
			} else if s.From < sp.from {
				sp.from = s.From
			}
		}
	}
	var ranges []fluss.BucketRange
	for tb, sp := range spans {
		ends, err := c.ListOffsets(ctx, info, tb.PartitionID, []int32{tb.Bucket}, fluss.LatestOffset())
		if err != nil {
			return nil, err
		}
		ranges = append(ranges, fluss.BucketRange{Bucket: tb, Partition: sp.partition, Start: sp.from, End: ends[tb.Bucket]})
	}
	s, err := c.NewScanner(info)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	found := map[stampKey]bool{}
	err = s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error {
		found[stampKey{b.Bucket, b.WriterID, b.BatchSequence}] = true
		return nil
	})
	return found, err
}

// mergeRuns sorts runs and merges those that overlap or touch.
func mergeRuns(rs []offRun) []offRun {
	sort.Slice(rs, func(a, b int) bool { return rs[a][0] < rs[b][0] })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// replay returns msg's source position and whether the table already
// holds it (delivered again after a restart; counted).
func (j *journal) replay(msg *service.Message) (position, bool, error) {
	src, off, err := j.position(msg)
	if err != nil {
		return position{}, false, err
	}
	if j.written(src, off) {
		j.skipped.Incr(1)
		return position{}, true, nil
	}
	return position{src, off}, false, nil
}

// position is where a message came from.
type position struct {
	source string
	offset int64
}
