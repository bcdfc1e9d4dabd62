package prometheus_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redpanda-data/benthos/v4/public/service"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	_ "github.com/fluss-iggy/fluss-iggy/metrics/prometheus"
)

// scrape GETs url and parses the Prometheus text format it returns.
func scrape(url string) (map[string]*dto.MetricFamily, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, string(body), fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		return nil, string(body), fmt.Errorf("GET %s: Content-Type %q is not the text format", url, ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return nil, string(body), fmt.Errorf("parsing the text format: %w", err)
	}
	return mfs, string(body), nil
}

// value returns the value of the series of name whose labels include want
// (a counter's or gauge's value, a summary's or histogram's count), and
// whether it exists.
func value(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf, ok := mfs[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch mf.GetType() {
		case dto.MetricType_COUNTER:
			return m.GetCounter().GetValue(), true
		case dto.MetricType_GAUGE:
			return m.GetGauge().GetValue(), true
		case dto.MetricType_SUMMARY:
			return float64(m.GetSummary().GetSampleCount()), true
		case dto.MetricType_HISTOGRAM:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

const pipelineYAML = `
input:
  label: gen
  generate:
    count: %d
    interval: %s
    mapping: 'root = {"n": counter(), "table": "orders"}'
pipeline:
  processors:
    - metric:
        type: counter_by
        name: rows_seen
        labels:
          table: ${! this.table }
        value: 2
    - metric:
        type: gauge
        name: last_n
        labels:
          table: ${! this.table }
        value: ${! this.n }
    - metric:
        type: timing
        name: fake_wait_ns
        value: 1500000000
output:
  label: sink
  drop: {}
`

// A stream built with the public StreamBuilder serves our exporter at /metrics
// on the HTTP multiplexer it is given.
func TestStreamBuilderServesMetrics(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b := service.NewStreamBuilder()
	b.SetHTTPMux(mux)
	if err := b.SetYAML(fmt.Sprintf(pipelineYAML, 25, "1ms") + `
metrics:
  prometheus:
    namespace: fi
    const_labels:
      shard: "1"
    use_histogram_timing: true
    histogram_buckets: [ 1, 2 ]
logger:
  level: none
`); err != nil {
		t.Fatal(err)
	}
	strm, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := strm.Run(ctx); err != nil {
		t.Fatal(err)
	}

	mfs, body, err := scrape(srv.URL + "/metrics")
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"fi_input_received", map[string]string{"label": "gen", "path": "root.input", "shard": "1"}, 25},
		{"fi_output_sent", map[string]string{"label": "sink", "path": "root.output"}, 25},
		{"fi_rows_seen", map[string]string{"table": "orders"}, 50},
		{"fi_last_n", map[string]string{"table": "orders"}, 25},
		{"fi_fake_wait_seconds", nil, 25},
		{"fi_output_latency_seconds", map[string]string{"label": "sink"}, 25},
	}
	for _, c := range checks {
		got, ok := value(mfs, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if !strings.Contains(body, `path="root.pipeline.processors.2",shard="1",le="1"} 0`) ||
		!strings.Contains(body, `path="root.pipeline.processors.2",shard="1",le="2"} 25`) {
		t.Errorf("histogram buckets of the 1.5s timer are wrong:\n%s", grep(body, "fi_fake_wait"))
	}
	if mfs["fi_output_latency_seconds"].GetType() != dto.MetricType_HISTOGRAM {
		t.Errorf("timers should be histograms")
	}
}

// The fluss-iggy command (service.RunCLIToCode, as in cmd/fluss-iggy) serves
// the text format at /metrics on the service-wide HTTP server while a
// pipeline runs, and writes the final metrics file when it ends.
func TestRunCommandServesMetrics(t *testing.T) {
	addr := freeAddr(t)
	dir := t.TempDir()
	final := filepath.Join(dir, "final.prom")
	conf := filepath.Join(dir, "pipeline.yaml")
	const rows = 60
	yaml := fmt.Sprintf(pipelineYAML, rows, "40ms") + fmt.Sprintf(`
http:
  address: %s
metrics:
  prometheus:
    file_output_path: %s
    add_go_metrics: true
logger:
  level: warn
`, addr, final)
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	launched := make(chan struct{})
	go func() {
		code, err := service.RunCLIToCode(ctx,
			service.CLIOptSetBinaryName("fluss-iggy"),
			service.CLIOptSetArgs("fluss-iggy", "run", conf),
			service.CLIOptAddTeeLogger(slog.New(&launchHandler{launched: launched})))
		done <- result{code, err}
	}()
	// Benthos starts its HTTP server before the stream registers its
	// endpoints (/ready, /metrics, ...), and a request that arrives while it
	// does races with the registration in gorilla/mux (go test -race sees
	// it). So wait for the "Launching" line the CLI logs once the stream
	// exists.
	select {
	case <-launched:
	case r := <-done:
		t.Fatalf("run ended before launching: code %d, err %v", r.code, r.err)
	case <-ctx.Done():
		t.Fatal("the pipeline did not launch")
	}

	// Scrape while the pipeline runs, until some rows went through.
	var mid float64
	url := "http://" + addr + "/metrics"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no rows seen at %s within a minute", url)
		}
		select {
		case r := <-done:
			t.Fatalf("run ended before any scrape: code %d, err %v", r.code, r.err)
		default:
		}
		mfs, body, err := scrape(url)
		if err != nil {
			continue // the server may not be up yet
		}
		if mid, _ = value(mfs, "output_sent", map[string]string{"label": "sink"}); mid >= 5 {
			if _, ok := mfs["go_goroutines"]; !ok {
				t.Errorf("add_go_metrics: go_goroutines missing:\n%s", body)
			}
			if !strings.Contains(body, "# TYPE output_sent counter") {
				t.Errorf("no TYPE line for output_sent:\n%s", grep(body, "output_sent"))
			}
			break
		}
	}
	if mid >= rows {
		t.Errorf("scraped after the run ended (%v rows); the test did not see a running pipeline", mid)
	}

	r := <-done
	if r.err != nil || r.code != 0 {
		t.Fatalf("run: code %d, err %v", r.code, r.err)
	}
	b, err := os.ReadFile(final)
	if err != nil {
		t.Fatalf("final metrics file: %v", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("final metrics file does not parse: %v", err)
	}
	if got, _ := value(mfs, "output_sent", map[string]string{"label": "sink"}); got != rows {
		t.Errorf("final output_sent = %v, want %d", got, rows)
	}
	if got, _ := value(mfs, "rows_seen", map[string]string{"table": "orders"}); got != 2*rows {
		t.Errorf("final rows_seen = %v, want %d", got, 2*rows)
	}
}

// The shipped spec is complete and its examples lint.
func TestSpec(t *testing.T) {
	env := service.GlobalEnvironment()
	var view *service.ConfigView
	env.WalkMetrics(func(name string, v *service.ConfigView) {
		if name == "prometheus" {
			view = v
		}
	})
	if view == nil {
		t.Fatal("prometheus metrics exporter is not registered")
	}
	td, err := view.TemplateData()
	if err != nil {
		t.Fatal(err)
	}
	if td.Status != "beta" || td.Summary == "" || len(td.Description) < 200 || len(td.Examples) == 0 {
		t.Errorf("incomplete spec: status %q, summary %q, %d description bytes, %d examples", td.Status, td.Summary, len(td.Description), len(td.Examples))
	}
	for _, f := range td.Fields {
		if strings.TrimSpace(f.Description) == "" || strings.HasPrefix(f.Description, "Sorry!") {
			t.Errorf("field %s has no description", f.FullName)
		}
	}
	linter := env.FullConfigSchema("", "").NewStreamConfigLinter().SetSkipEnvVarCheck(true)
	for _, ex := range td.Examples {
		lints, err := linter.LintYAML([]byte(ex.Config))
		if err != nil || len(lints) > 0 {
			t.Errorf("example %q: err %v, lints %v", ex.Title, err, lints)
		}
	}

	bad := map[string]string{
		"buckets":  "use_histogram_timing: true\n    histogram_buckets: [ 2, 1 ]",
		"quantile": "summary_quantiles_objectives: [ { quantile: 2, error: 0.1 } ]",
		"unit":     "timer_unit: minutes",
		"unknown":  "no_such_field: 1",
	}
	for name, fields := range bad {
		lints, err := linter.LintYAML([]byte("metrics:\n  prometheus:\n    " + fields + "\n"))
		if err == nil && len(lints) == 0 {
			t.Errorf("%s: the linter accepted %q", name, fields)
		}
	}
}

// launchHandler is a slog handler that closes launched when the CLI logs
// that it is launching the stream.
type launchHandler struct {
	launched chan struct{}
	once     sync.Once
}

func (h *launchHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *launchHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *launchHandler) WithGroup(string) slog.Handler            { return h }
func (h *launchHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "Launching") {
		h.once.Do(func() { close(h.launched) })
	}
	return nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func grep(body, substr string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
