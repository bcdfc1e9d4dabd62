package flussout_test

import (
	"testing"

	"github.com/fluss-iggy/fluss-iggy/internal/flusstest"
)

func TestMain(m *testing.M) { flusstest.Main(m) }
