package prometheus

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// gather returns the exporter's metric families by name.
func gather(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// series returns the metric of a family whose labels include want.
func series(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want map[string]string) *dto.Metric {
	t.Helper()
	mf, ok := mfs[name]
	if !ok {
		names := make([]string, 0, len(mfs))
		for n := range mfs {
			names = append(names, n)
		}
		t.Fatalf("metric %s not exported; have %v", name, names)
	}
	for _, m := range mf.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if match {
			return m
		}
	}
	t.Fatalf("metric %s has no series with labels %v: %v", name, want, mf.GetMetric())
	return nil
}

func newExporter(t *testing.T, opts Options) *Exporter {
	t.Helper()
	e, err := New(opts, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e
}

func TestCountersGaugesTimers(t *testing.T) {
	e := newExporter(t, Options{
		Namespace:   "fi",
		ConstLabels: map[string]string{"shard": "2"},
		Objectives:  map[float64]float64{0.5: 0.05},
	})

	c := e.NewCounterCtor("output_sent", "label", "path")
	c("out", "root.output").Incr(3)
	c("out", "root.output").Incr(4)
	c("out", "root.output").Incr(-5) // ignored: counters never go down
	c("out", "root.output").(interface{ IncrFloat64(float64) }).IncrFloat64(0.5)
	c("other", "root.output").Incr(1)

	g := e.NewGaugeCtor("fluss_lag", "table", "bucket")
	g("orders", "0").Set(42)
	g("orders", "1").Set(7)
	g("orders", "1").(interface{ SetFloat64(float64) }).SetFloat64(6.5)

	tm := e.NewTimerCtor("output_latency_ns", "label")
	tm("out").Timing(int64(2 * time.Second))
	tm("out").Timing(int64(4 * time.Second))

	mfs := gather(t, e)
	if got := series(t, mfs, "fi_output_sent", map[string]string{"label": "out", "path": "root.output", "shard": "2"}).GetCounter().GetValue(); got != 7.5 {
		t.Errorf("fi_output_sent{label=out} = %v, want 7.5", got)
	}
	if got := series(t, mfs, "fi_output_sent", map[string]string{"label": "other"}).GetCounter().GetValue(); got != 1 {
		t.Errorf("fi_output_sent{label=other} = %v, want 1", got)
	}
	if mfs["fi_output_sent"].GetType() != dto.MetricType_COUNTER {
		t.Errorf("fi_output_sent type = %v", mfs["fi_output_sent"].GetType())
	}
	if got := series(t, mfs, "fi_fluss_lag", map[string]string{"table": "orders", "bucket": "0"}).GetGauge().GetValue(); got != 42 {
		t.Errorf("fi_fluss_lag{bucket=0} = %v, want 42", got)
	}
	if got := series(t, mfs, "fi_fluss_lag", map[string]string{"bucket": "1"}).GetGauge().GetValue(); got != 6.5 {
		t.Errorf("fi_fluss_lag{bucket=1} = %v, want 6.5", got)
	}
	sum := series(t, mfs, "fi_output_latency_seconds", map[string]string{"label": "out"}).GetSummary()
	if sum.GetSampleCount() != 2 || sum.GetSampleSum() != 6 {
		t.Errorf("summary count/sum = %d/%v, want 2/6", sum.GetSampleCount(), sum.GetSampleSum())
	}
	if len(sum.GetQuantile()) != 1 || sum.GetQuantile()[0].GetQuantile() != 0.5 {
		t.Errorf("summary quantiles = %v, want just 0.5", sum.GetQuantile())
	}
	if _, ok := mfs["fi_output_latency_ns"]; ok {
		t.Errorf("timer kept its _ns name in seconds mode")
	}
}

func TestHistogramsAndNanoseconds(t *testing.T) {
	e := newExporter(t, Options{Histograms: true, HistogramBuckets: []float64{0.5, 1, 5}})
	e.NewTimerCtor("input_latency_ns")().Timing(int64(700 * time.Millisecond))
	h := series(t, gather(t, e), "input_latency_seconds", nil).GetHistogram()
	if h.GetSampleCount() != 1 || math.Abs(h.GetSampleSum()-0.7) > 1e-9 {
		t.Errorf("histogram count/sum = %d/%v, want 1/0.7", h.GetSampleCount(), h.GetSampleSum())
	}
	wantCum := []uint64{0, 1, 1}
	for i, b := range h.GetBucket() {
		if b.GetCumulativeCount() != wantCum[i] {
			t.Errorf("bucket le=%v count = %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), wantCum[i])
		}
	}

	ns := newExporter(t, Options{Histograms: true, HistogramBuckets: []float64{0.5, 1}, TimerNanoseconds: true})
	ns.NewTimerCtor("input_latency_ns")().Timing(int64(700 * time.Millisecond))
	hn := series(t, gather(t, ns), "input_latency_ns", nil).GetHistogram()
	if hn.GetSampleSum() != 7e8 {
		t.Errorf("nanosecond histogram sum = %v, want 7e8", hn.GetSampleSum())
	}
	if got := hn.GetBucket()[0].GetUpperBound(); got != 5e8 {
		t.Errorf("nanosecond bucket bound = %v, want 5e8 (buckets are configured in seconds)", got)
	}
	if hn.GetBucket()[1].GetCumulativeCount() != 1 || hn.GetBucket()[0].GetCumulativeCount() != 0 {
		t.Errorf("nanosecond buckets = %v", hn.GetBucket())
	}
}

func TestNamesAreSanitised(t *testing.T) {
	e := newExporter(t, Options{})
	e.NewCounterCtor("my.custom-metric", "some.label")("v").Incr(1)
	e.NewGaugeCtor("9lives")().Set(9)
	mfs := gather(t, e)
	if series(t, mfs, "my_custom_metric", map[string]string{"some_label": "v"}).GetCounter().GetValue() != 1 {
		t.Error("sanitised counter has the wrong value")
	}
	if series(t, mfs, "_9lives", nil).GetGauge().GetValue() != 9 {
		t.Error("sanitised gauge has the wrong value")
	}
	for in, want := range map[string]string{"a:b": "a:b", "é": "_", "a b": "a_b", "0": "_0", "ok_1": "ok_1"} {
		if got := sanitizeName(in); got != want {
			t.Errorf("sanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := sanitizeLabelName("a:b"); got != "a_b" {
		t.Errorf("sanitizeLabelName(a:b) = %q", got)
	}
}

// Bad metric definitions never panic and never stop the pipeline: the metric
// is dropped with one warning, and the good ones carry on.
func TestBadMetricsBecomeNoops(t *testing.T) {
	e := newExporter(t, Options{ConstLabels: map[string]string{"shard": "1"}, Histograms: false})

	e.NewCounterCtor("dup", "a")("x").Incr(1)
	e.NewGaugeCtor("dup", "a")("x").Set(5)             // other type, same name
	e.NewCounterCtor("dup", "b")("x").Incr(5)          // other labels, same name
	e.NewCounterCtor("dup", "a")("x", "extra").Incr(5) // wrong number of label values
	e.NewCounterCtor("dup", "a")("\xff").Incr(5)       // invalid UTF-8 label value
	e.NewTimerCtor("t", "quantile")("q").Timing(1)     // the summary's reserved label
	e.NewCounterCtor("c", "shard")("9").Incr(1)        // clashes with a const label
	e.NewCounterCtor("")().Incr(1)                     // empty name
	e.NewCounterCtor("d", "__reserved")("v").Incr(1)   // reserved label prefix

	h := newExporter(t, Options{Histograms: true})
	h.NewTimerCtor("t", "le")("1").Timing(1) // the histogram's reserved label

	mfs := gather(t, e)
	if got := series(t, mfs, "dup", map[string]string{"a": "x"}).GetCounter().GetValue(); got != 1 {
		t.Errorf("dup = %v, want 1 (the conflicting uses must not touch it)", got)
	}
	for _, name := range []string{"t", "c", "d"} {
		if _, ok := mfs[name]; ok {
			t.Errorf("metric %s should not be exported", name)
		}
	}
	if len(e.warned) < 5 {
		t.Errorf("expected a warning per problem, got %v", e.warned)
	}
}

func TestOptionsValidation(t *testing.T) {
	bad := map[string]Options{
		"namespace":        {Namespace: "fluss-iggy"},
		"const label":      {ConstLabels: map[string]string{"a-b": "x"}},
		"reserved label":   {ConstLabels: map[string]string{"__name__": "x"}},
		"buckets order":    {HistogramBuckets: []float64{1, 1}},
		"buckets NaN":      {HistogramBuckets: []float64{math.NaN()}},
		"quantile":         {Objectives: map[float64]float64{1.5: 0.01}},
		"quantile error":   {Objectives: map[float64]float64{0.5: -1}},
		"max age":          {SummaryMaxAge: -time.Second},
		"push without job": {Push: PushOptions{URL: "http://127.0.0.1:1"}},
		"push interval":    {Push: PushOptions{URL: "http://127.0.0.1:1", Job: "j", Interval: -time.Second}},
	}
	for name, opts := range bad {
		if _, err := New(opts, nil); err == nil {
			t.Errorf("%s: New accepted %+v", name, opts)
		}
	}
}

func TestGoAndProcessCollectors(t *testing.T) {
	e := newExporter(t, Options{GoMetrics: true, ProcessMetrics: true})
	mfs := gather(t, e)
	for _, n := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := mfs[n]; !ok {
			t.Errorf("%s missing", n)
		}
	}
}

func TestHandlerServesTextFormat(t *testing.T) {
	e := newExporter(t, Options{Namespace: "fi"})
	e.NewCounterCtor("input_received", "label")("in").Incr(12)
	srv := httptest.NewServer(e.HandlerFunc())
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(ct, "version=0.0.4") {
		t.Errorf("Content-Type = %q, want the text format", ct)
	}
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "# TYPE fi_input_received counter\n") || !strings.Contains(string(body), `fi_input_received{label="in"} 12`) {
		t.Errorf("unexpected body:\n%s", body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(strings.NewReader(string(body))); err != nil {
		t.Errorf("body does not parse as the text format: %v", err)
	}
}

func TestFileOutputOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "final.prom")
	e, err := New(Options{FileOutputPath: path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.NewCounterCtor("rows", "table")("orders").Incr(100)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("file written before close: %v", err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatalf("second close: %v", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `rows{table="orders"} 100`) {
		t.Errorf("file content:\n%s", b)
	}

	bad, err := New(Options{FileOutputPath: filepath.Join(t.TempDir(), "missing-dir", "x.prom")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Close(context.Background()); err == nil || !strings.Contains(err.Error(), "missing-dir") {
		t.Errorf("close with an unwritable path: err = %v, want one naming the path", err)
	}
}

// gateway is a fake Pushgateway recording what it receives.
type gateway struct {
	mu     sync.Mutex
	pushes []pushReq
}

type pushReq struct {
	method, path, auth string
	body               []byte
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.pushes = append(g.pushes, pushReq{r.Method, r.URL.Path, r.Header.Get("Authorization"), b})
	g.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (g *gateway) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pushes)
}

// inProcessGateway serves the pusher's requests with gw in process, by
// standing in for http.DefaultTransport (the pusher's client has no transport
// of its own) until the test ends. With no socket involved, the pushes use
// only goroutines, channels and timers, so the push tests run in a synctest
// bubble: the ticker runs on the bubble's fake clock and synctest.Wait returns
// once every push due has been made, so counts are exact rather than
// whatever a real-time sleep let through. Not for parallel tests.
func inProcessGateway(t *testing.T, gw http.Handler) {
	old := http.DefaultTransport
	http.DefaultTransport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		gw.ServeHTTP(rec, r)
		return rec.Result(), nil
	})
	t.Cleanup(func() { http.DefaultTransport = old })
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestPushOnIntervalAndClose(t *testing.T) {
	gw := &gateway{}
	inProcessGateway(t, gw)
	synctest.Test(t, func(t *testing.T) {
		const interval = 20 * time.Millisecond
		e, err := New(Options{Push: PushOptions{
			URL: "http://gateway.test", Job: "backfill", Grouping: map[string]string{"instance": "a"},
			Interval: interval, Username: "u", Password: "p",
		}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		e.NewCounterCtor("rows")().Incr(3)
		// Two intervals of fake time: exactly two ticks, each push done by
		// the time Wait returns.
		time.Sleep(2 * interval)
		synctest.Wait()
		if n := gw.count(); n != 2 {
			t.Fatalf("%d pushes in two intervals, want 2", n)
		}
		e.NewCounterCtor("rows")().Incr(4)
		if err := e.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := gw.count(); n != 3 {
			t.Fatalf("%d pushes after close, want 2 and the final one", n)
		}
		// An hour of fake time: a push loop still running would push again.
		time.Sleep(time.Hour)
		synctest.Wait()
		if n := gw.count(); n != 3 {
			t.Errorf("pushes continued after close: %d, want 3", n)
		}
	})

	gw.mu.Lock()
	last := gw.pushes[len(gw.pushes)-1]
	gw.mu.Unlock()
	if last.method != http.MethodPut || last.path != "/metrics/job/backfill/instance/a" {
		t.Errorf("push = %s %s", last.method, last.path)
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("u:p")); last.auth != want {
		t.Errorf("auth = %q, want %q", last.auth, want)
	}
	// The body is in the delimited protobuf format; the final value must be there.
	mf := &dto.MetricFamily{}
	if err := expfmt.NewDecoder(bytes.NewReader(last.body), expfmt.NewFormat(expfmt.TypeProtoDelim)).Decode(mf); err != nil {
		t.Fatalf("decoding pushed body: %v", err)
	}
	if mf.GetName() != "rows" || mf.GetMetric()[0].GetCounter().GetValue() != 7 {
		t.Errorf("final push = %v", mf)
	}
}

func TestPushOnlyAtCloseAndFailure(t *testing.T) {
	gw := &gateway{}
	t.Run("OnlyAtClose", func(t *testing.T) {
		inProcessGateway(t, gw)
		synctest.Test(t, func(t *testing.T) {
			e, err := New(Options{Push: PushOptions{URL: "http://gateway.test", Job: "j"}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// An hour of fake time with interval 0: nothing may push.
			time.Sleep(time.Hour)
			synctest.Wait()
			if gw.count() != 0 {
				t.Fatalf("pushed %d times before close with interval 0", gw.count())
			}
			if err := e.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			if gw.count() != 1 {
				t.Fatalf("pushes at close = %d, want 1", gw.count())
			}
		})
	})

	// A real gateway that is down: the error must name it.
	srv := httptest.NewServer(gw)
	srv.Close()
	down, err := New(Options{Push: PushOptions{URL: srv.URL, Job: "j", Timeout: time.Second}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := down.Close(context.Background()); err == nil || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("close with the gateway down: err = %v, want one naming %s", err, srv.URL)
	}
}
