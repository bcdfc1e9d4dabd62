package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// testdata/sample.jsonl is `go test -json ./...` of a small module
// (example.com/tsx): package a has a pass, a skip with a multi-line message
// after a t.Log, a failing subtest next to a skipped and a passing one, and a
// SkipNow; package b a pass and a skipped parallel test; package c does not
// compile.
func sample(t *testing.T, ci bool, allow []AllowedSkip) (string, bool, *summary) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sample.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	s := newSummary(&out, "example.com/tsx", ci, allow)
	if err := s.Read(f); err != nil {
		t.Fatal(err)
	}
	s.Finish()
	ok := s.Report()
	return out.String(), ok, s
}

func TestLocal(t *testing.T) {
	allow := []AllowedSkip{{Package: "./b", Test: "TestPar", Message: "par skip", Reason: "test"}}
	out, ok, s := sample(t, false, allow)
	t.Logf("output:\n%s", out)
	if !ok {
		t.Error("Report failed outside CI")
	}
	for _, want := range []string{
		// go test's look: the failed test's output, the package lines.
		"    a_test.go:9: sub fails\n--- FAIL: TestSub/two (0.00s)\n--- FAIL: TestSub (0.00s)\nFAIL\nFAIL\texample.com/tsx/a\t",
		"ok  \texample.com/tsx/b\t",
		"# example.com/tsx/c [example.com/tsx/c.test]\nc/c_test.go:5:45: cannot use",
		"FAIL\texample.com/tsx/c [build failed]\n",
		// The skips, with their reasons; those CI rejects marked and first.
		"testsummary: 4 skipped tests, by reason:\n" +
			"  no server here second line (a_test.go:6)  [fails in CI]\n      ./a: TestSkip\n" +
			"  sub skip 1 (a_test.go:8)  [fails in CI]\n      ./a: TestSub/one\n" +
			"  (no reason given)  [fails in CI]\n      ./a: TestSkipNow\n" +
			"  par skip (b_test.go:6)\n      ./b: TestPar\n",
		"testsummary: 3 of these are not on the allow-list",
		"testsummary: 2 failed tests:\n      ./a TestSub/two\n      ./a TestSub\n",
		"testsummary: FAIL: package ./c: did not build (see the errors above)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, notWant := range []string{"=== RUN   TestPass", "hello", "PASS\n", "TestSub/three", "before"} {
		if strings.Contains(out, notWant) {
			t.Errorf("output has %q", notWant)
		}
	}
	// 2 failed tests + the package that did not build.
	if last := lastLine(out); last != "testsummary: 3 passed, 3 failed, 4 skipped" {
		t.Errorf("last line %q", last)
	}
	if s.Failed() != 3 {
		t.Errorf("Failed() = %d", s.Failed())
	}
}

func TestCIRejectsSkipsNotAllowed(t *testing.T) {
	allow := []AllowedSkip{
		{Package: "./b", Test: "TestPar", Message: "par skip", Reason: "test"},
		{Package: "./a", Test: "TestSub/*", Message: "sub skip", Reason: "test"},
	}
	out, ok, _ := sample(t, true, allow)
	t.Logf("output:\n%s", out)
	if ok {
		t.Error("Report passed in CI with skips not on the allow-list")
	}
	for _, want := range []string{
		"  no server here second line (a_test.go:6)  [FAIL: not allowed in CI]\n",
		"  sub skip 1 (a_test.go:8)\n",
		"testsummary: FAIL: 2 tests skipped in CI and are not on the allow-list",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// The 2 skips CI rejects count as failures.
	if last := lastLine(out); last != "testsummary: 3 passed, 5 failed, 2 skipped" {
		t.Errorf("last line %q", last)
	}
	all := append(allow, AllowedSkip{Package: "./a", Test: "TestSkip*", Message: "", Reason: "an empty message matches nothing"},
		AllowedSkip{Package: "./a", Test: "TestSkip", Message: "no server", Reason: "test"})
	if _, ok, _ := sample(t, true, all); ok {
		t.Error("an entry with an empty message allowed a skip")
	}
	all = append(all, AllowedSkip{Package: "./a", Test: "TestSkipNow", Message: "(no reason given)", Reason: "test"})
	if _, ok, _ := sample(t, true, all); ok {
		t.Error("a skip without a message matched an entry")
	}
}

func TestUnfinishedPackage(t *testing.T) {
	in := `{"Action":"start","Package":"m/x"}
{"Action":"run","Package":"m/x","Test":"TestHang"}
{"Action":"output","Package":"m/x","Test":"TestHang","Output":"=== RUN   TestHang\n"}
{"Action":"output","Package":"m/x","Test":"TestHang","Output":"    x_test.go:3: waiting\n"}
not json at all
`
	var out strings.Builder
	s := newSummary(&out, "m", false, nil)
	if err := s.Read(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	s.Finish()
	s.Report()
	t.Logf("output:\n%s", out.String())
	for _, want := range []string{"not json at all\n", "=== RUN   TestHang\n    x_test.go:3: waiting\n",
		"testsummary: FAIL: package ./x: go test ended before the package finished\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if last := lastLine(out.String()); last != "testsummary: 0 passed, 1 failed, 0 skipped" {
		t.Errorf("last line %q", last)
	}
}

// TestAllowList: every entry is complete and names a test function that
// exists in its package, so that entries do not outlive their tests.
func TestAllowList(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, a := range allowed {
		if a.Package == "" || a.Test == "" || a.Message == "" || strings.TrimSpace(a.Reason) == "" {
			t.Errorf("incomplete entry %+v: Package, Test, Message and Reason are required", a)
			continue
		}
		top, _, _ := strings.Cut(a.Test, "/")
		files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(a.Package), "*_test.go"))
		if len(files) == 0 {
			t.Errorf("entry %s %s: no test files in %s", a.Package, a.Test, a.Package)
			continue
		}
		if top == "*" {
			continue
		}
		re := regexp.MustCompile(`(?m)^func ` + strings.ReplaceAll(regexp.QuoteMeta(top), `\*`, `\w*`) + `\(t \*testing\.T\)`)
		found := false
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if re.Match(b) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("entry %s %s: no such test function in %s", a.Package, a.Test, a.Package)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"TestA", "TestA", true},
		{"TestA", "TestAB", false},
		{"TestA/*", "TestA/b/c", true},
		{"*", "TestA/b", true},
		{"Test.A", "TestxA", false},
	} {
		if got := globMatch(tc.pattern, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
}

func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, " FALSE ": false, "true": true, "1": true, "yes": true} {
		if got := inCI(v); got != want {
			t.Errorf("inCI(%q) = %v", v, got)
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestChattyPackage: the output of passed tests is dropped as the package
// goes (not kept until it ends), a test run twice (a TestMain that runs the
// suite again) is judged by its last run, and the failed one's output is
// printed whole.
func TestChattyPackage(t *testing.T) {
	var in strings.Builder
	ev := func(action, test, output string) {
		b, _ := json.Marshal(event{Action: action, Package: "m/x", Test: test, Output: output})
		in.Write(b)
		in.WriteByte('\n')
	}
	ev("start", "", "")
	for run := range 2 {
		for i := range 3000 {
			name := fmt.Sprintf("Test%d", i)
			ev("run", name, "")
			ev("output", name, "=== RUN   "+name+"\n")
			ev("output", name, "    x_test.go:1: chatter\n")
			if run == 1 && i == 7 {
				ev("output", name, "    x_test.go:2: broke on the second run\n")
				ev("output", name, "--- FAIL: "+name+" (0.00s)\n")
				ev("fail", name, "")
				continue
			}
			ev("output", name, "--- PASS: "+name+" (0.00s)\n")
			ev("pass", name, "")
		}
	}
	var out strings.Builder
	s := newSummary(&out, "m", false, nil)
	peak := 0
	for line := range strings.SplitSeq(in.String(), "\n") {
		if line == "" {
			continue
		}
		s.line([]byte(line + "\n"))
		if p := s.pkgs["m/x"]; p != nil && len(p.chunks) > peak {
			peak = len(p.chunks)
		}
	}
	s.line([]byte(`{"Action":"output","Package":"m/x","Output":"FAIL\n"}` + "\n"))
	s.line([]byte(`{"Action":"fail","Package":"m/x"}` + "\n"))
	s.Finish()
	s.Report()
	if peak > 2*4096+10 {
		t.Errorf("the package held up to %d output chunks", peak)
	}
	want := "=== RUN   Test7\n    x_test.go:1: chatter\n    x_test.go:2: broke on the second run\n--- FAIL: Test7 (0.00s)\nFAIL\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("output starts with %q, want %q", out.String()[:min(len(out.String()), 200)], want)
	}
	if last := lastLine(out.String()); last != "testsummary: 5999 passed, 1 failed, 0 skipped" {
		t.Errorf("last line %q", last)
	}
}
