//go:build unix

package flusscmd

import (
	"syscall"
	"time"
)

// processCPU is the user+system CPU time of this process so far, -1 if the
// system does not say.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
