package dashtest

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	flussapi "github.com/fluss-iggy/fluss-iggy/fluss"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
	"github.com/fluss-iggy/fluss-iggy/internal/iggytest"

	_ "github.com/fluss-iggy/fluss-iggy/input/fluss"
	_ "github.com/fluss-iggy/fluss-iggy/metrics/prometheus"
	_ "github.com/fluss-iggy/fluss-iggy/output/iggy"
	_ "github.com/fluss-iggy/fluss-iggy/resources/bbolt"
)

const (
	// scrapeInterval is the test Prometheus's scrape interval.
	scrapeInterval = time.Second
	// rateInterval replaces $__rate_interval: Grafana makes it at least four
	// scrape intervals; one more leaves room for a late scrape.
	rateInterval = "5s"
	// job is the scrape job, as in deploy/prometheus/prometheus.yml.
	job = "fluss-iggy"
	// queryDeadline bounds the wait for every query to give data, from the
	// moment Prometheus is up.
	queryDeadline = 2 * time.Minute
	// stuckAfter is how long the test waits for the next check to pass
	// before it gives up on the remaining ones.
	stuckAfter = 45 * time.Second
	// buckets of the test table; rowsPerTick rows go to each bucket every
	// writeEvery.
	buckets     = 2
	rowsPerTick = 25
	writeEvery  = 200 * time.Millisecond
)

// zeroOK are the metrics whose queries may answer 0 while rows flow without
// trouble: errors, skips, and the lag of a pipeline that keeps up. Every
// other query must show a value above 0 somewhere.
var zeroOK = map[string]bool{
	"output_error":             true,
	"output_connection_failed": true,
	"output_connection_lost":   true,
	"fluss_input_skipped_rows": true,
	"cache_error":              true,
	"fluss_input_lag":          true,
}

// optionalLegendLabels may be absent from a result although a legend names
// them: Prometheus drops empty labels, and partition is "" for tables without
// partitions.
var optionalLegendLabels = map[string]bool{"partition": true}

// pipelineYAML is the pipeline under test, like config/fluss_to_iggy.yaml:
// a Fluss table into an Iggy topic with a bbolt checkpoint cache.
const pipelineYAML = `
input:
  label: orders
  fluss:
    bootstrap_servers: [ %q ]
    database: %s
    table: %s
    start_offset: earliest
    checkpoint_cache: checkpoints
output:
  label: iggy
  iggy:
    address: %q
    username: iggy
    password: iggy
    stream: %s
    topic: orders
    create_stream: true
    create_topic: true
    partitions: 2
    batching:
      count: 100
      period: 50ms
cache_resources:
  - label: checkpoints
    bbolt:
      path: %s
      bucket: fluss_checkpoints
      sync: true
metrics:
  prometheus: %s
logger:
  level: warn
`

// check is one query of the dashboard evaluated for one choice of the
// instance variable.
type check struct {
	panel    string
	target   Target
	instance string // "All", or the one target $instance selects
	expr     string // expanded
	passed   time.Duration
	last     string // why it did not pass yet
}

func (c *check) name() string {
	return fmt.Sprintf("panel %q query %s (instance %s)", c.panel, c.target.RefID, c.instance)
}

// TestDashboardAgainstPrometheus: every query of every panel of the
// dashboard returns data from a real Prometheus scraping running pipelines
// (see doc.go).
func TestDashboardAgainstPrometheus(t *testing.T) {
	began := time.Now()
	promBin := RequireTool(t, "prometheus")
	dash, err := Load(dashboardPath(t))
	if err != nil {
		t.Fatal(err)
	}
	boot := flusstest.Require(t)

	// A table the test keeps writing to.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, db, info := createTable(t, boot)
	rows, writeErrs := writeContinuously(ctx, t, c, info)
	tableReady := time.Since(began)

	srv, err := iggytest.Start(iggytest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	// Two pipelines: the exporter's defaults (timers as summaries) and
	// histograms, the two shapes the latency panels must handle.
	dir := t.TempDir()
	var targets []string
	for _, p := range []struct{ name, metrics string }{
		{"summary", "{}"},
		{"histogram", "{ use_histogram_timing: true }"},
	} {
		yaml := fmt.Sprintf(pipelineYAML, boot, db, info.Path.Table, srv.Addr(), "dash_"+p.name,
			filepath.Join(dir, p.name+".db"), p.metrics)
		targets = append(targets, runPipeline(t, p.name, yaml))
	}
	t.Logf("pipelines: summary at %s, histogram at %s", targets[0], targets[1])

	prom := StartPrometheus(t, promBin, PrometheusConfig{ScrapeInterval: scrapeInterval, Job: job, Targets: targets})
	promReady := time.Since(began)

	// Every query, for All instances and for each one.
	base := map[string]string{
		"job":             regexValue(job),
		"__rate_interval": rateInterval,
		"__interval":      scrapeInterval.String(),
		"__range":         "1m",
	}
	var checks []*check
	queries := 0
	for _, p := range dash.AllPanels() {
		for _, tg := range p.Targets {
			queries++
			for _, inst := range append([]string{".*"}, targets...) {
				vals, shown := with(base, "instance", inst), "All"
				if inst != ".*" {
					vals["instance"], shown = regexValue(inst), inst
				}
				expr, err := Expand(tg.Expr, vals)
				if err != nil {
					t.Fatalf("panel %q query %s: %v", p.Title, tg.RefID, err)
				}
				checks = append(checks, &check{panel: p.Title, target: tg, instance: shown, expr: expr})
			}
		}
	}
	if queries == 0 {
		t.Fatal("the dashboard has no queries")
	}

	qctx, qcancel := context.WithTimeout(ctx, queryDeadline)
	defer qcancel()
	start := time.Now()
	pending := checks
	progress := start
	for len(pending) > 0 && qctx.Err() == nil {
		var next []*check
		for _, ch := range pending {
			samples, err := prom.Query(qctx, ch.expr)
			switch {
			case IsQueryError(err):
				t.Fatalf("%s: Prometheus refused %q: %v", ch.name(), ch.expr, err)
			case err != nil:
				ch.last = err.Error()
			default:
				ch.last = judge(ch, samples)
			}
			if ch.last == "" {
				ch.passed = time.Since(start)
				continue
			}
			next = append(next, ch)
		}
		if len(next) < len(pending) {
			progress = time.Now()
		}
		pending = next
		// Checks normally pass within seconds of each other; when none
		// passed for a while, the rest will not (a renamed metric or
		// label): say so now rather than at the deadline.
		if len(pending) > 0 && time.Since(progress) > stuckAfter {
			break
		}
		if len(pending) > 0 {
			select {
			case <-qctx.Done():
			case <-time.After(scrapeInterval):
			}
		}
	}
	if len(pending) > 0 {
		names, err := prom.MetricNames(ctx)
		for _, ch := range pending {
			var missing []string
			for _, m := range MetricNames(ch.target.Expr) {
				if err == nil && !slices.Contains(names, m) {
					missing = append(missing, m)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s uses %s, which no pipeline exports", ch.name(), strings.Join(missing, ", "))
			}
			t.Errorf("%s: no good answer after %s: %s\n  query: %s", ch.name(), time.Since(start).Round(time.Second), ch.last, ch.expr)
		}
		t.Logf("metrics Prometheus holds (err %v):\n  %s", err, strings.Join(ourMetrics(names), "\n  "))
	}

	// The variables' label_values queries.
	checkVariables(ctx, t, prom, dash, base, targets)
	// The metrics the alert rules of deploy/prometheus read.
	checkAlertMetrics(ctx, t, prom)

	passed, last := 0, time.Duration(0)
	lastName := "-"
	for _, ch := range checks {
		if ch.passed > 0 {
			passed++
			if ch.passed > last {
				last, lastName = ch.passed, ch.name()
			}
		}
	}
	t.Logf("%d queries of %d panels, %d checks (All instances and each of %d pipelines): %d passed, the last %s after Prometheus was up (%s); "+
		"table ready after %s, Prometheus up after %s; %d rows written (%d write errors); test ran %s",
		queries, len(dash.AllPanels()), len(checks), len(targets), passed, last.Round(time.Millisecond), lastName,
		tableReady.Round(time.Millisecond), promReady.Round(time.Millisecond), rows.Load(), writeErrs.Load(), time.Since(began).Round(time.Millisecond))
	if t.Failed() {
		return
	}
	// A few values, to show what the dashboard would draw.
	for _, ch := range checks {
		if ch.instance != "All" {
			continue
		}
		samples, err := prom.Query(ctx, ch.expr)
		if err != nil {
			continue
		}
		t.Logf("  %-32s %s: %s", ch.panel, ch.target.RefID, describe(samples, ch.target.LegendFormat))
	}
}

// judge returns why samples are not a good answer to ch, or "".
func judge(ch *check, samples []Sample) string {
	if len(samples) == 0 {
		return "no data"
	}
	positive := false
	for _, s := range samples {
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			return fmt.Sprintf("value %v for %v", s.Value, s.Metric)
		}
		if s.Value > 0 {
			positive = true
		}
	}
	mayBeZero := false
	for _, m := range MetricNames(ch.target.Expr) {
		mayBeZero = mayBeZero || zeroOK[m]
	}
	if !positive && !mayBeZero {
		return fmt.Sprintf("every value is 0 (%d series) while rows flow", len(samples))
	}
	for _, l := range LegendLabels(ch.target.LegendFormat) {
		if optionalLegendLabels[l] {
			continue
		}
		found := false
		for _, s := range samples {
			if _, ok := s.Metric[l]; ok {
				found = true
				break
			}
		}
		if !found {
			return fmt.Sprintf("the legend %q names the label %s, which the result does not have (%v)", ch.target.LegendFormat, l, samples[0].Metric)
		}
	}
	return ""
}

// checkVariables checks the label_values queries of the dashboard's query
// variables: job must list the scrape job, instance both pipelines.
func checkVariables(ctx context.Context, t *testing.T, prom *Prometheus, dash *Dashboard, base map[string]string, targets []string) {
	t.Helper()
	want := map[string][]string{"job": {job}, "instance": targets}
	seen := 0
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		seen++
		sel, label, ok := ParseLabelValues(v.QueryString())
		if !ok {
			t.Errorf("variable %s: query %q is not label_values(SELECTOR, LABEL)", v.Name, v.QueryString())
			continue
		}
		if sel == "" {
			sel = `{__name__=~".+"}`
		}
		sel, err := Expand(sel, with(base, "instance", ".*"))
		if err != nil {
			t.Errorf("variable %s: %v", v.Name, err)
			continue
		}
		series, err := prom.Series(ctx, sel)
		if err != nil {
			t.Errorf("variable %s: series %s: %v", v.Name, sel, err)
			continue
		}
		got := map[string]bool{}
		for _, s := range series {
			if val, ok := s[label]; ok {
				got[val] = true
			}
		}
		for _, w := range want[v.Name] {
			if !got[w] {
				t.Errorf("variable %s: label_values(%s, %s) lacks %q (has %v)", v.Name, sel, label, w, got)
			}
		}
		if len(got) == 0 {
			t.Errorf("variable %s: label_values(%s, %s) is empty", v.Name, sel, label)
		}
	}
	if seen == 0 {
		t.Error("the dashboard has no query variables")
	}
}

// regexValue is a variable's value as Grafana puts it into a PromQL regex
// matcher: regex metacharacters escaped, and the escaping backslashes doubled
// for the double-quoted PromQL string.
func regexValue(v string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(v), `\`, `\\`)
}

// with returns a copy of m with k set to v.
func with(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// ourMetrics lists the metric names of the pipelines (not Prometheus's own).
func ourMetrics(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, "prometheus_") || strings.HasPrefix(n, "scrape_") || strings.HasPrefix(n, "net_conntrack_") {
			continue
		}
		out = append(out, n)
	}
	return out
}

// describe renders a result as the panel's legend would name its series.
func describe(samples []Sample, legend string) string {
	var parts []string
	for _, s := range samples {
		name := legendRe.ReplaceAllStringFunc(legend, func(m string) string {
			return s.Metric[legendRe.FindStringSubmatch(m)[1]]
		})
		name = strings.Join(strings.Fields(name), " ")
		if name == "" {
			name = "value"
		}
		parts = append(parts, fmt.Sprintf("%s=%.4g", name, s.Value))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// runPipeline builds and runs a stream from yaml with its metrics served at
// /metrics on a server of its own, and returns that server's host:port. The
// stream stops when the test ends.
func runPipeline(t *testing.T, name, yaml string) string {
	t.Helper()
	b := service.NewStreamBuilder()
	mux := http.NewServeMux()
	b.SetHTTPMux(mux)
	if err := b.SetYAML(yaml); err != nil {
		t.Fatalf("pipeline %s: %v", name, err)
	}
	s, err := b.Build()
	if err != nil {
		t.Fatalf("pipeline %s: %v", name, err)
	}
	hs := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		if err := s.StopWithin(20 * time.Second); err != nil {
			t.Errorf("pipeline %s: stopping: %v", name, err)
		}
		cancel()
		select {
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				t.Errorf("pipeline %s: %v", name, err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("pipeline %s did not stop within 30s", name)
		}
		hs.Close()
	})
	return strings.TrimPrefix(hs.URL, "http://")
}

// createTable creates a log table with buckets buckets in a new database and
// waits until every bucket has a leader. The database is dropped when the
// test ends.
func createTable(t *testing.T, boot string) (*flussapi.Client, string, *flussapi.TableInfo) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := flussapi.NewClient(ctx, flussapi.Bootstrap(boot))
	if err != nil {
		t.Fatalf("connecting to Fluss at %s: %v", boot, err)
	}
	db := flusstest.UniqueName("dash")
	if err := c.CreateDatabase(ctx, db, nil, false); err != nil {
		t.Fatalf("creating database %s: %v", db, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.DropDatabase(ctx, db, true, true); err != nil {
			t.Logf("dropping database %s: %v", db, err)
		}
		_ = c.Close()
	})
	cols, err := types.ParseColumns("id BIGINT, name STRING")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := types.NewSchema(cols)
	if err != nil {
		t.Fatal(err)
	}
	desc := &types.TableDescriptor{Schema: *schema, BucketCount: buckets, Properties: map[string]string{}}
	// Under load the coordinator has been seen to miss a table creation (its
	// buckets never get a leader); such a table is replaced.
	for attempt := 1; ; attempt++ {
		path := flussapi.NewTablePath(db, fmt.Sprintf("orders_%d", attempt))
		if err := c.CreateTable(ctx, path, desc, false); err != nil {
			t.Fatalf("creating table %s: %v", path, err)
		}
		info, err := waitLeaders(ctx, c, path)
		if err == nil {
			return c, db, info
		}
		if attempt == 3 {
			t.Fatalf("table %s: buckets without leaders: %v", path, err)
		}
		t.Logf("table %s: buckets without leaders (%v); creating another one", path, err)
	}
}

// waitLeaders waits until every bucket of an unpartitioned table has a
// leader that answers.
func waitLeaders(ctx context.Context, c *flussapi.Client, path flussapi.TablePath) (*flussapi.TableInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		info, err := c.RefreshTable(ctx, path)
		if err == nil {
			if _, err = c.ListOffsets(ctx, info, flussapi.NoPartition, nil, flussapi.LatestOffset()); err == nil {
				return info, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// writeContinuously appends rowsPerTick rows to every bucket every
// writeEvery until ctx ends, and counts the rows written and the failed
// writes.
func writeContinuously(ctx context.Context, t *testing.T, c *flussapi.Client, info *flussapi.TableInfo) (rows, errs *atomic.Int64) {
	t.Helper()
	w, err := c.NewWriter(info)
	if err != nil {
		t.Fatal(err)
	}
	rows, errs = &atomic.Int64{}, &atomic.Int64{}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { cancel(); wg.Wait() })
	go func() {
		defer wg.Done()
		tick := time.NewTicker(writeEvery)
		defer tick.Stop()
		var id int64
		for {
			recs := map[int32]arrow.RecordBatch{}
			for b := range int32(buckets) {
				recs[b] = rowBatch(w.Schema(), id, rowsPerTick)
				id += rowsPerTick
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := w.AppendBuckets(wctx, flussapi.NoPartition, recs)
			cancel()
			for _, r := range recs {
				r.Release()
			}
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				if errs.Add(1) <= 3 {
					t.Logf("writing to %s: %v", info.Path, err)
				}
			default:
				rows.Add(buckets * rowsPerTick)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return rows, errs
}

// rowBatch builds n rows with ids from first.
func rowBatch(schema *arrow.Schema, first int64, n int) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range int64(n) {
		b.Field(0).(*array.Int64Builder).Append(first + i)
		b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("order %d", first+i))
	}
	return b.NewRecordBatch()
}
