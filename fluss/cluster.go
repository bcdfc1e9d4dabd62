package fluss

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// staleMetadataError reports metadata without tablet servers: the cluster is
// still starting. It is retriable.
type staleMetadataError struct{ msg string }

func (e *staleMetadataError) Error() string   { return "fluss: " + e.msg }
func (e *staleMetadataError) Retriable() bool { return true }

func (c *Client) metadataFrom(ctx context.Context, conn *wire.Conn, req *pb.MetadataRequest) ([]*TableInfo, error) {
	var resp pb.MetadataResponse
	if err := conn.Call(ctx, wire.GetMetadata, req, &resp); err != nil {
		return nil, err
	}
	infos, err := c.meta.apply(&resp)
	if err != nil {
		return nil, err
	}
	if len(resp.GetTabletServers()) == 0 {
		return infos, &staleMetadataError{msg: "metadata from " + conn.Addr() + " lists no alive tablet server"}
	}
	return infos, nil
}

// bootstrapCluster asks the bootstrap servers for cluster metadata: up to
// three rounds over the list (redials are spaced by the connection backoff).
// An address that is not a Fluss server is given up after one try.
func (c *Client) bootstrapCluster(ctx context.Context) error {
	failed := &serversError{what: "no bootstrap server answered"}
	given := map[string]bool{} // addresses whose error retrying cannot cure
	for round := 0; round < 3 && len(given) < len(c.cfg.bootstrap); round++ {
		for _, addr := range c.cfg.bootstrap {
			if given[addr] {
				continue
			}
			conn, err := c.conn(ctx, addr)
			// A Fluss server answers its first request at once, even
			// while it starts: an address the user gave that does not
			// is another kind of server.
			err = wire.NotFlussIfUnanswered(err)
			if err == nil {
				if _, err = c.metadataFrom(ctx, conn, &pb.MetadataRequest{}); err == nil {
					return nil
				}
			}
			if ctx.Err() != nil {
				failed.ctxErr = ctx.Err()
				if !errors.Is(err, ctx.Err()) {
					failed.add(addr, err)
				}
				return failed
			}
			failed.add(addr, err)
			if !errcode.IsRetriable(err) {
				given[addr] = true
			}
		}
		var stale *staleMetadataError
		if errors.As(failed.last, &stale) {
			if err := wire.Sleep(ctx, c.cfg.backoff.Delay(round)); err != nil {
				failed.ctxErr = err
				return failed
			}
		}
	}
	return failed
}

// serversError is the failure of a request that tried several servers: the
// last error of each server, each said once, on one line.
type serversError struct {
	what   string // "no bootstrap server answered"
	ctxErr error  // set when the caller's context ended first
	addrs  []string
	errs   map[string]error
	last   error
}

// add records the latest error of addr.
func (e *serversError) add(addr string, err error) {
	if err == nil {
		return
	}
	if e.errs == nil {
		e.errs = map[string]error{}
	}
	if _, ok := e.errs[addr]; !ok {
		e.addrs = append(e.addrs, addr)
	}
	e.errs[addr] = err
	e.last = err
}

// Error implements error: "fluss: WHAT: cause; cause" (the causes name
// their server).
func (e *serversError) Error() string {
	var b strings.Builder
	b.WriteString("fluss: ")
	b.WriteString(e.what)
	if e.ctxErr != nil {
		fmt.Fprintf(&b, " (%v)", e.ctxErr)
	}
	seen := map[string]bool{}
	sep := ": "
	for _, addr := range e.addrs {
		msg := strings.TrimPrefix(e.errs[addr].Error(), "fluss: ")
		if seen[msg] {
			continue
		}
		seen[msg] = true
		b.WriteString(sep)
		b.WriteString(msg)
		sep = "; "
	}
	return b.String()
}

// Unwrap returns the context's error (when it ended) and every server's.
func (e *serversError) Unwrap() []error {
	var out []error
	if e.ctxErr != nil {
		out = append(out, e.ctxErr)
	}
	for _, addr := range e.addrs {
		out = append(out, e.errs[addr])
	}
	return out
}

// Retriable reports whether trying again may succeed: the context did not
// end and some server failed for a passing reason.
func (e *serversError) Retriable() bool {
	if e.ctxErr != nil {
		return false
	}
	for _, err := range e.errs {
		if errcode.IsRetriable(err) {
			return true
		}
	}
	return false
}

// refreshCluster reloads the coordinator and the alive tablet servers.
func (c *Client) refreshCluster(ctx context.Context) error {
	return c.retry(ctx, retriableRead, nil, func() error {
		conn, err := c.anyConn(ctx)
		if err != nil {
			return err
		}
		_, err = c.metadataFrom(ctx, conn, &pb.MetadataRequest{})
		return err
	})
}

// cluster returns the servers as last seen (no request).
func (c *Client) cluster() Cluster {
	c.meta.mu.RLock()
	defer c.meta.mu.RUnlock()
	var out Cluster
	if c.meta.coordinator != nil {
		n := *c.meta.coordinator
		out.Coordinator = &n
	}
	for _, n := range c.meta.tablets {
		out.TabletServers = append(out.TabletServers, n)
	}
	sort.Slice(out.TabletServers, func(i, j int) bool { return out.TabletServers[i].ID < out.TabletServers[j].ID })
	return out
}
