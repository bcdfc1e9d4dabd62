package fluss

import (
	"context"
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
	old := c.meta.partByID[info.TableID]
	c.meta.partByID[info.TableID] = parts
	// Forget leaders of partitions that are gone.
	for pid := range old {
		if _, ok := parts[pid]; !ok {
			for b := range c.meta.buckets {
				if b.TableID == info.TableID && b.PartitionID == pid {
					delete(c.meta.buckets, b)
				}
			}
		}
	}
	c.meta.mu.Unlock()
	return out, nil
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
