package fluss

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
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
	Type ServerType
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
	// NumBuckets is the table's bucket count: of a non-partitioned table,
	// and of the partitions of a partitioned table that report none of their
	// own. On Fluss 1.0, altering bucket.num of a partitioned table changes
	// it for partitions created later only: use Client.NumBuckets for the
	// count of one partition.
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

// maxBucketCount bounds the bucket counts the client believes a server
// reports: Fluss caps bucket.num far lower (max.bucket.num), and a larger
// value would only make the client keep state for a bucket that cannot
// exist.
const maxBucketCount = 1 << 20

// reportedBucketCount is a partition's own bucket count as a server
// reports it: declared (the bucket_count field of Fluss 1.0; 0 when
// absent), else the number of buckets the answer lists (0 when it lists
// none). ok is false when neither gives a count; the partition then has
// its table's count, as every partition had before Fluss 1.0.
func reportedBucketCount(declared int32, listed int) (n int32, ok bool) {
	if declared > 0 && declared <= maxBucketCount {
		return declared, true
	}
	if listed > 0 && listed <= maxBucketCount {
		return int32(listed), true
	}
	return 0, false
}

// bucketLocation is where a bucket lives.
type bucketLocation struct {
	// Leader is the leader's tablet server id, or -1 without a leader.
	Leader      int32
	LeaderEpoch int32
	Replicas    []int32
}

// ServerType is a server's role (ServerNode.Type), as the server reports it
// in ApiVersions; its String names it.
type ServerType = wire.ServerType
