package flusstest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// javaTimeout bounds one run of the Java fixture tool.
const javaTimeout = 10 * time.Minute

// RunJava runs the Java fixture tool, scripts/fluss-java.sh COMMAND ARGS...,
// against the shared cluster (see [Require]) and returns its stdout. The
// cluster's address reaches the tool as FLUSS_BOOTSTRAP in its environment,
// so args need no --bootstrap. A failure of the tool fails the test with the
// tool's stderr.
func RunJava(t testing.TB, args ...string) string {
	t.Helper()
	addr := Require(t)
	return RunJavaEnv(t, []string{EnvBootstrap + "=" + addr}, args...)
}

// RunJava runs the Java fixture tool against this cluster, as the package
// function RunJava does for the shared one, with the client of the
// cluster's release (FLUSS_VERSION). For a SASL cluster the tool also gets
// FLUSS_SASL_USERNAME and FLUSS_SASL_PASSWORD in its environment.
func (c *Cluster) RunJava(t testing.TB, args ...string) string {
	t.Helper()
	env := []string{EnvBootstrap + "=" + c.Bootstrap}
	if c.Version != "" {
		env = append(env, EnvVersion+"="+c.Version)
	}
	if c.Username != "" {
		env = append(env, "FLUSS_SASL_USERNAME="+c.Username, "FLUSS_SASL_PASSWORD="+c.Password)
	}
	return RunJavaEnv(t, env, args...)
}

// RunJavaEnv runs scripts/fluss-java.sh with args and extra environment
// entries (KEY=VALUE, added to the test's own environment) and returns its
// stdout, failing the test with the tool's stderr if it exits non-zero.
func RunJavaEnv(t testing.TB, env []string, args ...string) string {
	t.Helper()
	if err := checkTools(); err != nil {
		failOrSkip(t, err)
	}
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("flusstest: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), javaTimeout)
	defer cancel()
	script := filepath.Join(root, "scripts", "fluss-java.sh")
	cmd := exec.CommandContext(ctx, "bash", append([]string{script}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %s: %w", javaTimeout, err)
		}
		t.Fatalf("flusstest: fluss-java.sh %s: %v\nstderr:\n%s", strings.Join(args, " "), err, tailString(stderr.String(), 60))
	}
	t.Logf("flusstest: fluss-java.sh %s took %s", strings.Join(args, " "), time.Since(start).Round(10*time.Millisecond))
	return stdout.String()
}

// tailString returns the last n lines of s.
func tailString(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[... %d lines cut ...]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
