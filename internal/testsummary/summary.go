package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
	ImportPath  string
}

// chunk is one output event of a package, with the test it belongs to ("" for
// the package itself).
type chunk struct{ test, text string }

type pkgRun struct {
	chunks []chunk
	status map[string]string // test -> pass, fail or skip
	failed bool              // a test of it failed
	kept   int               // len(chunks) after the last compact
}

// Skip is a skipped test and what it said.
type Skip struct {
	Package string // as shown: "./iggy" for a package of the module
	Test    string
	Message string // the last t.Log/t.Skip line before the skip, without file:line
	Where   string // file:line of that line
	Allowed bool   // on the allow-list
}

type summary struct {
	w     io.Writer
	mod   string
	ci    bool
	allow []AllowedSkip

	pkgs                    map[string]*pkgRun
	order                   []string // packages in the order they started
	passed, failed, skipped int
	failedTests             []string
	failures                []string // failures that are not a failed test
	skips                   []Skip
}

func newSummary(w io.Writer, module string, ci bool, allow []AllowedSkip) *summary {
	return &summary{w: w, mod: module, ci: ci, allow: allow, pkgs: map[string]*pkgRun{}}
}

// Read consumes go test -json output until EOF, printing each package's
// block when the package is done.
func (s *summary) Read(r io.Reader) error {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			s.line(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (s *summary) line(line []byte) {
	var ev event
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Action == "" {
		// Not an event (go test writes only events on stdout, but be safe).
		_, _ = s.w.Write(line)
		return
	}
	switch ev.Action {
	case "build-output":
		_, _ = io.WriteString(s.w, ev.Output)
		return
	case "build-fail":
		return
	}
	if ev.Package == "" {
		return
	}
	p := s.pkg(ev.Package)
	switch ev.Action {
	case "run":
		delete(p.status, ev.Test) // a TestMain may run a test again (output/iggy does)
	case "output":
		p.chunks = append(p.chunks, chunk{ev.Test, ev.Output})
	case "pass", "fail", "skip":
		if ev.Test != "" {
			s.testDone(ev.Package, p, ev.Test, ev.Action)
			return
		}
		why := "failed without a failed test (a crash or timeout outside a test, or TestMain); see its output above"
		if ev.FailedBuild != "" {
			why = "did not build (see the errors above)"
		}
		s.pkgDone(ev.Package, p, ev.Action, why)
	}
}

func (s *summary) pkg(name string) *pkgRun {
	p := s.pkgs[name]
	if p == nil {
		p = &pkgRun{status: map[string]string{}}
		s.pkgs[name] = p
		s.order = append(s.order, name)
	}
	return p
}

func (s *summary) testDone(pkg string, p *pkgRun, test, action string) {
	p.status[test] = action
	defer p.compact()
	switch action {
	case "pass":
		s.passed++
	case "fail":
		s.failed++
		p.failed = true
		s.failedTests = append(s.failedTests, s.show(pkg)+" "+test)
	case "skip":
		msg, where := skipMessage(p.chunks, test)
		sk := Skip{Package: s.show(pkg), Test: test, Message: msg, Where: where}
		sk.Allowed = allowedSkip(s.allow, sk) != nil
		if s.ci && !sk.Allowed {
			s.failed++ // counted as a failure, not a skip
		} else {
			s.skipped++
		}
		s.skips = append(s.skips, sk)
	}
}

// compact drops the output of passed and skipped tests once a package has
// gathered much of it (only failed tests' output is printed), so that chatty
// packages do not pile up their whole log until they finish.
func (p *pkgRun) compact() {
	if len(p.chunks) < 1<<12 || len(p.chunks) < 2*p.kept {
		return
	}
	kept := p.chunks[:0]
	for _, c := range p.chunks {
		if st := p.status[c.test]; c.test == "" || (st != "pass" && st != "skip") {
			kept = append(kept, c)
		}
	}
	clear(p.chunks[len(kept):])
	p.chunks = kept
	p.kept = len(kept)
}

// pkgDone prints the package's block as plain go test would: only the ok
// line of a passing package; the output of failed (and unfinished) tests and
// of the package itself for a failing one.
// A failing package without a failed test counts as one failure, failWhy.
func (s *summary) pkgDone(pkg string, p *pkgRun, action, failWhy string) {
	var b strings.Builder
	for _, c := range p.chunks {
		if action != "fail" {
			if c.test == "" && (strings.HasPrefix(c.text, "ok  \t") || strings.HasPrefix(c.text, "?   \t")) {
				b.WriteString(c.text)
			}
			continue
		}
		if c.test != "" {
			if st := p.status[c.test]; st == "pass" || st == "skip" {
				continue
			}
			if strings.HasPrefix(c.text, "=== PAUSE ") || strings.HasPrefix(c.text, "=== CONT ") {
				continue
			}
		}
		b.WriteString(c.text)
	}
	_, _ = io.WriteString(s.w, b.String())
	if action == "fail" && !p.failed {
		s.AddFailure("package " + s.show(pkg) + ": " + failWhy)
	}
	delete(s.pkgs, pkg)
}

// Finish prints what is left of packages go test never finished (it was
// killed, or its output ended early), and counts them as failures.
func (s *summary) Finish() {
	for _, name := range s.order {
		if p := s.pkgs[name]; p != nil {
			p.failed = false // count the package as a failure even when a test of it failed
			s.pkgDone(name, p, "fail", "go test ended before the package finished")
		}
	}
}

// AddFailure records a failure that is not a failed test.
func (s *summary) AddFailure(why string) {
	s.failed++
	s.failures = append(s.failures, why)
}

// Failed is the number of failures so far (tests, packages, and skips that CI
// does not allow).
func (s *summary) Failed() int { return s.failed }

// Report prints the skipped tests, the failures and the count line. It
// reports false when a skip fails the run (only in CI).
func (s *summary) Report() bool {
	w := s.w
	fmt.Fprintln(w)
	notAllowed := 0
	for _, sk := range s.skips {
		if !sk.Allowed {
			notAllowed++
		}
	}
	if len(s.skips) == 0 {
		fmt.Fprintln(w, "testsummary: no test was skipped")
	} else {
		fmt.Fprintf(w, "testsummary: %d skipped %s, by reason:\n", len(s.skips), plural(len(s.skips), "test", "tests"))
		for _, g := range groupSkips(s.skips) {
			mark := ""
			if !g.allowed {
				if s.ci {
					mark = "  [FAIL: not allowed in CI]"
				} else {
					mark = "  [fails in CI]"
				}
			}
			writeGroup(w, g, mark)
		}
		if notAllowed > 0 {
			if s.ci {
				fmt.Fprintf(w, "testsummary: FAIL: %d %s skipped in CI and %s not on the allow-list (internal/testsummary/allowlist.go);\n"+
					"  in CI a test that cannot run is a failure: give CI what the test needs, or add the test to the allow-list with the reason it may skip\n",
					notAllowed, plural(notAllowed, "test", "tests"), plural(notAllowed, "is", "are"))
			} else {
				fmt.Fprintf(w, "testsummary: %d of these %s not on the allow-list (internal/testsummary/allowlist.go): with CI=true %s the run\n",
					notAllowed, plural(notAllowed, "is", "are"), plural(notAllowed, "it fails", "they fail"))
			}
		}
	}
	if len(s.failedTests) > 0 {
		fmt.Fprintf(w, "testsummary: %d failed %s:\n", len(s.failedTests), plural(len(s.failedTests), "test", "tests"))
		for _, t := range s.failedTests {
			fmt.Fprintf(w, "      %s\n", t)
		}
	}
	for _, f := range s.failures {
		fmt.Fprintf(w, "testsummary: FAIL: %s\n", f)
	}
	fmt.Fprintf(w, "testsummary: %d passed, %d failed, %d skipped\n", s.passed, s.failed, s.skipped)
	return !s.ci || notAllowed == 0
}

type skipGroup struct {
	message string
	where   string // the skip's file:line, when all of the group's skips share it
	allowed bool
	pkgs    []string
	tests   map[string][]string // package -> tests
}

// groupSkips groups skips by message (many tests skip for one reason) and
// package, the groups CI rejects first, then by first appearance.
func groupSkips(skips []Skip) []*skipGroup {
	var groups []*skipGroup
	idx := map[string]*skipGroup{}
	for _, sk := range skips {
		msg := sk.Message
		if msg == "" {
			msg = "(no reason given)"
		}
		key := fmt.Sprintf("%t\x00%s", sk.Allowed, msg)
		g := idx[key]
		if g == nil {
			g = &skipGroup{message: msg, where: sk.Where, allowed: sk.Allowed, tests: map[string][]string{}}
			idx[key] = g
			groups = append(groups, g)
		}
		if g.where != sk.Where {
			g.where = ""
		}
		if _, ok := g.tests[sk.Package]; !ok {
			g.pkgs = append(g.pkgs, sk.Package)
		}
		g.tests[sk.Package] = append(g.tests[sk.Package], sk.Test)
	}
	sort.SliceStable(groups, func(i, j int) bool { return !groups[i].allowed && groups[j].allowed })
	return groups
}

// writeGroup prints a group: its message, then per package its tests,
// wrapped at about 110 columns.
func writeGroup(w io.Writer, g *skipGroup, mark string) {
	where := ""
	if g.where != "" {
		where = " (" + g.where + ")"
	}
	fmt.Fprintf(w, "  %s%s%s\n", g.message, where, mark)
	for _, pkg := range g.pkgs {
		line := "      " + pkg + ":"
		indent := strings.Repeat(" ", len(line))
		for i, t := range g.tests[pkg] {
			if i > 0 && len(line)+1+len(t) > 110 {
				fmt.Fprintln(w, line)
				line = indent
			}
			line += " " + t
		}
		fmt.Fprintln(w, line)
	}
}

var (
	logLine   = regexp.MustCompile(`^\s+([^\s:]+\.go:\d+): (.*)$`)
	framing   = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)\s|--- (SKIP|PASS|FAIL): )`)
	spaceRuns = regexp.MustCompile(`\s+`)
)

// skipMessage finds the reason a test gave for skipping: the last log entry
// (a "file.go:N: text" line and its more indented continuation lines) in its
// output.
func skipMessage(chunks []chunk, test string) (msg, where string) {
	var out strings.Builder
	for _, c := range chunks {
		if c.test == test {
			out.WriteString(c.text)
		}
	}
	var lines []string
	for l := range strings.SplitSeq(out.String(), "\n") {
		if strings.TrimSpace(l) != "" && !framing.MatchString(l) {
			lines = append(lines, l)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		m := logLine.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		parts := []string{m[2]}
		for _, l := range lines[i+1:] {
			parts = append(parts, strings.TrimSpace(l))
		}
		return spaceRuns.ReplaceAllString(strings.TrimSpace(strings.Join(parts, " ")), " "), m[1]
	}
	return "", ""
}

// show is how a package is printed and matched: "./x/y" inside the module.
func (s *summary) show(pkg string) string {
	if s.mod == "" {
		return pkg
	}
	if pkg == s.mod {
		return "."
	}
	if rest, ok := strings.CutPrefix(pkg, s.mod+"/"); ok {
		return "./" + rest
	}
	return pkg
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
