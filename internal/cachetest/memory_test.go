package cachetest_test

import (
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/internal/cachetest"

	_ "github.com/redpanda-data/benthos/v4/public/components/pure"
)

// TestMemoryContract runs the contract against Benthos's own memory cache, the
// reference for the semantics the project's caches must match. Its known
// departures are listed in the options.
func TestMemoryContract(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) service.Cache {
		// A compaction interval shorter than the suite's TTL, so expired
		// keys do not linger; default_ttl as in a typical config.
		return cachetest.FromYAML(t, "memory:\n  default_ttl: 5m\n  compaction_interval: 50ms\n")
	}, cachetest.Options{
		AddIgnoresExpiry: true,
		SharesValues:     true,
		IgnoresContext:   true,
	})
}
