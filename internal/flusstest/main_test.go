package flusstest

import "testing"

// TestMain gives the package's tests (this file's and smoke_test.go's) the
// shared cluster and stops it at the end.
func TestMain(m *testing.M) { Main(m) }
