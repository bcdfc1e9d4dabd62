// Package flussoutput is the `fluss` batch output: it writes each message
// as one row of an Apache Fluss table with our Fluss client's Writer
// (package fluss), appending to log tables and upserting or deleting on
// primary-key tables, and acknowledges a batch only once Fluss has.
//
// A message that cannot be a row of the table fails on its own (a
// service.BatchError naming the column and value); a write the servers
// refuse fails the batch, which Benthos sends again.
package flussoutput

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"
)

// Output is the fluss batch output. Create it with NewFromConfig.
type Output struct {
	conf *outputConfig
	log  *service.Logger

	mu     sync.Mutex
	client *fluss.Client
	writer *fluss.Writer
	rows   *rowFactory

	rowsOut  *service.MetricCounter // rows Fluss acknowledged
	rejected *service.MetricCounter // messages that could not be rows
	journal  *journal               // with dedupe
}

// NewFromConfig builds a fluss output from its parsed configuration. It does
// no I/O; Connect connects.
func NewFromConfig(conf *service.ParsedConfig, mgr *service.Resources) (*Output, error) {
	c, err := parseConfig(conf)
	if err != nil {
		return nil, err
	}
	o := &Output{
		conf:     c,
		log:      mgr.Logger(),
		rowsOut:  mgr.Metrics().NewCounter("fluss_output_rows"),
		rejected: mgr.Metrics().NewCounter("fluss_output_rejected_messages"),
	}
	o.rowsOut.Incr(0)
	o.rejected.Incr(0)
	if d := c.dedupe; d != nil {
		o.journal = &journal{res: mgr, cache: d.cache, key: d.key, sourceMD: d.sourceMD, offsetMD: d.offsetMD, log: mgr.Logger(),
			skipped: mgr.Metrics().NewCounter("fluss_output_replayed_messages")}
		o.journal.skipped.Incr(0)
	}
	return o, nil
}

// Connect connects to the cluster and loads the table; with wait_for_table
// it waits for the table to exist. What no retry can cure (servers that are
// not Fluss or refuse the credentials, a missing table without
// wait_for_table, a table the writer cannot write) stops the pipeline with
// the reason; anything else is retried.
func (o *Output) Connect(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.writer != nil {
		return nil
	}
	err := o.connectLocked(ctx)
	var pe *permanentError
	if err != nil && ctx.Err() == nil && errors.As(err, &pe) {
		o.log.Errorf("%v; stopping the pipeline", err)
		stop.Fail(err)
		return service.NewErrBackOff(err, time.Hour)
	}
	return err
}

// permanentError is a Connect failure that no retry cures.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// permanentUnless marks err permanent unless the client says a retry can
// help.
func permanentUnless(err error) error {
	if err == nil || fluss.IsRetriable(err) {
		return err
	}
	return &permanentError{err}
}

func (o *Output) connectLocked(ctx context.Context) error {
	if o.client == nil {
		client, err := fluss.NewClient(ctx, o.conf.clientOptions()...)
		if err != nil {
			return permanentUnless(fmt.Errorf("connecting to Fluss at %v: %w", o.conf.bootstrap, err))
		}
		o.client = client
	}
	info, err := o.loadTable(ctx)
	if err != nil {
		if errors.Is(err, errcode.TableNotExist) || errors.Is(err, errcode.DatabaseNotExist) {
			return &permanentError{fmt.Errorf("%w (set wait_for_table: true to wait for it)", err)}
		}
		return err
	}
	w, err := o.client.NewWriter(info,
		fluss.WriteAcks(o.conf.acks), fluss.WriteTimeout(o.conf.writeTimeout), fluss.WriteCreatePartitions(o.conf.createPartitions),
		fluss.WriteIdempotent(o.conf.idempotent), fluss.WriteConnections(o.conf.connections))
	if err != nil {
		return permanentUnless(err)
	}
	rows, err := newRowFactory(info, w.Schema(), o.conf.ignoreUnknown)
	if err != nil {
		return &permanentError{fmt.Errorf("table %s: %w", info.Path, err)}
	}
	if o.journal != nil {
		if info.HasPrimaryKey() {
			o.log.Infof("Table %s has a primary key, whose upserts need no journal: %s is off", info.Path, foFieldDedupe)
			o.journal = nil
		} else if err := o.journal.recover(ctx, o.client, info); err != nil {
			return err
		}
	}
	o.writer, o.rows = w, rows
	o.log.Infof("Writing to Fluss table %s (%s, %d buckets%s)", info.Path, tableKind(info), info.NumBuckets, partitionNote(info))
	return nil
}

// loadTable reads the table's metadata, waiting for the table with
// wait_for_table.
func (o *Output) loadTable(ctx context.Context) (*fluss.TableInfo, error) {
	for attempt := 0; ; attempt++ {
		info, err := o.client.RefreshTable(ctx, o.conf.table)
		if err == nil {
			return info, nil
		}
		if !o.conf.waitForTable || !errors.Is(err, errcode.TableNotExist) {
			return nil, fmt.Errorf("table %s: %w", o.conf.table, err)
		}
		delay := min(time.Second<<min(attempt, 6), time.Minute)
		o.log.Infof("Waiting for Fluss table %s to be created (attempt %d; next in %s)", o.conf.table, attempt+1, delay)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for table %s: %w", o.conf.table, ctx.Err())
		case <-time.After(delay):
		}
	}
}

func (o *Output) current() (*fluss.Writer, *rowFactory) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.writer, o.rows
}

// WriteBatch turns the messages into rows and writes them; it returns once
// Fluss has acknowledged them. Messages that cannot be rows fail alone.
func (o *Output) WriteBatch(ctx context.Context, batch service.MessageBatch) error {
	w, rows := o.current()
	if w == nil {
		return service.ErrNotConnected
	}
	b, err := rows.get()
	if err != nil {
		return err
	}
	defer rows.put(b)
	var batchErr *service.BatchError
	fail := func(i int, err error) {
		if batchErr == nil {
			batchErr = service.NewBatchError(batch, err)
		}
		batchErr.Failed(i, err)
		o.rejected.Incr(1)
	}
	deletes, any, pos := o.buildRows(batch, rows.primaryKey, b, fail)
	if b.Len() > 0 {
		if o.journal != nil {
			ctx = fluss.WithBeforeSend(ctx, o.journal.begin(pos).beforeSend)
		}
		rec := b.NewRecord()
		err := w.Write(ctx, rec, deletesIfAny(deletes, any))
		n := rec.NumRows()
		rec.Release()
		if err != nil {
			return err
		}
		o.rowsOut.Incr(n)
	}
	if batchErr != nil {
		return batchErr
	}
	return nil
}

// buildRows appends the rows of the batch's messages to b, reporting the
// messages that cannot be rows through fail. It returns the delete flag of
// each row appended, whether any is set, and with dedupe the source
// position of each row; messages the table already holds (delivered again
// after a restart) are then left out.
func (o *Output) buildRows(batch service.MessageBatch, primaryKey bool, b rowBuilder, fail func(int, error)) ([]bool, bool, []position) {
	deletes := make([]bool, 0, len(batch))
	var pos []position
	any := false
	changeType := changeTypeOf(batch, o.conf.changeType, o.conf.changeTypeIsMeta)
	b.Reserve(len(batch))
	for i, msg := range batch {
		ct, err := changeType(i)
		if err != nil {
			fail(i, fmt.Errorf("field %s: %w", foFieldChangeType, err))
			continue
		}
		act, err := actionOf(ct, primaryKey)
		if err != nil {
			fail(i, err)
			continue
		}
		if act == actSkip {
			continue
		}
		var at position
		if o.journal != nil {
			var again bool
			if at, again, err = o.journal.replay(msg); err != nil || again {
				if err != nil {
					fail(i, err)
				}
				continue
			}
		}
		data, err := msg.AsBytes()
		if err == nil {
			err = b.Append(data, act == actDelete)
		}
		if err != nil {
			fail(i, err)
			continue
		}
		deletes = append(deletes, act == actDelete)
		if o.journal != nil {
			pos = append(pos, at)
		}
		any = any || act == actDelete
	}
	return deletes, any, pos
}

// changeTypeOf returns the function giving the change type of the batch's
// i-th message: the static value, or the expression resolved with one
// executor for the whole batch (batch.TryInterpolatedString copies the batch
// on every call, which made 4,096-message batches cost quadratic time). With
// the default expression, a string metadata value (or none: "") is read
// directly, as the expression would resolve it; other values go through the
// expression.
func changeTypeOf(batch service.MessageBatch, expr *service.InterpolatedString, isMeta bool) func(int) (string, error) {
	if s, ok := expr.Static(); ok {
		return func(int) (string, error) { return s, nil }
	}
	var exec *service.MessageBatchInterpolationExecutor
	resolve := func(i int) (string, error) {
		if exec == nil {
			exec = batch.InterpolationExecutor(expr)
		}
		return exec.TryString(i)
	}
	if !isMeta {
		return resolve
	}
	return func(i int) (string, error) {
		v, ok := batch[i].MetaGetMut(metaChangeType)
		if !ok {
			return "", nil
		}
		if s, ok := v.(string); ok {
			return s, nil
		}
		return resolve(i)
	}
}

func deletesIfAny(deletes []bool, any bool) []bool {
	if any {
		return deletes
	}
	return nil
}

// Close closes the client.
func (o *Output) Close(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writer, o.rows = nil, nil
	if o.client == nil {
		return nil
	}
	err := o.client.Close()
	o.client = nil
	return err
}

func tableKind(info *fluss.TableInfo) string {
	if info.HasPrimaryKey() {
		return "primary-key table"
	}
	return "log table"
}

func partitionNote(info *fluss.TableInfo) string {
	if len(info.PartitionKeys) == 0 {
		return ""
	}
	return fmt.Sprintf(", partitioned by %v", info.PartitionKeys)
}
