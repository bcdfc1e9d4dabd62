package flussout_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/redpanda-data/benthos/v4/public/service"
)

// linesInputName is the input linesInput registers as.
const linesInputName = "bench_lines"

// linesInput reads a JSON lines file and hands out batches of count
// messages, one per line, as the inputs of this project do (the fluss and
// iggy inputs emit a batch per poll): one read and one acknowledgement per
// batch, where the `file` input spends a transaction, a goroutine and an
// acknowledgement on every line. It stands in for such an input so that the
// output, not the input, is what the runs measure.
type linesInput struct {
	path  string
	count int
	f     *os.File
	sc    *bufio.Scanner
}

func (in *linesInput) Connect(context.Context) error {
	if in.f != nil {
		return nil
	}
	f, err := os.Open(in.path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", in.path, err)
	}
	in.f, in.sc = f, bufio.NewScanner(f)
	in.sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	return nil
}

// ReadBatch copies the next count lines into one buffer and makes a
// message of each.
func (in *linesInput) ReadBatch(ctx context.Context) (service.MessageBatch, service.AckFunc, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	batch := make(service.MessageBatch, 0, in.count)
	buf := make([]byte, 0, 256*in.count)
	for len(batch) < in.count && in.sc.Scan() {
		start := len(buf)
		buf = append(buf, in.sc.Bytes()...)
		batch = append(batch, service.NewMessage(buf[start:len(buf):len(buf)]))
	}
	if err := in.sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", in.path, err)
	}
	if len(batch) == 0 {
		return nil, nil, service.ErrEndOfInput
	}
	return batch, func(context.Context, error) error { return nil }, nil
}

func (in *linesInput) Close(context.Context) error {
	if in.f == nil {
		return nil
	}
	err := in.f.Close()
	in.f = nil
	return err
}

// benchEnv is the global Benthos environment plus linesInput, with the
// auto-replay wrapper the project's inputs use (nacked batches are sent
// again, so the wrapper keeps each batch until it is acknowledged).
var benchEnv = sync.OnceValues(func() (*service.Environment, error) {
	env := service.NewEnvironment()
	spec := service.NewConfigSpec().
		Field(service.NewStringField("path")).
		Field(service.NewIntField("count")).
		Field(service.NewAutoRetryNacksToggleField())
	err := env.RegisterBatchInput(linesInputName, spec, func(pc *service.ParsedConfig, _ *service.Resources) (service.BatchInput, error) {
		path, err := pc.FieldString("path")
		if err != nil {
			return nil, err
		}
		count, err := pc.FieldInt("count")
		if err != nil {
			return nil, err
		}
		return service.AutoRetryNacksBatchedToggled(pc, &linesInput{path: path, count: max(count, 1)})
	})
	return env, err
})
