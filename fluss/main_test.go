package fluss

import (
	"testing"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

// TestMain runs the package's tests and stops the shared Fluss cluster the
// integration tests may have started. (One TestMain per package: other test
// files of package fluss share this one.)
func TestMain(m *testing.M) { flusstest.Main(m) }
