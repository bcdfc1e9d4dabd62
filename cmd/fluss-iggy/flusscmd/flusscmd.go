// Package flusscmd is the `fluss-iggy fluss` subcommand: look at Apache
// Fluss tables from the terminal, as kcat does for Kafka.
//
//	fluss-iggy fluss tables  [--bootstrap HOST:PORT] [DB]
//	fluss-iggy fluss offsets [--bootstrap HOST:PORT] DB.TABLE [--partition NAME]
//	fluss-iggy fluss scan    [--bootstrap HOST:PORT] DB.TABLE [--columns a,b] [--partition NAME] [--count-only]
//	fluss-iggy fluss scan    --snapshot [--bootstrap HOST:PORT] DB.TABLE [--columns a,b] [--partition NAME]
//	fluss-iggy fluss snapshots [--bootstrap HOST:PORT] DB.TABLE [--partition NAME]
//	fluss-iggy fluss checkpoints -r RESOURCES --cache LABEL [--key KEY] [--bootstrap HOST:PORT] DB.TABLE
//
// scan reads every bucket from its earliest offset to the high watermark
// seen when the command starts and prints one JSON line per row, in the
// format and order of the Java fixture tool's scan (scripts/fluss-java.sh):
//
//	{"partition":null,"bucket":0,"offset":0,"change_type":"+A","row":{...}}
//
// ordered by partition name, bucket and offset, with rows in the canonical
// JSON mapping of docs/json-mapping.md, so that the two outputs compare
// with cmp. offsets prints the Java tool's list-offsets lines. tables says
// on stderr when it finds none. checkpoints reads the positions a `fluss`
// input committed to its cache and prints, per bucket, the committed
// offset, the latest offset and the lag (see checkpoints.go). snapshots
// lists the latest KV snapshot of each bucket of a primary-key table, and
// scan --snapshot prints the table's current state from those snapshots and
// the changelog after them (see snapshots.go and state.go).
//
// Wire it into a Benthos CLI with service.CLIOptAddCommand(flusscmd.Command()).
package flusscmd

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/jsonrow"
)

// Command returns the `fluss` command with its subcommands scan, tables,
// offsets, snapshots and checkpoints.
func Command() *cli.Command {
	common := commonFlags()
	return &cli.Command{
		Name:  "fluss",
		Usage: "Look at Apache Fluss tables: scan rows, list tables and offsets, show a pipeline's checkpoints and lag",
		Subcommands: []*cli.Command{
			scanCommand(common),
			tablesCommand(common),
			offsetsCommand(common),
			snapshotsCommand(common),
			checkpointsCommand(common),
		},
	}
}

// commonFlags are the connection flags of every subcommand.
func commonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{
			Name:    "bootstrap",
			Usage:   "Fluss servers to connect to first (HOST:PORT[,HOST:PORT...])",
			EnvVars: []string{"FLUSS_BOOTSTRAP"},
			Value:   "127.0.0.1:9123",
		},
		&cli.StringFlag{Name: "sasl-user", Usage: "SASL/PLAIN user name", EnvVars: []string{"FLUSS_SASL_USERNAME"}},
		&cli.StringFlag{Name: "sasl-password", Usage: "SASL/PLAIN password", EnvVars: []string{"FLUSS_SASL_PASSWORD"}},
		&cli.DurationFlag{Name: "timeout", Usage: "give up after this long without progress", Value: 2 * time.Minute},
		&cli.StringFlag{Name: "s3-endpoint", Usage: "S3 endpoint of an s3:// remote.data.dir (http(s)://HOST:PORT); default: the cluster's security token's", EnvVars: []string{"FLUSS_S3_ENDPOINT"}},
		&cli.StringFlag{Name: "s3-region", Usage: "S3 region (default: the token's, else us-east-1)", EnvVars: []string{"FLUSS_S3_REGION"}},
		&cli.StringFlag{Name: "s3-access-key", Usage: "S3 access key (default: credentials from the cluster's security token)", EnvVars: []string{"FLUSS_S3_ACCESS_KEY"}},
		&cli.StringFlag{Name: "s3-secret-key", Usage: "S3 secret key, with --s3-access-key", EnvVars: []string{"FLUSS_S3_SECRET_KEY"}},
		&cli.BoolFlag{Name: "s3-path-style", Usage: "address buckets as ENDPOINT/BUCKET (most S3-compatible servers)", EnvVars: []string{"FLUSS_S3_PATH_STYLE"}},
	}
}

func scanCommand(common []cli.Flag) *cli.Command {
	return &cli.Command{
		Name:      "scan",
		Usage:     "Print every row of a table as JSON lines (earliest offset to the current end)",
		ArgsUsage: "DB.TABLE",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "columns", Usage: "comma-separated columns to print, in this order"},
			&cli.StringFlag{Name: "partition", Usage: "only this partition (by name)"},
			&cli.BoolFlag{Name: "count-only", Usage: "only count the rows and print {\"rows\":N,\"seconds\":S,\"rows_per_sec\":R,\"cpu_seconds\":C}"},
			&cli.BoolFlag{Name: "snapshot", Usage: "print the current state of a primary-key table (KV snapshots + changelog), one {\"partition\",\"bucket\",\"row\"} line per key, by primary key"},
		}, common...),
		Action: runScan,
	}
}

// runScan is the action of `fluss scan`.
func runScan(cc *cli.Context) error {
	path, err := tableArg(cc)
	if err != nil {
		return err
	}
	var cols []string
	if v := cc.String("columns"); v != "" {
		cols = splitList(v)
	}
	opts := ScanOptions{Columns: cols, Partition: cc.String("partition"), Timeout: cc.Duration("timeout")}
	return withClient(cc, func(ctx context.Context, c *fluss.Client) error {
		w := bufio.NewWriterSize(cc.App.Writer, 1<<16)
		var err error
		switch {
		case cc.Bool("snapshot") && cc.Bool("count-only"):
			err = errors.New("scan: --snapshot and --count-only cannot be combined")
		case cc.Bool("snapshot"):
			err = State(ctx, c, path, w, opts)
		case cc.Bool("count-only"):
			err = countLine(ctx, c, path, opts, w)
		default:
			err = Scan(ctx, c, path, w, opts)
		}
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return err
	})
}

// countLine counts the rows of a table and writes
// {"rows":N,"seconds":S,"rows_per_sec":R,"cpu_seconds":C}: the time and
// the process's user+system CPU time of the scan, start-up excluded (no
// cpu_seconds where the system does not tell).
func countLine(ctx context.Context, c *fluss.Client, path fluss.TablePath, opts ScanOptions, w io.Writer) error {
	cpu0, start := processCPU(), time.Now()
	n, err := Count(ctx, c, path, opts)
	if err != nil {
		return err
	}
	secs, cpu := time.Since(start).Seconds(), processCPU()-cpu0
	rate := int64(0)
	if secs > 0 {
		rate = int64(float64(n)/secs + 0.5)
	}
	line := fmt.Sprintf("{\"rows\":%d,\"seconds\":%.3f,\"rows_per_sec\":%d", n, secs, rate)
	if cpu0 >= 0 {
		line += fmt.Sprintf(",\"cpu_seconds\":%.3f", cpu.Seconds())
	}
	_, err = fmt.Fprintln(w, line+"}")
	return err
}

func tablesCommand(common []cli.Flag) *cli.Command {
	return &cli.Command{
		Name:      "tables",
		Usage:     "List the tables of a database (or of every database) as DB.TABLE lines; says on stderr when there are none",
		ArgsUsage: "[DB]",
		Flags:     common,
		Action: func(cc *cli.Context) error {
			args, err := positional(cc)
			if err != nil {
				return err
			}
			if len(args) > 1 {
				return cli.Exit("tables takes at most one argument, a database", 2)
			}
			db := ""
			if len(args) == 1 {
				db = args[0]
			}
			return withClient(cc, func(ctx context.Context, c *fluss.Client) error {
				w := bufio.NewWriter(cc.App.Writer)
				if err := Tables(ctx, c, db, w, cc.App.ErrWriter); err != nil {
					return err
				}
				return w.Flush()
			})
		},
	}
}

func offsetsCommand(common []cli.Flag) *cli.Command {
	return tableCommand("offsets", "Print the earliest and latest offset of every bucket as JSON lines", common, Offsets)
}

// tableCommand is a subcommand that prints something of one table (of one
// partition with --partition) through print.
func tableCommand(name, usage string, common []cli.Flag, print func(ctx context.Context, c *fluss.Client, path fluss.TablePath, partition string, w io.Writer) error) *cli.Command {
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "DB.TABLE",
		Flags:     append([]cli.Flag{&cli.StringFlag{Name: "partition", Usage: "only this partition (by name)"}}, common...),
		Action: func(cc *cli.Context) error {
			path, err := tableArg(cc)
			if err != nil {
				return err
			}
			return withClient(cc, func(ctx context.Context, c *fluss.Client) error {
				w := bufio.NewWriter(cc.App.Writer)
				if err := print(ctx, c, path, cc.String("partition"), w); err != nil {
					return err
				}
				return w.Flush()
			})
		},
	}
}

func tableArg(cc *cli.Context) (fluss.TablePath, error) {
	args, err := positional(cc)
	if err != nil {
		return fluss.TablePath{}, err
	}
	if len(args) != 1 {
		return fluss.TablePath{}, cli.Exit(fmt.Sprintf("%s needs exactly one argument, DB.TABLE", cc.Command.Name), 2)
	}
	p, err := fluss.ParseTablePath(args[0])
	if err != nil {
		return fluss.TablePath{}, cli.Exit(err.Error(), 2)
	}
	return p, nil
}

// positional returns the command's positional arguments, also accepting
// flags after them (`scan DB.TABLE --columns a,b`, as the Java tool does):
// urfave/cli stops parsing flags at the first argument, so the rest is
// parsed here and set on cc.
func positional(cc *cli.Context) ([]string, error) {
	rest := cc.Args().Slice()
	if len(rest) <= 1 {
		return rest, nil
	}
	fs := flag.NewFlagSet(cc.Command.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range cc.Command.Flags {
		if err := f.Apply(fs); err != nil {
			return nil, err
		}
	}
	var pos []string
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return nil, cli.Exit(fmt.Sprintf("%s: %v", cc.Command.Name, err), 2)
		}
		rest = fs.Args()
		if len(rest) > 0 {
			pos = append(pos, rest[0])
			rest = rest[1:]
		}
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		values := []string{f.Value.String()}
		if ss, ok := f.Value.(*cli.StringSlice); ok {
			values = ss.Value()
		}
		for _, v := range values {
			if err == nil {
				err = cc.Set(f.Name, v)
			}
		}
	})
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("%s: %v", cc.Command.Name, err), 2)
	}
	return pos, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// withClient connects, runs fn and turns its error into an exit status 1
// with the message on stderr.
func withClient(cc *cli.Context, fn func(ctx context.Context, c *fluss.Client) error) error {
	ctx := cc.Context
	if ctx == nil {
		ctx = context.Background()
	}
	opts := []fluss.Option{fluss.Bootstrap(splitList(cc.String("bootstrap"))...)}
	if u := cc.String("sasl-user"); u != "" {
		opts = append(opts, fluss.SASLPlain(u, cc.String("sasl-password")))
	}
	opts = append(opts, fluss.Remote(fluss.RemoteStorageOptions{S3: fluss.S3Options{
		Endpoint: cc.String("s3-endpoint"), Region: cc.String("s3-region"), PathStyle: cc.Bool("s3-path-style"),
		AccessKey: cc.String("s3-access-key"), SecretKey: cc.String("s3-secret-key"),
	}}))
	dctx, cancel := context.WithTimeout(ctx, cc.Duration("timeout"))
	c, err := fluss.NewClient(dctx, opts...)
	cancel()
	if err != nil {
		return cli.Exit("fluss: "+strings.TrimPrefix(err.Error(), "fluss: "), 1)
	}
	defer c.Close()
	if err := fn(ctx, c); err != nil {
		return cli.Exit("fluss: "+strings.TrimPrefix(err.Error(), "fluss: "), 1)
	}
	return nil
}

// ScanOptions tune Scan and Count.
type ScanOptions struct {
	// Columns projects the rows (nil = every column).
	Columns []string
	// Partition restricts the scan to one partition by name.
	Partition string
	// Timeout fails the scan after this long without any progress (0 = 2 minutes).
	Timeout time.Duration
	// ScanOptions are extra scanner options.
	ScanOptions []fluss.ScanOption
}

// Scan writes every row of a table, from the earliest offset of each bucket
// to the high watermark at the start, as Java-tool scan lines (see the
// package doc), ordered by partition name, bucket and offset.
func Scan(ctx context.Context, c *fluss.Client, path fluss.TablePath, w io.Writer, o ScanOptions) error {
	info, s, ranges, err := open(ctx, c, path, o)
	if err != nil {
		return err
	}
	defer s.Close()
	enc, err := jsonrow.NewEncoder(s.Schema().RowType(), s.ArrowSchema())
	if err != nil {
		return fmt.Errorf("%s: %w", info.Path, err)
	}
	var line []byte
	// One bucket after another: the output is in order without buffering
	// rows, and offsets come in order within a bucket.
	for _, r := range ranges {
		err := readWatched(ctx, s, []fluss.BucketRange{r}, o.Timeout, func(b *fluss.ScanBatch) error {
			if err := enc.Bind(b.Record); err != nil {
				return fmt.Errorf("%s %s: %w", info.Path, describe(r), err)
			}
			for i := 0; i < b.NumRows(); i++ {
				line = AppendLine(line[:0], b, i, enc)
				line = append(line, '\n')
				if _, err := w.Write(line); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Count reads like Scan, all buckets at once, and returns the number of rows.
func Count(ctx context.Context, c *fluss.Client, path fluss.TablePath, o ScanOptions) (int64, error) {
	_, s, ranges, err := open(ctx, c, path, o)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	var n int64
	err = readWatched(ctx, s, ranges, o.Timeout, func(b *fluss.ScanBatch) error {
		n += int64(b.NumRows())
		return nil
	})
	return n, err
}

func open(ctx context.Context, c *fluss.Client, path fluss.TablePath, o ScanOptions) (*fluss.TableInfo, *fluss.Scanner, []fluss.BucketRange, error) {
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		return nil, nil, nil, err
	}
	opts := append([]fluss.ScanOption(nil), o.ScanOptions...)
	if o.Columns != nil {
		opts = append(opts, fluss.ScanColumns(o.Columns...))
	}
	s, err := c.NewScanner(info, opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	all, err := c.BucketRanges(ctx, info, o.Partition)
	if err != nil {
		s.Close()
		return nil, nil, nil, err
	}
	var ranges []fluss.BucketRange
	for _, r := range all {
		if r.End > r.Start {
			ranges = append(ranges, r)
		}
	}
	return info, s, ranges, nil
}

// readWatched is ReadRanges that fails after timeout without progress.
func readWatched(ctx context.Context, s *fluss.Scanner, ranges []fluss.BucketRange, timeout time.Duration, fn func(*fluss.ScanBatch) error) error {
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	progress := make(chan struct{}, 1)
	stuck := errors.New("no progress")
	go func() {
		t := time.NewTimer(timeout)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-progress:
				t.Reset(timeout)
			case <-t.C:
				cancel(stuck)
				return
			}
		}
	}()
	err := s.ReadRanges(ctx, ranges, func(b *fluss.ScanBatch) error {
		select {
		case progress <- struct{}{}:
		default:
		}
		return fn(b)
	})
	if err != nil && errors.Is(context.Cause(ctx), stuck) {
		var behind []string
		for _, r := range ranges {
			if p, ok := s.Position(r.Bucket.PartitionID, r.Bucket.Bucket); ok && p.Offset < r.End {
				behind = append(behind, fmt.Sprintf("%s at %d/%d", describe(r), p.Offset, r.End))
			}
		}
		return fmt.Errorf("scan %s: no rows for %s; behind: %s", s.Table().Path, timeout, strings.Join(behind, ", "))
	}
	return err
}

func describe(r fluss.BucketRange) string {
	if r.Partition == "" {
		return "bucket " + strconv.Itoa(int(r.Bucket.Bucket))
	}
	return "partition " + r.Partition + " bucket " + strconv.Itoa(int(r.Bucket.Bucket))
}

// AppendLine appends the scan line of row i of b (without a newline):
// {"partition":…,"bucket":…,"offset":…,"change_type":…,"row":{…}}. enc must
// be bound to b.Record.
func AppendLine(dst []byte, b *fluss.ScanBatch, i int, enc *jsonrow.Encoder) []byte {
	dst = append(dst, `{"partition":`...)
	if b.Bucket.PartitionID == fluss.NoPartition {
		dst = append(dst, "null"...)
	} else {
		dst = jsonrow.AppendString(dst, b.Partition)
	}
	dst = append(dst, `,"bucket":`...)
	dst = strconv.AppendInt(dst, int64(b.Bucket.Bucket), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, b.Offset(i), 10)
	dst = append(dst, `,"change_type":"`...)
	dst = append(dst, b.ChangeType(i).String()...)
	dst = append(dst, `","row":`...)
	dst = enc.AppendRow(dst, i)
	return append(dst, '}')
}

// Lister lists databases and their tables; *fluss.Client is one.
type Lister interface {
	ListDatabases(ctx context.Context) ([]string, error)
	ListTables(ctx context.Context, database string) ([]string, error)
}

// Tables writes "DB.TABLE" lines for the tables of database (every database
// when empty), sorted. When there is none it says so on note (a terminal's
// stderr), so that an empty answer is not mistaken for a hang or a failure.
func Tables(ctx context.Context, c Lister, database string, w, note io.Writer) error {
	dbs := []string{database}
	if database == "" {
		var err error
		if dbs, err = c.ListDatabases(ctx); err != nil {
			return err
		}
	}
	sort.Strings(dbs)
	n := 0
	for _, db := range dbs {
		ts, err := c.ListTables(ctx, db)
		if err != nil {
			return err
		}
		sort.Strings(ts)
		for _, t := range ts {
			if _, err := fmt.Fprintf(w, "%s.%s\n", db, t); err != nil {
				return err
			}
		}
		n += len(ts)
	}
	if n == 0 {
		_, err := fmt.Fprintln(note, noTables(database, dbs))
		return err
	}
	return nil
}

// noTables says that a listing found no table.
func noTables(database string, dbs []string) string {
	switch {
	case database != "":
		return fmt.Sprintf("fluss: database %q has no tables", database)
	case len(dbs) == 0:
		return "fluss: the cluster has no databases"
	default:
		return fmt.Sprintf("fluss: the cluster has no tables (databases: %s)", strings.Join(dbs, ", "))
	}
}

// Offsets writes one line per bucket, as the Java tool's list-offsets:
// {"partition":…,"bucket":…,"earliest":…,"latest":…}, ordered by partition
// name and bucket.
func Offsets(ctx context.Context, c *fluss.Client, path fluss.TablePath, partition string, w io.Writer) error {
	info, err := c.RefreshTable(ctx, path)
	if err != nil {
		return err
	}
	ranges, err := c.BucketRanges(ctx, info, partition)
	if err != nil {
		return err
	}
	var line []byte
	for _, r := range ranges {
		line = append(line[:0], `{"partition":`...)
		if r.Bucket.PartitionID == fluss.NoPartition {
			line = append(line, "null"...)
		} else {
			line = jsonrow.AppendString(line, r.Partition)
		}
		line = append(line, `,"bucket":`...)
		line = strconv.AppendInt(line, int64(r.Bucket.Bucket), 10)
		line = append(line, `,"earliest":`...)
		line = strconv.AppendInt(line, r.Start, 10)
		line = append(line, `,"latest":`...)
		line = strconv.AppendInt(line, r.End, 10)
		line = append(line, "}\n"...)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}
