package prometheus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// Options configure an Exporter. The zero value serves summaries in seconds
// with no quantiles and nothing else; NewFromConfig fills it from a config.
type Options struct {
	// Namespace prefixes every metric name, joined with an underscore.
	Namespace string
	// ConstLabels are added to every metric.
	ConstLabels map[string]string
	// TimerNanoseconds reports timings in nanoseconds under their Benthos
	// names instead of seconds.
	TimerNanoseconds bool
	// Histograms reports timers as histograms with HistogramBuckets (in
	// seconds; nil means the client's defaults) instead of summaries.
	Histograms       bool
	HistogramBuckets []float64
	// Objectives are the summary quantiles and their allowed errors.
	Objectives map[float64]float64
	// SummaryMaxAge is how long an observation counts towards a summary's
	// quantiles (0 means the client's default of 10 minutes).
	SummaryMaxAge time.Duration
	// GoMetrics and ProcessMetrics add the client's runtime and process
	// collectors.
	GoMetrics      bool
	ProcessMetrics bool
	// FileOutputPath, when set, receives the metrics in the text format when
	// the exporter closes.
	FileOutputPath string
	// Push, when its URL is set, pushes the metrics to a Pushgateway.
	Push PushOptions
}

// Exporter is a Benthos metrics exporter backed by a Prometheus registry. It
// implements service.MetricsExporter, and HandlerFunc, through which Benthos
// serves it at /metrics and /stats.
type Exporter struct {
	opts    Options
	log     *service.Logger
	reg     *prom.Registry
	handler http.Handler
	pusher  *pusher

	mu       sync.Mutex
	families map[string]*family
	warned   map[string]bool

	closeOnce sync.Once
	closeErr  error
}

type kind int

const (
	kindCounter kind = iota
	kindGauge
	kindTimer
)

func (k kind) String() string {
	switch k {
	case kindCounter:
		return "counter"
	case kindGauge:
		return "gauge"
	default:
		return "timer"
	}
}

// family is one registered metric vector.
type family struct {
	kind     kind
	labels   []string
	counter  *prom.CounterVec
	gauge    *prom.GaugeVec
	observer prom.ObserverVec
}

var _ service.MetricsExporter = (*Exporter)(nil)

// New returns an Exporter with its own registry (never the client's global
// one, so that several streams in a process do not collide).
func New(opts Options, log *service.Logger) (*Exporter, error) {
	if err := validateOptions(&opts); err != nil {
		return nil, err
	}
	reg := prom.NewRegistry()
	if opts.GoMetrics {
		if err := reg.Register(collectors.NewGoCollector()); err != nil {
			return nil, fmt.Errorf("registering the Go runtime collector: %w", err)
		}
	}
	if opts.ProcessMetrics {
		if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
			return nil, fmt.Errorf("registering the process collector: %w", err)
		}
	}
	e := &Exporter{
		opts:     opts,
		log:      log,
		reg:      reg,
		families: map[string]*family{},
		warned:   map[string]bool{},
	}
	e.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      errorLogger{log},
		ErrorHandling: promhttp.ContinueOnError,
	})
	if opts.Push.URL != "" {
		p, err := newPusher(opts.Push, reg, log)
		if err != nil {
			return nil, err
		}
		e.pusher = p
	}
	return e, nil
}

func validateOptions(opts *Options) error {
	if opts.Namespace != "" {
		ns := sanitizeName(opts.Namespace)
		if ns != opts.Namespace {
			return fmt.Errorf("namespace %q is not a valid Prometheus metric name prefix (try %q)", opts.Namespace, ns)
		}
	}
	for k := range opts.ConstLabels {
		if !validLabelName(k) {
			return fmt.Errorf("const_labels: %q is not a valid Prometheus label name", k)
		}
	}
	for i, b := range opts.HistogramBuckets {
		if math.IsNaN(b) || (i > 0 && b <= opts.HistogramBuckets[i-1]) {
			return fmt.Errorf("histogram_buckets: bucket %d (%v) is not greater than the one before it; buckets must be strictly increasing", i, b)
		}
	}
	for q, errv := range opts.Objectives {
		if math.IsNaN(q) || q < 0 || q > 1 {
			return fmt.Errorf("summary_quantiles_objectives: quantile %v is not between 0 and 1", q)
		}
		if math.IsNaN(errv) || errv < 0 || errv > 1 {
			return fmt.Errorf("summary_quantiles_objectives: error %v of quantile %v is not between 0 and 1", errv, q)
		}
	}
	if opts.SummaryMaxAge < 0 {
		return fmt.Errorf("summary_max_age %v is negative", opts.SummaryMaxAge)
	}
	return nil
}

// Registry returns the exporter's registry, for tests and for callers that
// want to register collectors of their own.
func (e *Exporter) Registry() *prom.Registry { return e.reg }

// HandlerFunc serves the metrics in the Prometheus text format (or another
// format the scraper negotiates). Benthos mounts it at /metrics and /stats.
func (e *Exporter) HandlerFunc() http.HandlerFunc { return e.handler.ServeHTTP }

// NewCounterCtor implements service.MetricsExporter.
func (e *Exporter) NewCounterCtor(name string, labelKeys ...string) service.MetricsExporterCounterCtor {
	f := e.family(kindCounter, name, labelKeys)
	if f == nil {
		return func(...string) service.MetricsExporterCounter { return noop{} }
	}
	return func(labelValues ...string) service.MetricsExporterCounter {
		c, err := f.counter.GetMetricWithLabelValues(labelValues...)
		if err != nil {
			e.warnOnce("values:"+name, "metric %s: label values %q rejected: %v", name, labelValues, err)
			return noop{}
		}
		return counter{c}
	}
}

// NewTimerCtor implements service.MetricsExporter.
func (e *Exporter) NewTimerCtor(name string, labelKeys ...string) service.MetricsExporterTimerCtor {
	f := e.family(kindTimer, name, labelKeys)
	if f == nil {
		return func(...string) service.MetricsExporterTimer { return noop{} }
	}
	scale := 1e9
	if e.opts.TimerNanoseconds {
		scale = 1
	}
	return func(labelValues ...string) service.MetricsExporterTimer {
		o, err := f.observer.GetMetricWithLabelValues(labelValues...)
		if err != nil {
			e.warnOnce("values:"+name, "metric %s: label values %q rejected: %v", name, labelValues, err)
			return noop{}
		}
		return timer{o: o, scale: scale}
	}
}

// NewGaugeCtor implements service.MetricsExporter.
func (e *Exporter) NewGaugeCtor(name string, labelKeys ...string) service.MetricsExporterGaugeCtor {
	f := e.family(kindGauge, name, labelKeys)
	if f == nil {
		return func(...string) service.MetricsExporterGauge { return noop{} }
	}
	return func(labelValues ...string) service.MetricsExporterGauge {
		g, err := f.gauge.GetMetricWithLabelValues(labelValues...)
		if err != nil {
			e.warnOnce("values:"+name, "metric %s: label values %q rejected: %v", name, labelValues, err)
			return noop{}
		}
		return gauge{g}
	}
}

// Close stops pushing (after a final push) and writes the metrics file, when
// those are configured. It is safe to call more than once.
func (e *Exporter) Close(ctx context.Context) error {
	e.closeOnce.Do(func() {
		var errs []error
		if e.pusher != nil {
			if err := e.pusher.close(ctx); err != nil {
				errs = append(errs, err)
			}
		}
		if e.opts.FileOutputPath != "" {
			if err := prom.WriteToTextfile(e.opts.FileOutputPath, e.reg); err != nil {
				errs = append(errs, fmt.Errorf("writing metrics to %s: %w", e.opts.FileOutputPath, err))
			}
		}
		e.closeErr = errors.Join(errs...)
	})
	return e.closeErr
}

// family returns the registered vector for a metric, registering it on first
// use. It returns nil (after logging a warning once) when the metric cannot be
// exported: another type or other labels under the same name, or a name or
// label the registry refuses.
func (e *Exporter) family(k kind, name string, labelKeys []string) *family {
	fqName := e.metricName(k, name)
	labels := make([]string, len(labelKeys))
	for i, l := range labelKeys {
		labels[i] = sanitizeLabelName(l)
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	if f, ok := e.families[fqName]; ok {
		if f.kind != k || !slices.Equal(f.labels, labels) {
			e.warnOnceLocked("conflict:"+fqName+"/"+k.String()+"/"+strings.Join(labels, ","),
				"metric %s (%s, labels %q) is not exported: the name is already used by a %s with labels %q",
				fqName, k, labels, f.kind, f.labels)
			return nil
		}
		return f
	}
	f, err := e.newFamily(k, fqName, labels)
	if err != nil {
		e.warnOnceLocked("register:"+fqName, "metric %s (%s, labels %q) is not exported: %v", fqName, k, labels, err)
		return nil
	}
	e.families[fqName] = f
	return f
}

func (e *Exporter) newFamily(k kind, fqName string, labels []string) (f *family, err error) {
	if fqName == "" {
		return nil, errors.New("empty metric name")
	}
	// The client panics on a few label names (le, quantile) and bucket
	// layouts; turn any such panic into an error rather than crash the
	// pipeline over a metric.
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("prometheus client refused it: %v", r)
		}
	}()
	help := "Benthos " + k.String() + " " + fqName + "."
	constLabels := prom.Labels(e.opts.ConstLabels)
	var c prom.Collector
	f = &family{kind: k, labels: labels}
	switch k {
	case kindCounter:
		f.counter = prom.NewCounterVec(prom.CounterOpts{Name: fqName, Help: help, ConstLabels: constLabels}, labels)
		c = f.counter
	case kindGauge:
		f.gauge = prom.NewGaugeVec(prom.GaugeOpts{Name: fqName, Help: help, ConstLabels: constLabels}, labels)
		c = f.gauge
	default:
		if e.opts.Histograms {
			if slices.Contains(labels, "le") {
				return nil, errors.New(`histograms cannot have a label named "le"`)
			}
			buckets := e.opts.HistogramBuckets
			if len(buckets) == 0 {
				buckets = prom.DefBuckets
			}
			if e.opts.TimerNanoseconds {
				scaled := make([]float64, len(buckets))
				for i, b := range buckets {
					scaled[i] = b * 1e9
				}
				buckets = scaled
			}
			v := prom.NewHistogramVec(prom.HistogramOpts{Name: fqName, Help: help, ConstLabels: constLabels, Buckets: buckets}, labels)
			f.observer, c = v, v
		} else {
			if slices.Contains(labels, "quantile") {
				return nil, errors.New(`summaries cannot have a label named "quantile"`)
			}
			v := prom.NewSummaryVec(prom.SummaryOpts{Name: fqName, Help: help, ConstLabels: constLabels, Objectives: e.opts.Objectives, MaxAge: e.opts.SummaryMaxAge}, labels)
			f.observer, c = v, v
		}
	}
	if err := e.reg.Register(c); err != nil {
		return nil, err
	}
	return f, nil
}

// metricName turns a Benthos metric name into the exported one.
func (e *Exporter) metricName(k kind, name string) string {
	if k == kindTimer && !e.opts.TimerNanoseconds {
		if base, ok := strings.CutSuffix(name, "_ns"); ok {
			name = base + "_seconds"
		}
	}
	if e.opts.Namespace != "" {
		name = e.opts.Namespace + "_" + name
	}
	if name == "" {
		return ""
	}
	return sanitizeName(name)
}

func (e *Exporter) warnOnce(key, format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.warnOnceLocked(key, format, args...)
}

func (e *Exporter) warnOnceLocked(key, format string, args ...any) {
	if e.warned[key] {
		return
	}
	e.warned[key] = true
	if e.log != nil {
		e.log.Warnf(format, args...)
	}
}

// sanitizeName replaces the characters a Prometheus metric name may not hold
// with underscores, and prefixes an underscore when it starts with a digit.
func sanitizeName(s string) string {
	return sanitize(s, true)
}

// sanitizeLabelName is sanitizeName for label names, which may not hold ':'.
func sanitizeLabelName(s string) string {
	if s == "" {
		return "_"
	}
	return sanitize(s, false)
}

func sanitize(s string, colon bool) string {
	var b strings.Builder
	b.Grow(len(s) + 1)
	for i, r := range s {
		switch {
		case r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (colon && r == ':'):
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if i == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func validLabelName(s string) bool {
	return s != "" && !strings.HasPrefix(s, "__") && sanitize(s, false) == s
}

// errorLogger routes the HTTP handler's errors to the Benthos logger.
type errorLogger struct{ log *service.Logger }

func (l errorLogger) Println(v ...any) {
	if l.log != nil {
		l.log.Errorf("serving metrics: %s", strings.TrimSpace(fmt.Sprintln(v...)))
	}
}

type counter struct{ c prom.Counter }

func (c counter) Incr(n int64) {
	if n > 0 {
		c.c.Add(float64(n))
	}
}

func (c counter) IncrFloat64(n float64) {
	if n > 0 && !math.IsInf(n, 0) {
		c.c.Add(n)
	}
}

type gauge struct{ g prom.Gauge }

func (g gauge) Set(v int64)          { g.g.Set(float64(v)) }
func (g gauge) SetFloat64(v float64) { g.g.Set(v) }

type timer struct {
	o     prom.Observer
	scale float64
}

func (t timer) Timing(ns int64) { t.o.Observe(float64(ns) / t.scale) }

type noop struct{}

func (noop) Incr(int64)          {}
func (noop) IncrFloat64(float64) {}
func (noop) Set(int64)           {}
func (noop) SetFloat64(float64)  {}
func (noop) Timing(int64)        {}
