package fluss

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fluss-iggy/fluss-iggy/fluss/errcode"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
	"github.com/fluss-iggy/fluss-iggy/fluss/internal/wire"
	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

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

// tableByID returns the cached info of a table id (no request).
func (c *Client) tableByID(tableID int64) (*TableInfo, bool) {
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
		c.meta.forgetPartitionsLocked(info.TableID)
	}
}

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
