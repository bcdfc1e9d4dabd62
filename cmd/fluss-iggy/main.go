// Command fluss-iggy is a Benthos distribution that moves data from Apache
// Fluss into Apache Iggy.
package main

import (
	"context"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/cmd/fluss-iggy/flusscmd"

	_ "github.com/redpanda-data/benthos/v4/public/components/io"
	_ "github.com/redpanda-data/benthos/v4/public/components/pure"

	_ "github.com/fluss-iggy/fluss-iggy/input/fluss"
	_ "github.com/fluss-iggy/fluss-iggy/metrics/prometheus"
	_ "github.com/fluss-iggy/fluss-iggy/output/iggy"
	_ "github.com/fluss-iggy/fluss-iggy/resources/bbolt"
	_ "github.com/fluss-iggy/fluss-iggy/resources/redis"
)

// Set at build time with -ldflags "-X main.Version=... -X main.DateBuilt=...".
var (
	Version   = "dev"
	DateBuilt = "unknown"
)

func main() {
	service.RunCLI(context.Background(),
		service.CLIOptSetProductName("fluss-iggy"),
		service.CLIOptSetBinaryName("fluss-iggy"),
		service.CLIOptSetVersion(Version, DateBuilt),
		service.CLIOptAddCommand(flusscmd.Command()),
	)
}
