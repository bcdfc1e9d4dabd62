package flussinput

import (
	"fmt"
	"strconv"
	"time"
)

// progressInterval is how often a bounded run (end_at: latest) logs its
// progress; tests shorten it.
var progressInterval = 5 * time.Second

// progress is what a bounded run has to read: per bucket, from the offset
// it started at to its end offset.
type progress struct {
	start, end map[bucketKey]int64
	total      int64 // rows (offsets) to read
	began      time.Time
}

// startProgressLocked starts logging the progress of a bounded run, once,
// from the first plan (later connections resume within the same ranges).
// It returns what the start-up log line adds: the rows to read.
func (in *input) startProgressLocked(plan []plannedBucket) string {
	if in.endOffsets == nil || in.progress != nil {
		return ""
	}
	p := &progress{start: map[bucketKey]int64{}, end: map[bucketKey]int64{}, began: time.Now()}
	for _, pb := range plan {
		if end, ok := in.endOffsets[pb.key]; ok && pb.offset < end {
			p.start[pb.key], p.end[pb.key] = pb.offset, end
			p.total += end - pb.offset
		}
	}
	in.progress = p
	if p.total > 0 {
		go in.reportProgress(p, in.flushStop)
	}
	return fmt.Sprintf(", %s rows up to their end offsets (%s: %s)", thousands(p.total), fiFieldEndAt, endAtLatest)
}

// done returns the rows acknowledged so far: what the committed position
// of each bucket has moved over.
func (p *progress) done(positions map[bucketKey][2]int64) int64 {
	var n int64
	for k, start := range p.start {
		if pos, ok := positions[k]; ok {
			n += min(max(pos[0], start), p.end[k]) - start
		}
	}
	return n
}

// reportProgress logs the progress every progressInterval until every row
// is acknowledged or the input closes (Close logs the end, see
// logProgressEnd).
func (in *input) reportProgress(p *progress, stop <-chan struct{}) {
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	last, lastAt := int64(0), p.began
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			done := p.done(in.cp.positions())
			if done >= p.total {
				return
			}
			in.log.Infof("Read %s of %s rows of table %s (%.1f%%), %s rows/s, %s",
				thousands(done), thousands(p.total), in.tablePath(), 100*float64(done)/float64(p.total),
				thousands(perSecond(done-last, now.Sub(lastAt))), timeLeft(p.total-done, perSecond(done, now.Sub(p.began))))
			last, lastAt = done, now
		}
	}
}

// logProgressEnd logs, when the input closes, how much of a bounded run
// was read.
func (in *input) logProgressEnd(p *progress) {
	if p == nil || p.total == 0 {
		return
	}
	done, elapsed := p.done(in.cp.positions()), time.Since(p.began)
	if done >= p.total {
		in.log.Infof("Read all %s rows of table %s in %v (%s rows/s)", thousands(p.total), in.tablePath(), roundDuration(elapsed), thousands(perSecond(p.total, elapsed)))
		return
	}
	in.log.Infof("Stopped after %s of %s rows of table %s in %v", thousands(done), thousands(p.total), in.tablePath(), roundDuration(elapsed))
}

// roundDuration rounds d for a log line: to 1 ms below a second, 0.1 s
// below a minute, 1 s above.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// perSecond is n per second over d.
func perSecond(n int64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(float64(n) / d.Seconds())
}

// timeLeft estimates the time to read rows at rate rows per second.
func timeLeft(rows, rate int64) string {
	if rate <= 0 {
		return "time left unknown"
	}
	d := time.Duration(float64(rows) / float64(rate) * float64(time.Second))
	return "about " + d.Round(time.Second).String() + " left"
}

// thousands formats n with thousands separators: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
