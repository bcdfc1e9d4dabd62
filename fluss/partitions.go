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

// Partitions lists the partitions of a partitioned table (ordered by id) and
// updates the cache. Call it periodically to discover partitions created
// later.
func (c *Client) Partitions(ctx context.Context, info *TableInfo) ([]PartitionInfo, error) {
	if !info.IsPartitioned() {
		return nil, fmt.Errorf("fluss: table %s: %w", info.Path, errcode.New(errcode.TableNotPartitioned.Code, ""))
	}
	var resp pb.ListPartitionInfosResponse
	if err := c.callAny(ctx, wire.ListPartitionInfos, &pb.ListPartitionInfosRequest{TablePath: info.Path.pb()}, &resp); err != nil {
		return nil, fmt.Errorf("fluss: partitions of table %s: %w", info.Path, err)
	}
	out := make([]PartitionInfo, 0, len(resp.GetPartitionsInfo()))
	for _, p := range resp.GetPartitionsInfo() {
		out = append(out, partitionFromPB(info, p))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })

	c.meta.mu.Lock()
	parts := make(map[int64]PartitionInfo, len(out))
	for k := range c.meta.partByName {
		if k.tableID == info.TableID {
			delete(c.meta.partByName, k)
		}
	}
	for _, p := range out {
		parts[p.ID] = p
		c.meta.partByName[partitionKey{info.TableID, p.Name}] = p.ID
	}
	for _, p := range resp.GetPartitionsInfo() {
		c.meta.putBucketCountLocked(info.TableID, p.GetPartitionId(), p.GetBucketCount(), 0)
	}
	old := c.meta.partByID[info.TableID]
	c.meta.partByID[info.TableID] = parts
	for pid := range old {
		if _, ok := parts[pid]; !ok {
			c.meta.forgetPartitionLocked(info.TableID, pid)
		}
	}
	c.meta.mu.Unlock()
	return out, nil
}

// NumBuckets returns the bucket count of one partition of a partitioned
// table, or of a non-partitioned table (partitionID NoPartition). On Fluss
// 1.0 partitions created before the table's bucket.num was altered keep
// their count; the count is what the partition's metadata or listing
// reports (bucket_count, else the buckets its metadata lists), else the
// table's (servers before 1.0 report none: every partition has the
// table's count). Counts are cached (they never change): the first call
// for a partition may ask the cluster for its metadata, which fails for a
// partition that does not exist.
func (c *Client) NumBuckets(ctx context.Context, info *TableInfo, partitionID int64) (int32, error) {
	if partitionID == NoPartition {
		return info.NumBuckets, nil
	}
	if n, ok := c.meta.bucketCount(info.TableID, partitionID); ok {
		return n, nil
	}
	if err := c.refreshPartitionLeaders(ctx, info, partitionID); err != nil {
		return 0, err
	}
	if n, ok := c.meta.bucketCount(info.TableID, partitionID); ok {
		return n, nil
	}
	return info.NumBuckets, nil
}

// checkBuckets checks the partition and buckets of a call on the buckets
// of one partition of info (partitionID NoPartition for non-partitioned
// tables) and returns the buckets, every bucket of the partition for nil,
// and the partition's bucket count. Its errors name neither the call nor
// the table (the caller says both).
func (c *Client) checkBuckets(ctx context.Context, info *TableInfo, partitionID int64, buckets []int32) ([]int32, int32, error) {
	if info.IsPartitioned() != (partitionID != NoPartition) {
		if info.IsPartitioned() {
			return nil, 0, errors.New("the table is partitioned; name a partition")
		}
		return nil, 0, fmt.Errorf("use NoPartition: %w", errcode.New(errcode.TableNotPartitioned.Code, ""))
	}
	n, err := c.NumBuckets(ctx, info, partitionID)
	if err != nil {
		return nil, 0, err
	}
	if buckets == nil {
		buckets = make([]int32, n)
		for i := range buckets {
			buckets[i] = int32(i)
		}
	}
	for _, b := range buckets {
		if b < 0 || b >= n {
			if partitionID == NoPartition {
				return nil, 0, fmt.Errorf("bucket %d out of range [0, %d)", b, n)
			}
			return nil, 0, fmt.Errorf("partition %d: bucket %d out of range [0, %d)", partitionID, b, n)
		}
	}
	return buckets, n, nil
}

func partitionFromPB(info *TableInfo, p *pb.PbPartitionInfo) PartitionInfo {
	kvs := p.GetPartitionSpec().GetPartitionKeyValues()
	byKey := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		byKey[kv.GetKey()] = kv.GetValue()
	}
	spec := make([]KeyValue, 0, len(kvs))
	vals := make([]string, 0, len(kvs))
	// Partition-key order, as Fluss builds partition names.
	for _, k := range info.PartitionKeys {
		if v, ok := byKey[k]; ok {
			spec = append(spec, KeyValue{Key: k, Value: v})
			vals = append(vals, v)
			delete(byKey, k)
		}
	}
	for _, kv := range kvs { // keys the table info does not know (should not happen)
		if v, ok := byKey[kv.GetKey()]; ok {
			spec = append(spec, KeyValue{Key: kv.GetKey(), Value: v})
			vals = append(vals, v)
		}
	}
	return PartitionInfo{ID: p.GetPartitionId(), Name: strings.Join(vals, "$"), Spec: spec}
}

// PartitionByName returns a partition of the table by name, listing the
// partitions when it is not cached. A missing partition gives
// PARTITION_NOT_EXISTS.
func (c *Client) PartitionByName(ctx context.Context, info *TableInfo, name string) (PartitionInfo, error) {
	lookup := func() (PartitionInfo, bool) {
		c.meta.mu.RLock()
		defer c.meta.mu.RUnlock()
		pid, ok := c.meta.partByName[partitionKey{info.TableID, name}]
		if !ok {
			return PartitionInfo{}, false
		}
		p, ok := c.meta.partByID[info.TableID][pid]
		return p, ok
	}
	if p, ok := lookup(); ok {
		return p, nil
	}
	if _, err := c.Partitions(ctx, info); err != nil {
		return PartitionInfo{}, err
	}
	if p, ok := lookup(); ok {
		return p, nil
	}
	return PartitionInfo{}, fmt.Errorf("fluss: partition %q of table %s: %w", name, info.Path, errcode.New(errcode.PartitionNotExists.Code, ""))
}

// partitionByID returns a cached partition (no request).
func (c *Client) partitionByID(tableID, partitionID int64) (PartitionInfo, bool) {
	c.meta.mu.RLock()
	defer c.meta.mu.RUnlock()
	p, ok := c.meta.partByID[tableID][partitionID]
	return p, ok
}
