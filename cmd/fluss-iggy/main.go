// Command fluss-iggy is a Benthos distribution that moves data from Apache
// Fluss into Apache Iggy.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"
	"github.com/urfave/cli/v2"

	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/flusscmd"
	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/iggycmd"
	"github.com/fluss-iggy/fluss-iggy/internal/stop"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	_ "github.com/fluss-iggy/fluss-iggy/input/fluss"
	_ "github.com/fluss-iggy/fluss-iggy/input/iggy"
	_ "github.com/fluss-iggy/fluss-iggy/metrics/prometheus"
	_ "github.com/fluss-iggy/fluss-iggy/output/fluss"
	_ "github.com/fluss-iggy/fluss-iggy/output/iggy"
	_ "github.com/fluss-iggy/fluss-iggy/resources/bbolt"
	_ "github.com/fluss-iggy/fluss-iggy/resources/redis"
)

// Set at build time with -ldflags "-X main.Version=... -X main.DateBuilt=...".
var (
	Version   = "dev"
	DateBuilt = "unknown"
)

// stuckGrace is how long a shutdown may wait on a component that cannot
// finish (Iggy unreachable) before the process gives up on it.
const stuckGrace = 3 * time.Second

func main() {
	ctx := context.Background()
	// A plugin that stops the process asks for a graceful shutdown, as
	// Ctrl-C does; cancelling ctx would make Benthos force its components
	// down and warn of duplicates that cannot happen here.
	stop.Install(func() { _ = syscall.Kill(os.Getpid(), syscall.SIGTERM) })
	go exitWhenStuck()
	installHelp()
	opts := append(cliOptions(), service.CLIOptAddCommand(createCommand(benthosCreate)))
	code, err := service.RunCLIToCode(ctx, append(opts, newHTTPCheck().cliOptions()...)...)
	if err != nil {
		// Errors Benthos has not printed itself (`create kafka//file`:
		// "generate error: unrecognised input type").
		fmt.Fprintf(os.Stderr, "fluss-iggy: %v\n", err)
	}
	if err := stop.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "fluss-iggy: stopped: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// cliOptions are the options of the Benthos CLI without our create.
func cliOptions() []service.CLIOptFunc {
	return []service.CLIOptFunc{
		service.CLIOptSetProductName("fluss-iggy"),
		service.CLIOptSetBinaryName("fluss-iggy"),
		service.CLIOptSetVersion(Version, DateBuilt),
		service.CLIOptAddCommand(flusscmd.Command()),
		service.CLIOptAddCommand(iggycmd.Command()),
	}
}

// benthosCreate runs Benthos's own `create` with the process's arguments,
// for expressions that name none of our components.
func benthosCreate(ctx context.Context) error {
	code, err := service.RunCLIToCode(ctx, append(cliOptions(), service.CLIOptSetArgs(os.Args...))...)
	if err != nil {
		return err
	}
	if code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

// exitWhenStuck waits for SIGINT or SIGTERM (Benthos handles them too and
// starts its shutdown); if a component still cannot finish stuckGrace
// later, Benthos would wait out its whole shutdown_timeout for it, so the
// process says why and exits non-zero. Nothing unacknowledged was
// committed by the input, so nothing is lost: it is read again next time.
func exitWhenStuck() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	time.Sleep(stuckGrace)
	if err := stop.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "fluss-iggy: stopped: %v\n", err)
		os.Exit(1)
	}
	if stuck := stop.Stuck(); len(stuck) > 0 {
		fmt.Fprintf(os.Stderr, "fluss-iggy: stopped: %s\n", strings.Join(stuck, "; "))
		os.Exit(1)
	}
}
