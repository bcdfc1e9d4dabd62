//go:build !unix

package flusscmd

import "time"

// processCPU is -1: this system's CPU time is not read.
func processCPU() time.Duration { return -1 }
