package iggycmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fluss-iggy/fluss-iggy/iggy"
	"github.com/fluss-iggy/fluss-iggy/internal/e2e"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"
)

// PeekRequest says what `iggy peek` prints.
type PeekRequest struct {
	Stream, Topic string // names or numeric ids
	Partition     int    // -1: every partition
	Count         int    // messages per partition
	From          From
}

// From is where a peek starts in each partition: at Offset, or, with
// Latest, Last messages before the partition's end.
type From struct {
	Offset uint64
	Latest bool
	Last   uint64
}

// parseFrom reads --from: earliest, latest (the last count messages),
// latest-N or an offset.
func parseFrom(s string, count int) (From, error) {
	bad := fmt.Errorf("--from %q: want earliest, latest, latest-N (the last N messages) or an offset", s)
	switch {
	case s == "earliest":
		return From{}, nil
	case s == "latest":
		return From{Latest: true, Last: uint64(max(count, 1))}, nil
	case strings.HasPrefix(s, "latest-"):
		n, err := strconv.ParseUint(strings.TrimPrefix(s, "latest-"), 10, 64)
		if err != nil || n == 0 {
			return From{}, bad
		}
		return From{Latest: true, Last: n}, nil
	}
	off, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return From{}, bad
	}
	return From{Offset: off}, nil
}

// pollBatch bounds the messages asked for in one poll.
const pollBatch = 1000

// Peek writes the messages r asks for to w: a line about the topic, then
// per partition its messages in offset order.
func Peek(ctx context.Context, c *iggy.Conn, r PeekRequest, w io.Writer) error {
	sid, err := iggy.ParseIdentifier(r.Stream)
	if err != nil {
		return fmt.Errorf("--stream %q: %w", r.Stream, err)
	}
	tid, err := iggy.ParseIdentifier(r.Topic)
	if err != nil {
		return fmt.Errorf("--topic %q: %w", r.Topic, err)
	}
	t, err := c.GetTopic(ctx, sid, tid)
	if t == nil && (err == nil || iggy.IsNotFound(err)) {
		return fmt.Errorf("no stream %q with a topic %q at %s", r.Stream, r.Topic, c.Addr())
	}
	if err != nil {
		return err
	}
	parts := make([]uint32, 0, t.Partitions)
	for p := uint32(0); p < t.Partitions; p++ { // 0-based in 0.8 and 0.9
		if r.Partition < 0 || uint32(r.Partition) == p {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return fmt.Errorf("--partition %d: stream %q topic %q has partitions 0 to %d", r.Partition, r.Stream, r.Topic, int(t.Partitions)-1)
	}
	fmt.Fprintf(w, "Iggy %s at %s: stream %q topic %q, %d partitions\n", c.Info().Version, c.Addr(), r.Stream, t.Name, t.Partitions)
	for _, p := range parts {
		if err := peekPartition(ctx, c, &iggy.PollRequest{Stream: sid, Topic: tid, Partition: p}, r, w); err != nil {
			return err
		}
	}
	return nil
}

// peekPartition writes up to r.Count messages of the partition of poll
// from r.From on.
func peekPartition(ctx context.Context, c *iggy.Conn, poll *iggy.PollRequest, r PeekRequest, w io.Writer) error {
	poll.Strategy, poll.Value = iggy.PollOffset, r.From.Offset
	if r.From.Latest {
		start, err := latestStart(ctx, c, poll, r.From.Last)
		if err != nil {
			return err
		}
		poll.Value = start
	}
	start, printed := poll.Value, 0
	for printed < r.Count {
		poll.Count = uint32(min(r.Count-printed, pollBatch))
		got, err := c.Poll(ctx, poll)
		if err != nil {
			return err
		}
		if len(got.Messages) == 0 {
			break
		}
		for _, m := range got.Messages[:min(len(got.Messages), r.Count-printed)] {
			writeMessage(w, poll.Partition, &m)
			printed++
			poll.Value = m.Offset + 1
		}
	}
	if printed == 0 {
		_, err := fmt.Fprintf(w, "partition %d: no messages from offset %d\n", poll.Partition, start)
		return err
	}
	return nil
}

// latestStart is the offset last messages before the end of the
// partition of poll: its current offset (the last message's), as a poll of
// one message reports it, + 1 - last; 0 when it holds fewer.
func latestStart(ctx context.Context, c *iggy.Conn, poll *iggy.PollRequest, last uint64) (uint64, error) {
	probe := *poll
	probe.Value, probe.Count = 0, 1
	got, err := c.Poll(ctx, &probe)
	if err != nil || len(got.Messages) == 0 || got.CurrentOffset+1 <= last {
		return 0, err
	}
	return got.CurrentOffset + 1 - last, nil
}

// writeMessage writes one message: where it is, its id and server
// timestamp, its headers and its payload.
func writeMessage(w io.Writer, partition uint32, m *iggy.PolledMessage) {
	ts := time.UnixMicro(int64(m.Timestamp)).UTC().Format(time.RFC3339Nano)
	fmt.Fprintf(w, "partition %d offset %d id %s timestamp %s\n", partition, m.Offset, e2e.IDHex(m.ID), ts)
	fmt.Fprintf(w, "  headers %s\n", headersText(m.UserHeaders))
	fmt.Fprintf(w, "  payload %s\n", payloadText(m.Payload))
}

// headersText renders user headers as key=value, sorted by key: string
// keys as they are, values by their kind (strings quoted).
func headersText(b []byte) string {
	if len(b) == 0 {
		return "(none)"
	}
	hs, err := iggytest.ParseUserHeaders(b)
	if err != nil {
		return fmt.Sprintf("(%d bytes that do not parse: %v)", len(b), err)
	}
	kv := make([]string, 0, len(hs))
	for _, h := range hs {
		key := e2e.HeaderValue(h.Key)
		if h.Key.Kind == iggytest.HeaderString {
			key = string(h.Key.Value)
		}
		kv = append(kv, key+"="+e2e.HeaderValue(h.Value))
	}
	sort.Strings(kv)
	return strings.Join(kv, " ")
}

// payloadText is the payload as indented JSON when it is JSON, otherwise
// as a quoted Go string (escapes for control and invalid bytes).
func payloadText(p []byte) string {
	var b bytes.Buffer
	if json.Valid(p) && json.Indent(&b, p, "  ", "  ") == nil {
		return b.String()
	}
	return strconv.Quote(string(p))
}
