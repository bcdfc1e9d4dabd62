// Command testsummary runs `go test -json` and prints what plain `go test`
// prints (an ok or FAIL line per package, the output of failed tests, build
// errors), then every skipped test with the reason it gave, and last a count
// line that CI reads:
//
//	testsummary: 1234 passed, 0 failed, 12 skipped
//
// The counts are of tests and subtests; a package that failed without a
// failed test (a build error, a crash outside a test, a timeout) counts as
// one failure, and so does a failed -then command.
//
// When the environment variable CI is set (to anything but "", "0" or
// "false"), a skipped test fails the run unless allowlist.go names it with a
// reason: CI must run every test that does not by design need something CI
// lacks. Outside CI the skips are listed, and those CI would reject are
// marked.
//
// Usage (from the module's root):
//
//	go run ./internal/testsummary [-go GO] [-then COMMAND] [--] [go test flags] [packages]
//
// -then runs COMMAND (with sh -c) after the tests passed, before the
// summary, so that the summary stays the last thing printed (`make test`
// runs `make fuzz` so). The exit code is 0 only when go test, the -then
// command and the skip check all passed. Prefer a built binary to `go run`
// in scripts: `go run` adds "exit status 1" after the last line.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := flag.NewFlagSet("testsummary", flag.ContinueOnError)
	goBin := fs.String("go", envOr("GO", "go"), "the go command")
	then := fs.String("then", "", "shell command to run after the tests passed (e.g. `make fuzz`)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: testsummary [-go GO] [-then COMMAND] [--] [go test flags] [packages]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}

	ci := inCI(os.Getenv("CI"))
	s := newSummary(os.Stdout, modulePath(), ci, allowed)

	cmd := exec.Command(*goBin, append([]string{"test", "-json"}, fs.Args()...)...)
	cmd.Stderr = os.Stderr
	cmd.Stdin = os.Stdin
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		return 2
	}
	// Ctrl-C reaches go test through the process group; forward what is sent
	// to us alone, and stay alive to print the summary of what ran.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		return 2
	}
	go func() {
		for sig := range sigs {
			_ = cmd.Process.Signal(sig)
		}
	}()
	readErr := s.Read(stdout)
	waitErr := cmd.Wait()
	if readErr != nil {
		fmt.Fprintf(os.Stderr, "testsummary: reading go test's output: %v\n", readErr)
	}
	s.Finish()

	ok := waitErr == nil && readErr == nil && s.Failed() == 0
	if !ok && s.Failed() == 0 {
		// go test failed without a test or package to blame (e.g. a bad flag,
		// a package pattern that matches nothing): count that too.
		why := "go test failed"
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			why = fmt.Sprintf("go test exited with status %d", ee.ExitCode())
		} else if waitErr != nil {
			why = "go test: " + waitErr.Error()
		}
		s.AddFailure(why + " (see its output above)")
	}
	if ok && *then != "" {
		fmt.Printf("testsummary: tests done; running %s\n", *then)
		sh := exec.Command("sh", "-c", *then)
		sh.Stdin, sh.Stdout, sh.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := sh.Run(); err != nil {
			s.AddFailure(fmt.Sprintf("%s failed: %v", *then, err))
			ok = false
		}
	}
	if !s.Report() {
		ok = false
	}
	if !ok {
		return 1
	}
	return 0
}

// inCI reads the CI variable as internal/flusstest.InCI does.
func inCI(v string) bool {
	v = strings.TrimSpace(strings.ToLower(v))
	return v != "" && v != "0" && v != "false"
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// modulePath is the module path in ./go.mod, or "" (then packages are shown
// by their full import path).
func modulePath() string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
