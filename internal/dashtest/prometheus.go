package dashtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// EnvPrometheusBin names the environment variable that points the tests at a
// Prometheus binary; without it `prometheus` is looked up on PATH.
const EnvPrometheusBin = "PROMETHEUS_BIN"

// RequireTool returns the path of a Prometheus tool ("prometheus" or
// "promtool"): $PROMETHEUS_BIN (or the promtool beside it), else the one on
// PATH. Without it the test fails under CI and is skipped elsewhere.
func RequireTool(t testing.TB, name string) string {
	t.Helper()
	if bin := os.Getenv(EnvPrometheusBin); bin != "" {
		p := bin
		if name != "prometheus" {
			p = filepath.Join(filepath.Dir(bin), name)
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
		t.Fatalf("%s=%s: %s not found at %s", EnvPrometheusBin, bin, name, p)
	}
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found on PATH and %s is not set (Debian: apt-get install prometheus, then service prometheus stop)", name, EnvPrometheusBin)
	if flusstest.InCI() {
		t.Fatalf("dashtest: %s", msg)
	}
	t.Skipf("dashtest: skipping: %s (with CI set this is a failure)", msg)
	return ""
}

// Prometheus is a Prometheus server the test started, with its own
// configuration and data directory.
type Prometheus struct {
	// URL is the server's base URL, "http://127.0.0.1:PORT".
	URL string
	// LogFile holds the server's output.
	LogFile string
	cmd     *exec.Cmd
	done    chan struct{}
}

// PrometheusConfig is what StartPrometheus writes into the server's
// configuration file.
type PrometheusConfig struct {
	// ScrapeInterval is the global scrape and evaluation interval.
	ScrapeInterval time.Duration
	// Job is the scrape job's name; Targets are its host:port targets,
	// scraped at /metrics.
	Job     string
	Targets []string
}

// StartPrometheus starts bin on a free port of 127.0.0.1 with a fresh
// configuration and data directory and waits until it is ready. The server
// is stopped when the test ends; when the test failed its log's tail is
// printed.
func StartPrometheus(t testing.TB, bin string, conf PrometheusConfig) *Prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	var targets []string
	for _, tg := range conf.Targets {
		targets = append(targets, strconv.Quote(tg))
	}
	iv := conf.ScrapeInterval.String()
	yml := fmt.Sprintf(`global:
  scrape_interval: %s
  scrape_timeout: %s
  evaluation_interval: %s
scrape_configs:
  - job_name: %q
    static_configs:
      - targets: [ %s ]
`, iv, iv, iv, conf.Job, strings.Join(targets, ", "))
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		p, err := startPrometheus(bin, dir, cfg, attempt)
		if err == nil {
			t.Cleanup(func() {
				p.stop()
				if t.Failed() {
					t.Logf("dashtest: Prometheus log (%s), last lines:\n%s", p.LogFile, tailFile(p.LogFile, 30))
				}
			})
			return p
		}
		lastErr = err
	}
	t.Fatalf("dashtest: starting Prometheus: %v", lastErr)
	return nil
}

func startPrometheus(bin, dir, cfg string, attempt int) (*Prometheus, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	logFile := filepath.Join(dir, fmt.Sprintf("prometheus-%d.log", attempt))
	lf, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	data := filepath.Join(dir, fmt.Sprintf("data-%d", attempt))
	cmd := exec.Command(bin,
		"--config.file="+cfg,
		"--storage.tsdb.path="+data,
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	p := &Prometheus{URL: "http://" + addr, LogFile: logFile, cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-p.done:
			return nil, fmt.Errorf("prometheus exited at start (%s); log:\n%s", cmd.ProcessState, tailFile(logFile, 20))
		default:
		}
		resp, err := http.Get(p.URL + "/-/ready")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("prometheus at %s not ready within 30s (%v); log:\n%s", addr, err, tailFile(logFile, 20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the server: SIGTERM, then SIGKILL after 10 s.
func (p *Prometheus) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Sample is one series of an instant query's result.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// apiResponse is the envelope of Prometheus's HTTP API.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
}

func (p *Prometheus) get(ctx context.Context, path string, params url.Values) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+path+"?"+params.Encode(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("GET %s: %s: %.200s", path, resp.Status, body)
	}
	if r.Status != "success" {
		return nil, &QueryError{Type: r.ErrorType, Msg: r.Error}
	}
	return r.Data, nil
}

// QueryError is an error Prometheus answered, such as a PromQL syntax error.
type QueryError struct{ Type, Msg string }

func (e *QueryError) Error() string { return e.Type + ": " + e.Msg }

// IsQueryError reports whether err is Prometheus refusing a query (as
// opposed to not answering).
func IsQueryError(err error) bool {
	var q *QueryError
	return errors.As(err, &q)
}

// Query evaluates expr at the current time (/api/v1/query). A scalar result
// is one sample without labels.
func (p *Prometheus) Query(ctx context.Context, expr string) ([]Sample, error) {
	data, err := p.get(ctx, "/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return nil, err
	}
	var d struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, err
	}
	switch d.ResultType {
	case "vector":
		var vs []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(d.Result, &vs); err != nil {
			return nil, err
		}
		out := make([]Sample, 0, len(vs))
		for _, v := range vs {
			f, err := sampleValue(v.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, Sample{Metric: v.Metric, Value: f})
		}
		return out, nil
	case "scalar":
		var v [2]any
		if err := json.Unmarshal(d.Result, &v); err != nil {
			return nil, err
		}
		f, err := sampleValue(v)
		if err != nil {
			return nil, err
		}
		return []Sample{{Metric: map[string]string{}, Value: f}}, nil
	default:
		return nil, fmt.Errorf("result type %q: a dashboard query must give an instant vector or a scalar", d.ResultType)
	}
}

func sampleValue(v [2]any) (float64, error) {
	s, ok := v[1].(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", v[1])
	}
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

// Series returns the label sets of the series that match selector
// (/api/v1/series over the last five minutes).
func (p *Prometheus) Series(ctx context.Context, selector string) ([]map[string]string, error) {
	now := time.Now()
	data, err := p.get(ctx, "/api/v1/series", url.Values{
		"match[]": {selector},
		"start":   {strconv.FormatInt(now.Add(-5*time.Minute).Unix(), 10)},
		"end":     {strconv.FormatInt(now.Unix(), 10)},
	})
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	return out, json.Unmarshal(data, &out)
}

// MetricNames returns the names of every metric Prometheus holds.
func (p *Prometheus) MetricNames(ctx context.Context) ([]string, error) {
	data, err := p.get(ctx, "/api/v1/label/__name__/values", url.Values{})
	if err != nil {
		return nil, err
	}
	var out []string
	return out, json.Unmarshal(data, &out)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// tailFile returns the last n lines of a file.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
