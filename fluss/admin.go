package fluss

import (
	"context"
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// Admin operations. Writes go to the coordinator and are retried only when
// the coordinator cannot have applied them (never sent, or refused with a
// retriable code); reads go to any server and are retried on every
// retriable error. Errors wrap *errcode.ServerError values such as
// errcode.TableAlreadyExist, errcode.DatabaseNotExist, errcode.InvalidTable.

// DatabaseDescriptor is the optional description of a database.
type DatabaseDescriptor struct {
	Comment          string
	CustomProperties map[string]string
}

func (d *DatabaseDescriptor) json() []byte {
	b := []byte(`{"version":1`)
	if d != nil && d.Comment != "" {
		b = append(b, `,"comment":`...)
		b = appendJSONString(b, d.Comment)
	}
	b = append(b, `,"custom_properties":{`...)
	if d != nil {
		keys := make([]string, 0, len(d.CustomProperties))
		for k := range d.CustomProperties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, d.CustomProperties[k])
		}
	}
	return append(b, "}}"...)
}

// CreateDatabase creates a database (desc may be nil).
func (c *Client) CreateDatabase(ctx context.Context, name string, desc *DatabaseDescriptor, ignoreIfExists bool) error {
	req := &pb.CreateDatabaseRequest{
		DatabaseName:   proto.String(name),
		IgnoreIfExists: proto.Bool(ignoreIfExists),
		DatabaseJson:   desc.json(),
	}
	if err := c.callCoordinator(ctx, true, wire.CreateDatabase, req, &pb.CreateDatabaseResponse{}); err != nil {
		return fmt.Errorf("fluss: create database %q: %w", name, err)
	}
	return nil
}

// DropDatabase drops a database; cascade drops its tables too.
func (c *Client) DropDatabase(ctx context.Context, name string, ignoreIfNotExists, cascade bool) error {
	req := &pb.DropDatabaseRequest{
		DatabaseName:      proto.String(name),
		IgnoreIfNotExists: proto.Bool(ignoreIfNotExists),
		Cascade:           proto.Bool(cascade),
	}
	if err := c.callCoordinator(ctx, true, wire.DropDatabase, req, &pb.DropDatabaseResponse{}); err != nil {
		return fmt.Errorf("fluss: drop database %q: %w", name, err)
	}
	return nil
}

// ListDatabases returns the database names.
func (c *Client) ListDatabases(ctx context.Context) ([]string, error) {
	var resp pb.ListDatabasesResponse
	if err := c.callAny(ctx, wire.ListDatabases, &pb.ListDatabasesRequest{}, &resp); err != nil {
		return nil, fmt.Errorf("fluss: list databases: %w", err)
	}
	return resp.GetDatabaseName(), nil
}

// DatabaseExists reports whether a database exists.
func (c *Client) DatabaseExists(ctx context.Context, name string) (bool, error) {
	var resp pb.DatabaseExistsResponse
	if err := c.callAny(ctx, wire.DatabaseExists, &pb.DatabaseExistsRequest{DatabaseName: proto.String(name)}, &resp); err != nil {
		return false, fmt.Errorf("fluss: database %q exists: %w", name, err)
	}
	return resp.GetExists(), nil
}

// CreateTable creates a table from its descriptor: a log table (no primary
// key), a primary-key table, either of them partitioned.
//
// A schema without column ids that holds a ROW type (at any depth) gets ids
// assigned the way the Fluss 0.9 Java client does, because the 0.9
// coordinator only numbers top-level columns itself and then rejects the
// duplicate nested ids.
func (c *Client) CreateTable(ctx context.Context, path TablePath, desc *types.TableDescriptor, ignoreIfExists bool) error {
	if !desc.Schema.HasColumnIDs && schemaHasRow(&desc.Schema) {
		d := desc.Clone()
		assignFieldIDs(&d.Schema)
		desc = d
	}
	js, err := desc.MarshalJSON()
	if err != nil {
		return fmt.Errorf("fluss: create table %s: %w", path, err)
	}
	req := &pb.CreateTableRequest{
		TablePath:      path.pb(),
		TableJson:      js,
		IgnoreIfExists: proto.Bool(ignoreIfExists),
	}
	if err := c.callCoordinator(ctx, true, wire.CreateTable, req, &pb.CreateTableResponse{}); err != nil {
		return fmt.Errorf("fluss: create table %s: %w", path, err)
	}
	return nil
}

// DropTable drops a table.
func (c *Client) DropTable(ctx context.Context, path TablePath, ignoreIfNotExists bool) error {
	req := &pb.DropTableRequest{TablePath: path.pb(), IgnoreIfNotExists: proto.Bool(ignoreIfNotExists)}
	if err := c.callCoordinator(ctx, true, wire.DropTable, req, &pb.DropTableResponse{}); err != nil {
		return fmt.Errorf("fluss: drop table %s: %w", path, err)
	}
	c.meta.mu.Lock()
	if info, ok := c.meta.tables[path]; ok {
		c.meta.forgetTableLocked(info.TableID)
	}
	c.meta.mu.Unlock()
	return nil
}

// ListTables returns the table names of a database.
func (c *Client) ListTables(ctx context.Context, database string) ([]string, error) {
	var resp pb.ListTablesResponse
	if err := c.callAny(ctx, wire.ListTables, &pb.ListTablesRequest{DatabaseName: proto.String(database)}, &resp); err != nil {
		return nil, fmt.Errorf("fluss: list tables of %q: %w", database, err)
	}
	return resp.GetTableName(), nil
}

// TableExists reports whether a table exists.
func (c *Client) TableExists(ctx context.Context, path TablePath) (bool, error) {
	var resp pb.TableExistsResponse
	if err := c.callAny(ctx, wire.TableExists, &pb.TableExistsRequest{TablePath: path.pb()}, &resp); err != nil {
		return false, fmt.Errorf("fluss: table %s exists: %w", path, err)
	}
	return resp.GetExists(), nil
}

// GetTableInfo fetches a table's info with GET_TABLE_INFO (no bucket
// leaders) and stores it in the cache.
func (c *Client) GetTableInfo(ctx context.Context, path TablePath) (*TableInfo, error) {
	var resp pb.GetTableInfoResponse
	if err := c.callAny(ctx, wire.GetTableInfo, &pb.GetTableInfoRequest{TablePath: path.pb()}, &resp); err != nil {
		return nil, fmt.Errorf("fluss: table info of %s: %w", path, err)
	}
	info, err := newTableInfo(path, resp.GetTableId(), resp.GetSchemaId(), resp.GetTableJson(),
		resp.GetCreatedTime(), resp.GetModifiedTime(), 0)
	if err != nil {
		return nil, err
	}
	c.meta.mu.Lock()
	c.meta.putTableLocked(info)
	c.meta.mu.Unlock()
	return info, nil
}

// AddColumns appends nullable columns at the end of a table's schema (the
// only schema change Fluss 0.9 supports). The table's cached info is
// dropped so the next Table call sees the new schema id.
func (c *Client) AddColumns(ctx context.Context, path TablePath, columns ...types.Column) error {
	req := &pb.AlterTableRequest{TablePath: path.pb(), IgnoreIfNotExists: proto.Bool(false)}
	for _, col := range columns {
		dt, err := col.Type.MarshalJSON()
		if err != nil {
			return fmt.Errorf("fluss: add column %q to %s: %w", col.Name, path, err)
		}
		add := &pb.PbAddColumn{
			ColumnName:         proto.String(col.Name),
			DataTypeJson:       dt,
			ColumnPositionType: proto.Int32(0), // last
		}
		if col.Comment != "" {
			add.Comment = proto.String(col.Comment)
		}
		req.AddColumns = append(req.AddColumns, add)
	}
	if err := c.callCoordinator(ctx, true, wire.AlterTable, req, &pb.AlterTableResponse{}); err != nil {
		return fmt.Errorf("fluss: add columns to %s: %w", path, err)
	}
	c.meta.mu.Lock()
	delete(c.meta.tables, path)
	c.meta.mu.Unlock()
	return nil
}

// SetTableProperties sets (or, with an empty value, resets) table properties.
func (c *Client) SetTableProperties(ctx context.Context, path TablePath, props map[string]string) error {
	req := &pb.AlterTableRequest{TablePath: path.pb(), IgnoreIfNotExists: proto.Bool(false)}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ch := &pb.PbAlterConfig{ConfigKey: proto.String(k), OpType: proto.Int32(0)}
		if v := props[k]; v == "" {
			ch.OpType = proto.Int32(1)
		} else {
			ch.ConfigValue = proto.String(v)
		}
		req.ConfigChanges = append(req.ConfigChanges, ch)
	}
	if err := c.callCoordinator(ctx, true, wire.AlterTable, req, &pb.AlterTableResponse{}); err != nil {
		return fmt.Errorf("fluss: alter properties of %s: %w", path, err)
	}
	c.meta.mu.Lock()
	delete(c.meta.tables, path)
	c.meta.mu.Unlock()
	return nil
}

func specPB(spec map[string]string) *pb.PbPartitionSpec {
	keys := make([]string, 0, len(spec))
	for k := range spec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := &pb.PbPartitionSpec{}
	for _, k := range keys {
		out.PartitionKeyValues = append(out.PartitionKeyValues, &pb.PbKeyValue{Key: proto.String(k), Value: proto.String(spec[k])})
	}
	return out
}

// CreatePartition adds a partition to a partitioned table; spec maps every
// partition key to its value.
func (c *Client) CreatePartition(ctx context.Context, path TablePath, spec map[string]string, ignoreIfExists bool) error {
	req := &pb.CreatePartitionRequest{
		TablePath:         path.pb(),
		PartitionSpec:     specPB(spec),
		IgnoreIfNotExists: proto.Bool(ignoreIfExists),
	}
	if err := c.callCoordinator(ctx, true, wire.CreatePartition, req, &pb.CreatePartitionResponse{}); err != nil {
		return fmt.Errorf("fluss: create partition %v of %s: %w", spec, path, err)
	}
	return nil
}

// DropPartition drops a partition.
func (c *Client) DropPartition(ctx context.Context, path TablePath, spec map[string]string, ignoreIfNotExists bool) error {
	req := &pb.DropPartitionRequest{
		TablePath:         path.pb(),
		PartitionSpec:     specPB(spec),
		IgnoreIfNotExists: proto.Bool(ignoreIfNotExists),
	}
	if err := c.callCoordinator(ctx, true, wire.DropPartition, req, &pb.DropPartitionResponse{}); err != nil {
		return fmt.Errorf("fluss: drop partition %v of %s: %w", spec, path, err)
	}
	return nil
}

// ServerNodes asks the cluster for its coordinator and alive tablet servers.
func (c *Client) ServerNodes(ctx context.Context) (Cluster, error) {
	if err := c.refreshCluster(ctx); err != nil {
		return Cluster{}, err
	}
	return c.cluster(), nil
}

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"' || ch == '\\':
			b = append(b, '\\', ch)
		case ch < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[ch>>4], hex[ch&0xf])
		default:
			b = append(b, ch)
		}
	}
	return append(b, '"')
}

func schemaHasRow(s *types.Schema) bool {
	for i := range s.Columns {
		if typeHasRow(&s.Columns[i].Type) {
			return true
		}
	}
	return false
}

func typeHasRow(t *types.DataType) bool {
	switch t.Kind {
	case types.KindRow:
		return true
	case types.KindArray:
		return t.Elem != nil && typeHasRow(t.Elem)
	case types.KindMap:
		return (t.Key != nil && typeHasRow(t.Key)) || (t.Value != nil && typeHasRow(t.Value))
	}
	return false
}

// assignFieldIDs numbers columns and nested ROW fields as Fluss's
// Schema.Builder does: each column takes the next id, then the ROW fields
// inside its type take the following ids, depth first, each field before
// the fields nested in its own type.
func assignFieldIDs(s *types.Schema) {
	next := int32(-1)
	for i := range s.Columns {
		next++
		s.Columns[i].ID = next
		reassignType(&s.Columns[i].Type, &next)
	}
	s.HighestFieldID = next
	s.HasColumnIDs = true
}

func reassignType(t *types.DataType, next *int32) {
	switch t.Kind {
	case types.KindArray:
		if t.Elem != nil {
			reassignType(t.Elem, next)
		}
	case types.KindMap:
		if t.Key != nil {
			reassignType(t.Key, next)
		}
		if t.Value != nil {
			reassignType(t.Value, next)
		}
	case types.KindRow:
		for i := range t.Fields {
			*next++
			t.Fields[i].ID = *next
			reassignType(&t.Fields[i].Type, next)
		}
		t.HasFieldIDs = true
	}
}
