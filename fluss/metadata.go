package fluss

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
	"github.com/fluss-iggy/fluss-iggy/fluss/wire"
)

// NoPartition is the PartitionID of buckets of non-partitioned tables.
const NoPartition int64 = -1

// TablePath names a table.
type TablePath struct {
	Database string
	Table    string
}

// NewTablePath returns the path of table in database.
func NewTablePath(database, table string) TablePath {
	return TablePath{Database: database, Table: table}
}

// ParseTablePath parses "database.table".
func ParseTablePath(s string) (TablePath, error) {
	db, t, ok := strings.Cut(s, ".")
	if !ok || db == "" || t == "" || strings.Contains(t, ".") {
		return TablePath{}, fmt.Errorf("fluss: table path %q is not DATABASE.TABLE", s)
	}
	return TablePath{Database: db, Table: t}, nil
}

// String returns "database.table".
func (p TablePath) String() string { return p.Database + "." + p.Table }

func (p TablePath) pb() *pb.PbTablePath {
	return &pb.PbTablePath{DatabaseName: proto.String(p.Database), TableName: proto.String(p.Table)}
}

// TableBucket identifies a bucket: of a table, or of one partition of a
// partitioned table.
type TableBucket struct {
	TableID int64
	// PartitionID is NoPartition for non-partitioned tables.
	PartitionID int64
	Bucket      int32
}

// String renders the bucket for error messages.
func (b TableBucket) String() string {
	if b.PartitionID == NoPartition {
		return fmt.Sprintf("table %d bucket %d", b.TableID, b.Bucket)
	}
	return fmt.Sprintf("table %d partition %d bucket %d", b.TableID, b.PartitionID, b.Bucket)
}

// ServerNode is a coordinator or tablet server as the cluster reports it.
type ServerNode struct {
	ID   int32
	Host string
	Port int32
	Rack string
	Type wire.ServerType
}

// Addr returns host:port.
func (n ServerNode) Addr() string {
	return netJoin(n.Host, n.Port)
}

func netJoin(host string, port int32) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(port))
}

// Cluster is a snapshot of the servers of the cluster.
type Cluster struct {
	// Coordinator is nil when unknown.
	Coordinator *ServerNode
	// TabletServers are the alive tablet servers ordered by id.
	TabletServers []ServerNode
}

// TableInfo describes a table as the cluster currently stores it.
type TableInfo struct {
	Path    TablePath
	TableID int64
	// SchemaID is the id of the latest schema. Batches may carry older ids;
	// use Client.Schema for them.
	SchemaID int32
	// Schema is the latest schema (shared; do not modify).
	Schema *types.Schema
	// Descriptor is the stored table descriptor (shared; do not modify).
	// Properties left at their defaults are absent from it; use its
	// accessor methods (LogFormat, ArrowCompression, ...).
	Descriptor *types.TableDescriptor
	// NumBuckets is the bucket count (per partition for partitioned tables).
	NumBuckets int32
	// PartitionKeys are the partition columns (empty when not partitioned).
	PartitionKeys []string
	// PrimaryKey are the primary-key columns (empty for log tables).
	PrimaryKey   []string
	CreatedTime  time.Time
	ModifiedTime time.Time
}

// IsPartitioned reports whether the table is partitioned.
func (t *TableInfo) IsPartitioned() bool { return len(t.PartitionKeys) > 0 }

// HasPrimaryKey reports whether the table is a primary-key table.
func (t *TableInfo) HasPrimaryKey() bool { return len(t.PrimaryKey) > 0 }

// Bucket returns the TableBucket of bucket id in partition (NoPartition for
// non-partitioned tables).
func (t *TableInfo) Bucket(partitionID int64, bucket int32) TableBucket {
	return TableBucket{TableID: t.TableID, PartitionID: partitionID, Bucket: bucket}
}

func newTableInfo(path TablePath, tableID int64, schemaID int32, tableJSON []byte, created, modified int64, buckets int) (*TableInfo, error) {
	desc, err := types.ParseTableDescriptorJSON(tableJSON)
	if err != nil {
		return nil, fmt.Errorf("fluss: table %s (id %d): %w", path, tableID, err)
	}
	n := desc.BucketCount
	if n <= 0 {
		n = int32(buckets)
	}
	return &TableInfo{
		Path:          path,
		TableID:       tableID,
		SchemaID:      schemaID,
		Schema:        &desc.Schema,
		Descriptor:    desc,
		NumBuckets:    n,
		PartitionKeys: desc.PartitionKeys,
		PrimaryKey:    desc.Schema.PrimaryKey,
		CreatedTime:   time.UnixMilli(created),
		ModifiedTime:  time.UnixMilli(modified),
	}, nil
}

// KeyValue is one partition key and its value.
type KeyValue struct {
	Key   string
	Value string
}

// PartitionInfo is one partition of a partitioned table.
type PartitionInfo struct {
	ID int64
	// Name is the values joined with '$' in partition-key order.
	Name string
	// Spec lists the values in partition-key order.
	Spec []KeyValue
}

// BucketLocation is where a bucket lives.
type BucketLocation struct {
	// Leader is the leader's tablet server id, or -1 without a leader.
	Leader      int32
	LeaderEpoch int32
	Replicas    []int32
}

// ---------------------------------------------------------------------------
// Cache

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

type metadataCache struct {
	mu          sync.RWMutex
	coordinator *ServerNode
	tablets     map[int32]ServerNode
	tables      map[TablePath]*TableInfo
	byID        map[int64]*TableInfo
	buckets     map[TableBucket]BucketLocation
	partByID    map[int64]map[int64]PartitionInfo // table id -> partition id -> info
	partByName  map[partitionKey]int64
	schemas     map[schemaKey]*schemaEntry
}

func (m *metadataCache) init() {
	m.tablets = map[int32]ServerNode{}
	m.tables = map[TablePath]*TableInfo{}
	m.byID = map[int64]*TableInfo{}
	m.buckets = map[TableBucket]BucketLocation{}
	m.partByID = map[int64]map[int64]PartitionInfo{}
	m.partByName = map[partitionKey]int64{}
	m.schemas = map[schemaKey]*schemaEntry{}
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

func locationFromPB(b *pb.PbBucketMetadata) BucketLocation {
	loc := BucketLocation{Leader: -1, LeaderEpoch: b.GetLeaderEpoch(), Replicas: b.GetReplicaId()}
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
	delete(m.partByID, tableID)
	for k := range m.partByName {
		if k.tableID == tableID {
			delete(m.partByName, k)
		}
	}
	for k := range m.schemas {
		if k.tableID == tableID {
			delete(m.schemas, k)
		}
	}
}

// ---------------------------------------------------------------------------
// Cluster

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
func (c *Client) bootstrapCluster(ctx context.Context) error {
	failed := &serversError{what: "no bootstrap server answered"}
	given := map[string]bool{} // addresses whose error retrying cannot cure
	for round := 0; round < 3 && len(given) < len(c.cfg.bootstrap); round++ {
		for _, addr := range c.cfg.bootstrap {
			if given[addr] {
				continue
			}
			conn, err := c.conn(ctx, addr)
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

// RefreshCluster reloads the coordinator and the alive tablet servers.
func (c *Client) RefreshCluster(ctx context.Context) error {
	return c.retry(ctx, retriableRead, nil, func() error {
		conn, err := c.anyConn(ctx)
		if err != nil {
			return err
		}
		_, err = c.metadataFrom(ctx, conn, &pb.MetadataRequest{})
		return err
	})
}

// Cluster returns the servers as last seen (no request).
func (c *Client) Cluster() Cluster {
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

// ---------------------------------------------------------------------------
// Tables

// Table returns the cached info of a table, loading it on first use.
func (c *Client) Table(ctx context.Context, path TablePath) (*TableInfo, error) {
	c.meta.mu.RLock()
	info, ok := c.meta.tables[path]
	c.meta.mu.RUnlock()
	if ok {
		return info, nil
	}
	return c.RefreshTable(ctx, path)
}

// TableByID returns the cached info of a table id (no request).
func (c *Client) TableByID(tableID int64) (*TableInfo, bool) {
	c.meta.mu.RLock()
	defer c.meta.mu.RUnlock()
	info, ok := c.meta.byID[tableID]
	return info, ok
}

// RefreshTable reloads a table's info and bucket leaders (for a partitioned
// table, the leaders of its known partitions too).
func (c *Client) RefreshTable(ctx context.Context, path TablePath) (*TableInfo, error) {
	var info *TableInfo
	err := c.retry(ctx, retriableRead, nil, func() error {
		req := &pb.MetadataRequest{TablePath: []*pb.PbTablePath{path.pb()}}
		c.meta.mu.RLock()
		if old, ok := c.meta.tables[path]; ok {
			for pid := range c.meta.partByID[old.TableID] {
				req.PartitionsId = append(req.PartitionsId, pid)
			}
		}
		c.meta.mu.RUnlock()
		conn, err := c.anyConn(ctx)
		if err != nil {
			return err
		}
		infos, err := c.metadataFrom(ctx, conn, req)
		if err != nil {
			var stale *staleMetadataError
			if !errors.As(err, &stale) || len(infos) == 0 {
				return err
			}
		}
		for _, i := range infos {
			if i.Path == path {
				info = i
				return nil
			}
		}
		return fmt.Errorf("fluss: table %s: %w", path, errcode.New(errcode.TableNotExist.Code, "not in the metadata response"))
	})
	if err != nil {
		if errors.Is(err, errcode.UnknownServerError) {
			// 0.9.1 answers GET_METADATA for a missing table with
			// UNKNOWN_SERVER_ERROR (a wrapped TableNotExistException); ask
			// GET_TABLE_INFO for a typed answer.
			if _, ierr := c.GetTableInfo(ctx, path); ierr != nil && errors.Is(ierr, errcode.TableNotExist) {
				c.meta.mu.Lock()
				if old, ok := c.meta.tables[path]; ok {
					c.meta.forgetTableLocked(old.TableID)
				}
				c.meta.mu.Unlock()
				return nil, ierr
			}
		}
		if errors.Is(err, errcode.PartitionNotExists) {
			// A cached partition was dropped: forget the table's partitions
			// and ask again without them.
			c.forgetPartitions(path)
			return c.RefreshTable(ctx, path)
		}
		return nil, fmt.Errorf("fluss: metadata of table %s: %w", path, err)
	}
	return info, nil
}

func (c *Client) forgetPartitions(path TablePath) {
	c.meta.mu.Lock()
	defer c.meta.mu.Unlock()
	if info, ok := c.meta.tables[path]; ok {
		delete(c.meta.partByID, info.TableID)
		for k := range c.meta.partByName {
			if k.tableID == info.TableID {
				delete(c.meta.partByName, k)
			}
		}
	}
}

// ---------------------------------------------------------------------------
// Schemas

// Schema returns schema schemaID of the table (any id a batch of the table
// may carry), cached per table id and schema id.
func (c *Client) Schema(ctx context.Context, info *TableInfo, schemaID int32) (*types.Schema, error) {
	e, err := c.schemaEntry(ctx, info, schemaID)
	if err != nil {
		return nil, err
	}
	return e.schema, nil
}

// ArrowSchema returns the Arrow schema of the table's schema schemaID, as
// the ARROW log format declares it (cached).
func (c *Client) ArrowSchema(ctx context.Context, info *TableInfo, schemaID int32) (*arrow.Schema, error) {
	e, err := c.schemaEntry(ctx, info, schemaID)
	if err != nil {
		return nil, err
	}
	c.meta.mu.RLock()
	as := e.arrow
	c.meta.mu.RUnlock()
	if as != nil {
		return as, nil
	}
	as, err = e.schema.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("fluss: table %s schema %d: %w", info.Path, schemaID, err)
	}
	c.meta.mu.Lock()
	if e.arrow == nil {
		e.arrow = as
	} else {
		as = e.arrow
	}
	c.meta.mu.Unlock()
	return as, nil
}

func (c *Client) schemaEntry(ctx context.Context, info *TableInfo, schemaID int32) (*schemaEntry, error) {
	k := schemaKey{info.TableID, schemaID}
	c.meta.mu.RLock()
	e, ok := c.meta.schemas[k]
	c.meta.mu.RUnlock()
	if ok {
		return e, nil
	}
	if schemaID == info.SchemaID {
		e = &schemaEntry{schema: info.Schema}
	} else {
		s, _, err := c.GetTableSchema(ctx, info.Path, &schemaID)
		if err != nil {
			return nil, err
		}
		e = &schemaEntry{schema: s}
	}
	c.meta.mu.Lock()
	if old, ok := c.meta.schemas[k]; ok {
		e = old
	} else {
		c.meta.schemas[k] = e
	}
	c.meta.mu.Unlock()
	return e, nil
}

// GetTableSchema fetches a schema of a table: the latest when schemaID is
// nil. It returns the schema and its id. No cache.
func (c *Client) GetTableSchema(ctx context.Context, path TablePath, schemaID *int32) (*types.Schema, int32, error) {
	req := &pb.GetTableSchemaRequest{TablePath: path.pb(), SchemaId: schemaID}
	var resp pb.GetTableSchemaResponse
	if err := c.callAny(ctx, wire.GetTableSchema, req, &resp); err != nil {
		if schemaID != nil {
			return nil, 0, fmt.Errorf("fluss: schema %d of table %s: %w", *schemaID, path, err)
		}
		return nil, 0, fmt.Errorf("fluss: latest schema of table %s: %w", path, err)
	}
	s, err := types.ParseSchemaJSON(resp.GetSchemaJson())
	if err != nil {
		return nil, 0, fmt.Errorf("fluss: schema %d of table %s: %w", resp.GetSchemaId(), path, err)
	}
	return s, resp.GetSchemaId(), nil
}

// ---------------------------------------------------------------------------
// Bucket leaders

// Location returns the cached location of a bucket (no request).
func (c *Client) Location(b TableBucket) (BucketLocation, bool) {
	c.meta.mu.RLock()
	defer c.meta.mu.RUnlock()
	loc, ok := c.meta.buckets[b]
	return loc, ok
}

// Leader returns the tablet server id leading bucket b. When the leader is not
// cached (or was invalidated) it refreshes the table's metadata (for a
// partitioned table, the partition's). A bucket still without an alive leader
// (a partition or table just created, a leader election under way) is asked
// again with the client's retry backoff, up to its attempt limit and within
// ctx; then Leader gives a LEADER_NOT_AVAILABLE error (retriable).
func (c *Client) Leader(ctx context.Context, b TableBucket) (int32, error) {
	if id, ok := c.cachedLeader(b); ok {
		return id, nil
	}
	info, ok := c.TableByID(b.TableID)
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
	return c.RefreshPartitionLeaders(ctx, info, partitionID)
}

// RefreshPartitionLeaders reloads the bucket leaders of the given partitions.
func (c *Client) RefreshPartitionLeaders(ctx context.Context, info *TableInfo, partitionIDs ...int64) error {
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
			return fmt.Errorf("fluss: leaders of partitions %v of table %s: %w", partitionIDs, info.Path, err)
		}
		return nil
	})
}

// InvalidateLeader drops the cached leader of one bucket; the next Leader call
// asks the cluster.
func (c *Client) InvalidateLeader(b TableBucket) {
	c.meta.mu.Lock()
	delete(c.meta.buckets, b)
	c.meta.mu.Unlock()
}

// InvalidateTable drops every cached leader of a table (all partitions).
func (c *Client) InvalidateTable(tableID int64) {
	c.meta.mu.Lock()
	for b := range c.meta.buckets {
		if b.TableID == tableID {
			delete(c.meta.buckets, b)
		}
	}
	c.meta.mu.Unlock()
}

// InvalidateServer drops every cached leader on tablet server id (after its
// connection died).
func (c *Client) InvalidateServer(id int32) {
	c.meta.mu.Lock()
	for b, loc := range c.meta.buckets {
		if loc.Leader == id {
			delete(c.meta.buckets, b)
		}
	}
	c.meta.mu.Unlock()
}

// ---------------------------------------------------------------------------
// Partitions

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

// PartitionByID returns a cached partition (no request).
func (c *Client) PartitionByID(tableID, partitionID int64) (PartitionInfo, bool) {
	c.meta.mu.RLock()
	defer c.meta.mu.RUnlock()
	p, ok := c.meta.partByID[tableID][partitionID]
	return p, ok
}

// ---------------------------------------------------------------------------
// Offsets

// OffsetSpec selects which offset ListOffsets returns.
type OffsetSpec struct {
	typ int32
	ts  int64
}

// EarliestOffset is the first offset still stored (local, remote or lake).
func EarliestOffset() OffsetSpec { return OffsetSpec{typ: 0} }

// LatestOffset is the high watermark: the offset the next committed record
// will get; records below it are readable.
func LatestOffset() OffsetSpec { return OffsetSpec{typ: 1} }

// OffsetAtTimestamp is the offset of the first batch committed at or after
// ms (milliseconds since the epoch); the high watermark when no batch is that
// recent. A time in the server's future is an INVALID_TIMESTAMP error.
func OffsetAtTimestamp(ms int64) OffsetSpec { return OffsetSpec{typ: 2, ts: ms} }

// String describes the spec.
func (s OffsetSpec) String() string {
	switch s.typ {
	case 0:
		return "earliest"
	case 1:
		return "latest"
	}
	return "timestamp " + strconv.FormatInt(s.ts, 10)
}

// ListOffsets returns the offset selected by spec for buckets (nil = every
// bucket) of a table, or of one partition (partitionID NoPartition for
// non-partitioned tables). Requests go to each bucket's leader, buckets
// grouped by leader; leader changes and retriable errors are retried after a
// metadata refresh.
func (c *Client) ListOffsets(ctx context.Context, info *TableInfo, partitionID int64, buckets []int32, spec OffsetSpec) (map[int32]int64, error) {
	if info.IsPartitioned() != (partitionID != NoPartition) {
		if info.IsPartitioned() {
			return nil, fmt.Errorf("fluss: list offsets of table %s: the table is partitioned; name a partition", info.Path)
		}
		return nil, fmt.Errorf("fluss: list offsets of table %s: %w", info.Path, errcode.New(errcode.TableNotPartitioned.Code, ""))
	}
	if buckets == nil {
		buckets = make([]int32, info.NumBuckets)
		for i := range buckets {
			buckets[i] = int32(i)
		}
	}
	for _, b := range buckets {
		if b < 0 || b >= info.NumBuckets {
			return nil, fmt.Errorf("fluss: list offsets of table %s: bucket %d out of range [0, %d)", info.Path, b, info.NumBuckets)
		}
	}
	out := make(map[int32]int64, len(buckets))
	remaining := append([]int32(nil), buckets...)
	where := info.Path.String()
	if partitionID != NoPartition {
		where += " partition " + strconv.FormatInt(partitionID, 10)
	}

	err := c.retry(ctx, retriableOrStale, nil, func() error {
		var (
			mu       sync.Mutex
			retryErr error
			fatal    error
			next     []int32
		)
		keep := func(b int32, err error) {
			mu.Lock()
			defer mu.Unlock()
			if errcode.InvalidatesMetadata(err) {
				c.InvalidateLeader(info.Bucket(partitionID, b))
			}
			if retriableOrStale(err) {
				next = append(next, b)
				retryErr = err
				return
			}
			if fatal == nil {
				fatal = err
			}
		}
		byLeader := map[int32][]int32{}
		for _, b := range remaining {
			leader, err := c.Leader(ctx, info.Bucket(partitionID, b))
			if err != nil {
				keep(b, fmt.Errorf("fluss: %s offset of %s bucket %d: %w", spec, where, b, err))
				continue
			}
			byLeader[leader] = append(byLeader[leader], b)
		}
		var wg sync.WaitGroup
		for leader, bs := range byLeader {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := c.listOffsetsOnce(ctx, leader, info, partitionID, bs, spec)
				if err != nil {
					for _, b := range bs {
						keep(b, fmt.Errorf("fluss: %s offset of %s bucket %d on tablet server %d: %w", spec, where, b, leader, err))
					}
					return
				}
				got := map[int32]bool{}
				for _, r := range res.GetBucketsResp() {
					b := r.GetBucketId()
					got[b] = true
					if err := errcode.New(r.GetErrorCode(), r.GetErrorMessage()); err != nil {
						keep(b, fmt.Errorf("fluss: %s offset of %s bucket %d on tablet server %d: %w", spec, where, b, leader, err))
						continue
					}
					mu.Lock()
					out[b] = r.GetOffset()
					mu.Unlock()
				}
				for _, b := range bs {
					if !got[b] {
						keep(b, fmt.Errorf("fluss: %s offset of %s bucket %d: missing from the response of tablet server %d: %w",
							spec, where, b, leader, errcode.New(errcode.UnknownTableOrBucket.Code, "")))
					}
				}
			}()
		}
		wg.Wait()
		if fatal != nil {
			return fatal
		}
		remaining = next
		if len(remaining) > 0 {
			return retryErr
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *Client) listOffsetsOnce(ctx context.Context, leader int32, info *TableInfo, partitionID int64, buckets []int32, spec OffsetSpec) (*pb.ListOffsetsResponse, error) {
	conn, err := c.TabletConn(ctx, leader)
	if err != nil {
		return nil, err
	}
	req := &pb.ListOffsetsRequest{
		FollowerServerId: proto.Int32(-1),
		OffsetType:       proto.Int32(spec.typ),
		TableId:          proto.Int64(info.TableID),
		BucketId:         buckets,
	}
	if partitionID != NoPartition {
		req.PartitionId = proto.Int64(partitionID)
	}
	if spec.typ == 2 {
		req.StartTimestamp = proto.Int64(spec.ts)
	}
	var resp pb.ListOffsetsResponse
	if err := conn.Call(ctx, wire.ListOffsets, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
