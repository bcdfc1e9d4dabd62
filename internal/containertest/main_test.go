package containertest

import (
	"testing"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestMain stops the Fluss cluster a test may have started.
func TestMain(m *testing.M) { flusstest.Main(m) }
