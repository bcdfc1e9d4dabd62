package fluss

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Defaults of the fetch settings: the Java client's, but for the bytes per
// bucket (its 1 MiB makes a scan fetch half its batches twice; see
// FetchMaxBucketBytes).
const (
	DefaultFetchMaxBytes       = 16 << 20
	DefaultFetchMaxBucketBytes = 4 << 20
	DefaultFetchMinBytes       = 1
	DefaultFetchMaxWait        = 500 * time.Millisecond
)

type scanConfig struct {
	columns        []string
	maxBytes       int32
	maxBucketBytes int32
	minBytes       int32
	maxWait        time.Duration
	mem            memory.Allocator
	checkCRC       bool
	pushdown       bool
	remote         RemoteLogStorage
	maxBuffered    int
	onFetch        func(FetchInfo)
}

// ScanOption configures a Scanner.
type ScanOption func(*scanConfig)

// ScanColumns projects the scan to the named columns, in the given order.
// The projection is pushed down to the servers (they send only those
// columns) and applied locally where they cannot (remote log segments,
// batches written before a column was added).
func ScanColumns(names ...string) ScanOption {
	return func(c *scanConfig) { c.columns = append([]string(nil), names...) }
}

// FetchMaxBytes bounds the records bytes of one fetch response over all its
// buckets (default 16 MiB). A server always returns at least one whole
// batch, even a larger one.
func FetchMaxBytes(n int) ScanOption { return func(c *scanConfig) { c.maxBytes = clampInt32(n) } }

// FetchMaxBucketBytes bounds the records bytes per bucket of one fetch
// (default 4 MiB). A server cuts a response at the limit, inside a batch
// as a rule, and that partial batch is fetched again whole: the larger the
// limit against the batches, the fewer bytes cross twice (with 634 KB
// batches: 1.57x the stored bytes at 1 MiB, 1.1x at 4 MiB, and a fifth
// less scan CPU), for as much more response memory per bucket. A consumer
// that holds many times the fetched bytes while it works (the fluss input:
// one message per row) may prefer less.
func FetchMaxBucketBytes(n int) ScanOption {
	return func(c *scanConfig) { c.maxBucketBytes = clampInt32(n) }
}

// FetchMinBytes makes servers hold a fetch until this many bytes are
// available or FetchMaxWait passed (default 1: answer as soon as any data
// is there).
func FetchMinBytes(n int) ScanOption { return func(c *scanConfig) { c.minBytes = clampInt32(n) } }

// FetchMaxWait is how long a server may hold a fetch waiting for
// FetchMinBytes (default 500ms).
func FetchMaxWait(d time.Duration) ScanOption { return func(c *scanConfig) { c.maxWait = d } }

// ScanAllocator sets the allocator of the Arrow buffers a scan decompresses,
// copies or builds (a scan's batches never refer to the fetch responses,
// whose memory is reused). The default behaves as memory.DefaultAllocator
// and keeps the buffers of released batches (up to 64 MiB) for the next
// ones.
func ScanAllocator(mem memory.Allocator) ScanOption { return func(c *scanConfig) { c.mem = mem } }

// ScanCheckCRC turns the CRC-32C check of unprojected batches on or off
// (default on; projected batches are never checked, the server's
// projection invalidates the CRC).
func ScanCheckCRC(check bool) ScanOption { return func(c *scanConfig) { c.checkCRC = check } }

// ScanProjectionPushdown turns server-side projection on or off (default
// on). Off, servers send every column and the scanner drops the others.
func ScanProjectionPushdown(on bool) ScanOption { return func(c *scanConfig) { c.pushdown = on } }

// ScanRemoteStorage sets how remote (tiered) log segments are read. The
// default is the client's own RemoteStorage (see the Remote option): local
// paths, file: URIs and S3.
func ScanRemoteStorage(r RemoteLogStorage) ScanOption { return func(c *scanConfig) { c.remote = r } }

// ScanMaxBufferedFetches bounds the fetched responses per bucket that wait
// for Poll (default 1). With 1, a bucket is fetched again while the caller
// processes the previous response, and no further.
func ScanMaxBufferedFetches(n int) ScanOption { return func(c *scanConfig) { c.maxBuffered = n } }

// FetchInfo describes one FetchLog request of a scanner to a tablet server,
// as reported to a ScanFetchObserver.
type FetchInfo struct {
	// Server is the id of the tablet server (the leader of the buckets).
	Server int32
	// Buckets is the number of buckets the request asked for.
	Buckets int
	// Duration is the time from sending the request to receiving its
	// response (or failing). It includes the time the server held the
	// request waiting for FetchMinBytes, up to FetchMaxWait.
	Duration time.Duration
	// Bytes is the size of the response body (0 when Err is set).
	Bytes int
	// Err is the error of the request (connection, timeout, error
	// response), nil when a response was received. Errors of single
	// buckets inside a response are not reported here.
	Err error
}

// ScanFetchObserver sets a function called after every FetchLog request the
// scanner sends to a tablet server, with its latency and outcome (requests
// that could not be sent, because no connection could be made, are not
// reported). It is called from the scanner's fetch goroutines, concurrently
// for different servers: it must be safe for concurrent use and return
// quickly.
func ScanFetchObserver(f func(FetchInfo)) ScanOption {
	return func(c *scanConfig) { c.onFetch = f }
}

func clampInt32(n int) int32 {
	if n > 1<<31-1 {
		return 1<<31 - 1
	}
	return int32(n)
}
