package pipeline_test

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// chartFile is the chart written next to the results (bench/results.svg).
const chartFile = "results.svg"

// chartColor groups stages by what they measure.
func chartColor(name string) string {
	switch {
	case strings.HasPrefix(name, "java_"), strings.HasPrefix(name, "go_scan"), strings.HasPrefix(name, "scan_"):
		return "#4e79a7" // scans
	case strings.HasPrefix(name, "input_"):
		return "#59a14f" // the input alone
	case name == "output_alone", name == "raw_sdk_send":
		return "#f28e2b" // writing to Iggy
	case strings.HasPrefix(name, "pipeline_arrow"):
		return "#b07aa1"
	case strings.HasPrefix(name, "pipeline_json"):
		return "#e15759"
	}
	return "#9c9c9c" // GC variants
}

// cpuChart renders CPU µs per row of every measured stage as a horizontal
// bar chart (SVG, plain text), in stage order.
func cpuChart(stages []stage, best map[string]result) []byte {
	type bar struct {
		name string
		v    float64
	}
	var bars []bar
	top := 0.0
	for _, s := range stages {
		r, ok := best[s.name]
		if !ok || s.name == "startup" {
			continue
		}
		v := cpuPerRow(r)
		bars = append(bars, bar{s.name, v})
		top = math.Max(top, v)
	}
	const (
		left, right, rowH, head = 190, 70, 22, 40
		width                   = 760
	)
	plot := float64(width - left - right)
	step := niceStep(top)
	scaleMax := math.Max(step, math.Ceil(top/step)*step)
	height := head + rowH*len(bars) + 30
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold">CPU µs per row, stage by stage (measured process only; lower is better)</text>`+"\n", 10)
	for t := 0.0; t <= scaleMax+1e-9; t += step {
		x := left + plot*t/scaleMax
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`, x, head-6, x, height-26)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", x, height-10, trimFloat(t))
	}
	for i, br := range bars {
		y := head + i*rowH
		w := plot * br.v / scaleMax
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`, left-8, y+14, html.EscapeString(br.name))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, left, y+2, w, rowH-6, chartColor(br.name))
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#333">%.2f</text>`+"\n", float64(left)+w+4, y+14, br.v)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// niceStep returns a grid step of 1, 2 or 5 times a power of ten giving
// about five lines up to top.
func niceStep(top float64) float64 {
	if top <= 0 {
		return 1
	}
	raw := top / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
