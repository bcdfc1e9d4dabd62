package fluss

import (
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

type schemaKey struct {
	tableID  int64
	schemaID int32
}

type schemaEntry struct {
	schema *types.Schema
	arrow  *arrow.Schema
}

type partitionKey struct {
	tableID int64
	name    string
}

// partitionRef is one partition of one table, by id.
type partitionRef struct {
	tableID     int64
	partitionID int64
}

type metadataCache struct {
	mu          sync.RWMutex
	coordinator *ServerNode
	tablets     map[int32]ServerNode
	tables      map[TablePath]*TableInfo
	byID        map[int64]*TableInfo
	buckets     map[TableBucket]bucketLocation
	partByID    map[int64]map[int64]PartitionInfo // table id -> partition id -> info
	partByName  map[partitionKey]int64
	// partBuckets holds the bucket counts partitions reported of their own
	// (reportedBucketCount); a partition's count never changes.
	partBuckets map[partitionRef]int32
	schemas     map[schemaKey]*schemaEntry
}

func (m *metadataCache) init() {
	m.tablets = map[int32]ServerNode{}
	m.tables = map[TablePath]*TableInfo{}
	m.byID = map[int64]*TableInfo{}
	m.buckets = map[TableBucket]bucketLocation{}
	m.partByID = map[int64]map[int64]PartitionInfo{}
	m.partByName = map[partitionKey]int64{}
	m.partBuckets = map[partitionRef]int32{}
	m.schemas = map[schemaKey]*schemaEntry{}
}

// bucketCount returns the bucket count a partition reported (no request).
func (m *metadataCache) bucketCount(tableID, partitionID int64) (int32, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, ok := m.partBuckets[partitionRef{tableID, partitionID}]
	return n, ok
}

// putBucketCountLocked records the bucket count of a partition when the
// server reported one (see reportedBucketCount).
func (m *metadataCache) putBucketCountLocked(tableID, partitionID int64, declared int32, listed int) {
	if n, ok := reportedBucketCount(declared, listed); ok {
		m.partBuckets[partitionRef{tableID, partitionID}] = n
	}
}

// listedBucketCount is the number of buckets a partition's metadata lists
// when their ids are exactly 0 to n-1, and 0 otherwise: a list with a gap
// or a repeat is not a partition's whole bucket set, and counting it would
// leave buckets unread for as long as the count is cached.
func listedBucketCount(bms []*pb.PbBucketMetadata) int {
	seen := make([]bool, len(bms))
	for _, b := range bms {
		id := b.GetBucketId()
		if id < 0 || int(id) >= len(bms) || seen[id] {
			return 0
		}
		seen[id] = true
	}
	return len(bms)
}

// forgetPartitionLocked drops the cached bucket count and bucket leaders of
// a partition.
func (m *metadataCache) forgetPartitionLocked(tableID, partitionID int64) {
	delete(m.partBuckets, partitionRef{tableID, partitionID})
	for b := range m.buckets {
		if b.TableID == tableID && b.PartitionID == partitionID {
			delete(m.buckets, b)
		}
	}
}

func (m *metadataCache) tablet(id int32) (ServerNode, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, ok := m.tablets[id]
	return n, ok
}

func (m *metadataCache) coordinatorNode() (ServerNode, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.coordinator == nil {
		return ServerNode{}, false
	}
	return *m.coordinator, true
}

func (m *metadataCache) dropCoordinator() {
	m.mu.Lock()
	m.coordinator = nil
	m.mu.Unlock()
}

// readAddrs lists where read-only requests may go: alive tablet servers in
// random order, then the coordinator, then the bootstrap servers.
func (m *metadataCache) readAddrs(bootstrap []string) []string {
	m.mu.RLock()
	addrs := make([]string, 0, len(m.tablets)+1+len(bootstrap))
	for _, n := range m.tablets {
		addrs = append(addrs, n.Addr())
	}
	shuffle(addrs)
	if m.coordinator != nil {
		addrs = append(addrs, m.coordinator.Addr())
	}
	m.mu.RUnlock()
	seen := make(map[string]bool, len(addrs))
	for _, a := range addrs {
		seen[a] = true
	}
	for _, a := range bootstrap {
		if !seen[a] {
			addrs = append(addrs, a)
			seen[a] = true
		}
	}
	return addrs
}

func nodeFromPB(n *pb.PbServerNode, t wire.ServerType) ServerNode {
	return ServerNode{ID: n.GetNodeId(), Host: n.GetHost(), Port: n.GetPort(), Rack: n.GetRack(), Type: t}
}

func locationFromPB(b *pb.PbBucketMetadata) bucketLocation {
	loc := bucketLocation{Leader: -1, LeaderEpoch: b.GetLeaderEpoch(), Replicas: b.GetReplicaId()}
	if b.LeaderId != nil {
		loc.Leader = b.GetLeaderId()
	}
	return loc
}

// apply stores a metadata response and returns the tables it described.
func (m *metadataCache) apply(resp *pb.MetadataResponse) ([]*TableInfo, error) {
	var infos []*TableInfo
	for _, tm := range resp.GetTableMetadata() {
		path := TablePath{Database: tm.GetTablePath().GetDatabaseName(), Table: tm.GetTablePath().GetTableName()}
		info, err := newTableInfo(path, tm.GetTableId(), tm.GetSchemaId(), tm.GetTableJson(),
			tm.GetCreatedTime(), tm.GetModifiedTime(), len(tm.GetBucketMetadata()))
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if cs := resp.GetCoordinatorServer(); cs != nil {
		n := nodeFromPB(cs, wire.ServerTypeCoordinator)
		m.coordinator = &n
	}
	if len(resp.GetTabletServers()) > 0 {
		m.tablets = make(map[int32]ServerNode, len(resp.GetTabletServers()))
		for _, ts := range resp.GetTabletServers() {
			m.tablets[ts.GetNodeId()] = nodeFromPB(ts, wire.ServerTypeTabletServer)
		}
	}
	for i, tm := range resp.GetTableMetadata() {
		info := infos[i]
		m.putTableLocked(info)
		if info.IsPartitioned() {
			continue
		}
		for _, b := range tm.GetBucketMetadata() {
			m.buckets[TableBucket{TableID: info.TableID, PartitionID: NoPartition, Bucket: b.GetBucketId()}] = locationFromPB(b)
		}
	}
	for _, pm := range resp.GetPartitionMetadata() {
		tid, pid := pm.GetTableId(), pm.GetPartitionId()
		parts := m.partByID[tid]
		if parts == nil {
			parts = map[int64]PartitionInfo{}
			m.partByID[tid] = parts
		}
		if _, ok := parts[pid]; !ok {
			parts[pid] = PartitionInfo{ID: pid, Name: pm.GetPartitionName(), Spec: m.specFromNameLocked(tid, pm.GetPartitionName())}
		}
		m.partByName[partitionKey{tid, pm.GetPartitionName()}] = pid
		m.putBucketCountLocked(tid, pid, pm.GetBucketCount(), listedBucketCount(pm.GetBucketMetadata()))
		for _, b := range pm.GetBucketMetadata() {
			m.buckets[TableBucket{TableID: tid, PartitionID: pid, Bucket: b.GetBucketId()}] = locationFromPB(b)
		}
	}
	return infos, nil
}

// specFromNameLocked splits a partition name by '$' against the table's
// partition keys (best effort: values may themselves contain no '$', as Fluss
// forbids it in partition values).
func (m *metadataCache) specFromNameLocked(tableID int64, name string) []KeyValue {
	info := m.byID[tableID]
	if info == nil {
		return nil
	}
	vals := strings.Split(name, "$")
	if len(vals) != len(info.PartitionKeys) {
		return nil
	}
	spec := make([]KeyValue, len(vals))
	for i, v := range vals {
		spec[i] = KeyValue{Key: info.PartitionKeys[i], Value: v}
	}
	return spec
}

func (m *metadataCache) putTableLocked(info *TableInfo) {
	if old, ok := m.tables[info.Path]; ok && old.TableID != info.TableID {
		// The table was dropped and created again under the same name.
		m.forgetTableLocked(old.TableID)
	}
	m.tables[info.Path] = info
	m.byID[info.TableID] = info
	k := schemaKey{info.TableID, info.SchemaID}
	if _, ok := m.schemas[k]; !ok {
		m.schemas[k] = &schemaEntry{schema: info.Schema}
	}
}

// forgetPartitionsLocked drops what is cached of the partitions of a table
// but their bucket leaders.
func (m *metadataCache) forgetPartitionsLocked(tableID int64) {
	delete(m.partByID, tableID)
	for k := range m.partByName {
		if k.tableID == tableID {
			delete(m.partByName, k)
		}
	}
	for k := range m.partBuckets {
		if k.tableID == tableID {
			delete(m.partBuckets, k)
		}
	}
}

func (m *metadataCache) forgetTableLocked(tableID int64) {
	if info, ok := m.byID[tableID]; ok {
		if cur := m.tables[info.Path]; cur == info {
			delete(m.tables, info.Path)
		}
	}
	delete(m.byID, tableID)
	for b := range m.buckets {
		if b.TableID == tableID {
			delete(m.buckets, b)
		}
	}
	m.forgetPartitionsLocked(tableID)
	for k := range m.schemas {
		if k.tableID == tableID {
			delete(m.schemas, k)
		}
	}
}
