// Package containertest builds the fluss-iggy container image from the
// repository's Dockerfile with podman (through scripts/container-test.sh,
// which makes the base images locally, since these machines reach no
// registry) and runs commands in it, for tests.
//
// The tests are heavy (the first build compiles the whole binary inside the
// builder image), so they run only when asked:
//
//	FLUSS_IGGY_CONTAINER_TEST=1  run them (they fail, never skip, when something is missing)
//	FLUSS_IGGY_CONTAINER_TEST=0  skip them, even in CI
//	unset                        run them when CI is set, skip them otherwise
package containertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// EnvVar turns the container tests on (1) or off (0).
const EnvVar = "FLUSS_IGGY_CONTAINER_TEST"

// ImageName is the tag the tests build.
const ImageName = "localhost/fluss-iggy:test"

// Enabled reports whether the container tests should run, and why.
func Enabled() (bool, string) {
	switch v := os.Getenv(EnvVar); v {
	case "1", "true":
		return true, EnvVar + "=" + v
	case "0", "false":
		return false, EnvVar + "=" + v
	case "":
		if os.Getenv("CI") != "" {
			return true, "CI is set"
		}
		return false, "set " + EnvVar + "=1 to build and run the container image (takes minutes)"
	default:
		return false, fmt.Sprintf("%s=%q is neither 1 nor 0", EnvVar, v)
	}
}

// Require skips t unless the container tests are enabled.
func Require(t testing.TB) {
	t.Helper()
	if ok, why := Enabled(); !ok {
		t.Skip(why)
	}
}

// RepoRoot is the repository's root directory.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("cannot locate the containertest package's source")
	}
	return filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Image is a built image.
type Image struct {
	// Name is the image's tag.
	Name string
	// BuildTime is how long the build took.
	BuildTime time.Duration
	repo      string
}

var (
	buildOnce sync.Once
	built     *Image
	buildErr  error
)

// Build builds the image once per test process (later calls return the same
// image) and fails t when the build fails.
func Build(t testing.TB) *Image {
	t.Helper()
	Require(t)
	buildOnce.Do(func() {
		repo, err := RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		start := time.Now()
		out, err := script(ctx, repo, "build")
		if err != nil {
			buildErr = fmt.Errorf("scripts/container-test.sh build: %w\n%s", err, tail(out, 60))
			return
		}
		built = &Image{Name: ImageName, BuildTime: time.Since(start), repo: repo}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	t.Logf("image %s built in %s", built.Name, built.BuildTime.Round(time.Second))
	return built
}

// Result is what a command in a container printed and how it ended.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
}

// Run runs the image with args (after the entrypoint `fluss-iggy`) on the
// host network, with podmanFlags (volumes, environment, ...) added to
// `podman run`. A non-zero exit is reported in the Result, not as an error;
// the error is for failures to run at all, or ctx ending.
func (im *Image) Run(ctx context.Context, podmanFlags []string, args ...string) (Result, error) {
	podmanArgs := append([]string{"podman", "run", "--rm", "--network=host"}, podmanFlags...)
	podmanArgs = append(podmanArgs, im.Name)
	podmanArgs = append(podmanArgs, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(im.repo, "scripts", "container-test.sh"), podmanArgs...)
	cmd.Env = append(os.Environ(), "IMAGE="+im.Name)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok && ctx.Err() == nil {
		res.ExitCode = ee.ExitCode()
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("podman run %s %s: %w\n%s", im.Name, strings.Join(args, " "), err, tail(res.Stderr, 40))
	}
	return res, nil
}

// Podman runs a podman command with this machine's settings and returns its
// standard output.
func (im *Image) Podman(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(im.repo, "scripts", "container-test.sh"), append([]string{"podman"}, args...)...)
	cmd.Env = append(os.Environ(), "IMAGE="+im.Name)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("podman %s: %w\n%s", strings.Join(args, " "), err, tail(stderr.String(), 40))
	}
	return stdout.String(), nil
}

// script runs scripts/container-test.sh and returns its combined output.
func script(ctx context.Context, repo string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts", "container-test.sh"), args...)
	cmd.Env = append(os.Environ(), "IMAGE="+ImageName)
	cmd.Dir = repo
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
