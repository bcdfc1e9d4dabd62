package types

import "strconv"

// Table property keys a reader needs, with their defaults (Fluss stores only
// explicitly set properties; readers apply the defaults).
const (
	PropLogFormat           = "table.log.format"
	PropArrowCompression    = "table.log.arrow.compression.type"
	PropArrowZstdLevel      = "table.log.arrow.compression.zstd.level"
	PropKVFormat            = "table.kv.format"
	PropKVValueLayout       = "table.kv.value-layout-version" // Fluss 1.0, set by the server; absent = 1 (plain)
	PropChangelogImage      = "table.changelog.image"
	PropReplicationFactor   = "table.replication.factor"
	DefaultLogFormat        = "ARROW"
	DefaultArrowCompression = "ZSTD"
	DefaultArrowZstdLevel   = 3
	DefaultKVFormat         = "COMPACTED"
	DefaultChangelogImage   = "FULL"
)

// TableDescriptor is the Fluss table descriptor: schema, distribution,
// partitioning, properties and comment.
type TableDescriptor struct {
	Schema Schema
	// Comment is the table comment ("" = none).
	Comment string
	// PartitionKeys name the partition columns; empty for unpartitioned tables.
	PartitionKeys []string
	// BucketKeys name the bucket-key columns. A non-nil empty slice is
	// written as "bucket_key":[] (meaning: default bucketing).
	BucketKeys []string
	// BucketCount is the number of buckets; 0 = unset (server default).
	BucketCount int32
	// Properties are the table options (table.*), as stored.
	Properties map[string]string
	// CustomProperties are user properties, as stored.
	CustomProperties map[string]string
}

// IsPartitioned reports whether the table has partition keys.
func (d *TableDescriptor) IsPartitioned() bool { return len(d.PartitionKeys) > 0 }

// HasPrimaryKey reports whether the table is a primary-key table.
func (d *TableDescriptor) HasPrimaryKey() bool { return d.Schema.HasPrimaryKey() }

// Property returns the property value, or def when it is not set.
func (d *TableDescriptor) Property(key, def string) string {
	if v, ok := d.Properties[key]; ok {
		return v
	}
	return def
}

// LogFormat returns table.log.format upper-cased (default ARROW).
func (d *TableDescriptor) LogFormat() string {
	return upperASCII(d.Property(PropLogFormat, DefaultLogFormat))
}

// ArrowCompression returns table.log.arrow.compression.type upper-cased
// (default ZSTD): NONE, LZ4_FRAME or ZSTD.
func (d *TableDescriptor) ArrowCompression() string {
	return upperASCII(d.Property(PropArrowCompression, DefaultArrowCompression))
}

// ArrowZstdLevel returns table.log.arrow.compression.zstd.level (default 3).
func (d *TableDescriptor) ArrowZstdLevel() int {
	if v, ok := d.Properties[PropArrowZstdLevel]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return DefaultArrowZstdLevel
}

// Clone returns a deep copy of d.
func (d *TableDescriptor) Clone() *TableDescriptor {
	if d == nil {
		return nil
	}
	c := *d
	c.Schema = *d.Schema.Clone()
	c.PartitionKeys = cloneStrings(d.PartitionKeys)
	c.BucketKeys = cloneStrings(d.BucketKeys)
	c.Properties = cloneMap(d.Properties)
	c.CustomProperties = cloneMap(d.CustomProperties)
	return &c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
