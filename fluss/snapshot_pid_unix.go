//go:build unix

package fluss

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists (it may belong to another
// user: EPERM counts as alive).
func processAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
