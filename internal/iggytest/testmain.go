package iggytest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// DialectEnv picks the test server's dialect in one run of a suite that
// MainEveryDialect runs.
const DialectEnv = "IGGYTEST_VERSION"

// SuiteVersion is the dialect of this run of the suite: 0.8, or 0.9 when
// DialectEnv says so.
func SuiteVersion() Version {
	if os.Getenv(DialectEnv) == "0.9" {
		return Version09
	}
	return Version08
}

// MainEveryDialect is a TestMain body: it runs the suite (against the test
// server speaking 0.8) and, when that passed, runs the test binary again
// with the server speaking 0.9. It runs once when DialectEnv is set, when
// IGGY_TCP_ADDRESS names a real server, and when the run lists tests,
// fuzzes or benchmarks. It exits with the runs' code.
func MainEveryDialect(m *testing.M) {
	code := m.Run()
	if os.Getenv(DialectEnv) != "" || os.Getenv("IGGY_TCP_ADDRESS") != "" || code != 0 || !runsTests() {
		os.Exit(code)
	}
	fmt.Println("=== the suite again, with the test server speaking Iggy 0.9")
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), DialectEnv+"=0.9")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// runsTests tells whether this run runs tests, as opposed to listing them,
// fuzzing or benchmarking, which the second run would only repeat.
func runsTests() bool {
	for _, f := range []string{"test.list", "test.fuzz", "test.bench"} {
		if fl := flag.Lookup(f); fl != nil && fl.Value.String() != "" {
			return false
		}
	}
	return true
}
