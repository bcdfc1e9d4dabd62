package main

// The plugins documented: exactly those fluss-iggy adds to Benthos, the same
// list as the blank imports of cmd/fluss-iggy/main.go (TestPluginListMatchesBinary
// keeps the two in step). Benthos's own components are deliberately not
// imported, so every component registered in this program is one of ours.
import (
	_ "github.com/fluss-iggy/fluss-iggy/input/fluss"
	_ "github.com/fluss-iggy/fluss-iggy/input/iggy"
	_ "github.com/fluss-iggy/fluss-iggy/metrics/prometheus"
	_ "github.com/fluss-iggy/fluss-iggy/output/fluss"
	_ "github.com/fluss-iggy/fluss-iggy/output/iggy"
	_ "github.com/fluss-iggy/fluss-iggy/resources/bbolt"
	_ "github.com/fluss-iggy/fluss-iggy/resources/redis"
)
