package flussout_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// tabletPids are the process ids in $FLUSS_CLUSTER_DIR/pids/tablet-*.pid
// (scripts/fluss-cluster.sh writes them): the tablet servers of a cluster
// on this machine. None when the variable is unset.
func tabletPids() []int {
	dir := os.Getenv("FLUSS_CLUSTER_DIR")
	if dir == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "pids", "tablet-*.pid"))
	var pids []int
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// procCPU is the user + system CPU process pid has used, from
// /proc/PID/stat (fields 14 and 15, after the parenthesised command).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command field in %q", pid, s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
	}
	var ticks int64
	for _, x := range f[11:13] {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: CPU time %q: %w", pid, x, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// serverCPU is the CPU the tablet servers have used, and whether it is
// known (a local cluster named by FLUSS_CLUSTER_DIR whose processes exist).
func serverCPU() (time.Duration, bool) {
	pids := tabletPids()
	var sum time.Duration
	for _, pid := range pids {
		d, err := procCPU(pid)
		if err != nil {
			return 0, false
		}
		sum += d
	}
	return sum, len(pids) > 0
}

// withServerCPU runs f and adds to its measurement the tablet servers' CPU
// over the run (-1 when unknown).
func withServerCPU(f func() (measured, error)) (measured, error) {
	s0, ok0 := serverCPU()
	m, err := f()
	s1, ok1 := serverCPU()
	m.server = -1
	if ok0 && ok1 {
		m.server = s1 - s0
	}
	return m, err
}
