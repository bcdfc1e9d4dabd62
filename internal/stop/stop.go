// Package stop lets a plugin end the whole process for an error that no
// retry can cure (a server whose protocol we do not speak, messages left
// undelivered at shutdown), with a non-zero exit code and the reason, and
// lets the binary ask, when a shutdown drags on, which component is stuck.
//
// The binary installs a function that starts a graceful shutdown (it sends
// itself SIGTERM); plugins call Fail. Without an installed function (in
// tests) Fail only records the error.
package stop

import (
	"sort"
	"sync"
)

var (
	mu        sync.Mutex
	cancel    func()
	first     error
	reporters = map[*int]func() string{}
)

// Watch registers a function that says why its component cannot finish
// (for example "Iggy at … has been unreachable for 9s; 3 messages were not
// delivered"), or "" when it can. The returned function unregisters it.
func Watch(report func() string) (unwatch func()) {
	key := new(int)
	mu.Lock()
	reporters[key] = report
	mu.Unlock()
	return func() {
		mu.Lock()
		delete(reporters, key)
		mu.Unlock()
	}
}

// Stuck returns what every watched component that cannot finish says.
func Stuck() []string {
	mu.Lock()
	fns := make([]func() string, 0, len(reporters))
	for _, f := range reporters {
		fns = append(fns, f)
	}
	mu.Unlock()
	var out []string
	for _, f := range fns {
		if s := f(); s != "" {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// Install sets the function Fail calls to stop the process's pipeline.
func Install(c func()) {
	mu.Lock()
	defer mu.Unlock()
	cancel = c
}

// Fail records err (the first one counts) and stops the pipeline.
func Fail(err error) {
	mu.Lock()
	if first == nil {
		first = err
	}
	c := cancel
	mu.Unlock()
	if c != nil {
		c()
	}
}

// Err returns the first error given to Fail, or nil.
func Err() error {
	mu.Lock()
	defer mu.Unlock()
	return first
}

// Reset forgets the recorded error and the installed function; for tests.
func Reset() {
	mu.Lock()
	defer mu.Unlock()
	first, cancel = nil, nil
}
