package fluss

import (
	"context"
	"fmt"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
)

// location returns the cached location of a bucket (no request).
func (c *Client) location(b TableBucket) (bucketLocation, bool) {
	c.meta.mu.RLock()
	defer c.meta.mu.RUnlock()
	loc, ok := c.meta.buckets[b]
	return loc, ok
}

// leader returns the tablet server id leading bucket b. When the leader is not
// cached (or was invalidated) it refreshes the table's metadata (for a
// partitioned table, the partition's). A bucket still without an alive leader
// (a partition or table just created, a leader election under way) is asked
// again with the client's retry backoff, up to its attempt limit and within
// ctx; then Leader gives a LEADER_NOT_AVAILABLE error (retriable).
func (c *Client) leader(ctx context.Context, b TableBucket) (int32, error) {
	if id, ok := c.cachedLeader(b); ok {
		return id, nil
	}
	info, ok := c.tableByID(b.TableID)
	if !ok {
		return -1, fmt.Errorf("fluss: leader of %s: table id unknown to this client; load the table first", b)
	}
	for attempt := 0; ; attempt++ {
		// refreshLeaders retries transport and server errors itself; this
		// loop only waits for a leader to show up in good metadata.
		if err := c.refreshLeaders(ctx, info, b.PartitionID); err != nil {
			return -1, fmt.Errorf("fluss: leader of %s (%s): %w", b, info.Path, err)
		}
		if id, ok := c.cachedLeader(b); ok {
			return id, nil
		}
		noLeader := fmt.Errorf("fluss: leader of %s (%s): %w", b, info.Path,
			errcode.New(errcode.LeaderNotAvailable.Code, "no alive leader in the metadata"))
		if attempt+1 >= c.cfg.maxAttempts {
			return -1, noLeader
		}
		c.log.Debug("fluss waiting for a bucket leader", "bucket", b.String(), "table", info.Path.String(), "attempt", attempt+1)
		if err := wire.Sleep(ctx, c.cfg.backoff.Delay(attempt)); err != nil {
			return -1, fmt.Errorf("%w (last error: %w)", err, noLeader)
		}
	}
}

func (c *Client) cachedLeader(b TableBucket) (int32, bool) {
	c.meta.mu.RLock()
	defer c.meta.mu.RUnlock()
	loc, ok := c.meta.buckets[b]
	if !ok || loc.Leader < 0 {
		return -1, false
	}
	if _, alive := c.meta.tablets[loc.Leader]; !alive {
		return -1, false
	}
	return loc.Leader, true
}

// refreshLeaders reloads the leaders of a table, or of one of its partitions.
func (c *Client) refreshLeaders(ctx context.Context, info *TableInfo, partitionID int64) error {
	if partitionID == NoPartition {
		_, err := c.RefreshTable(ctx, info.Path)
		return err
	}
	return c.refreshPartitionLeaders(ctx, info, partitionID)
}

// refreshPartitionLeaders reloads the metadata (bucket leaders and counts)
// of the given partitions.
func (c *Client) refreshPartitionLeaders(ctx context.Context, info *TableInfo, partitionIDs ...int64) error {
	req := &pb.MetadataRequest{
		TablePath:    []*pb.PbTablePath{info.Path.pb()},
		PartitionsId: partitionIDs,
	}
	return c.retry(ctx, retriableRead, nil, func() error {
		conn, err := c.anyConn(ctx)
		if err != nil {
			return err
		}
		_, err = c.metadataFrom(ctx, conn, req)
		if err != nil {
			return fmt.Errorf("fluss: metadata of partitions %v of table %s: %w", partitionIDs, info.Path, err)
		}
		return nil
	})
}

// invalidateLeader drops the cached leader of one bucket; the next Leader call
// asks the cluster.
func (c *Client) invalidateLeader(b TableBucket) {
	c.meta.mu.Lock()
	delete(c.meta.buckets, b)
	c.meta.mu.Unlock()
}

// invalidateServer drops every cached leader on tablet server id (after its
// connection died).
func (c *Client) invalidateServer(id int32) {
	c.meta.mu.Lock()
	for b, loc := range c.meta.buckets {
		if loc.Leader == id {
			delete(c.meta.buckets, b)
		}
	}
	c.meta.mu.Unlock()
}
