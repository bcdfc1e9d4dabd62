package sst

import (
	"fmt"
	"io"
)

// Table is an open SST file. It keeps its index block in memory and reads
// data blocks on demand; it is safe for concurrent iterators if its
// io.ReaderAt is.
type Table struct {
	r      io.ReaderAt
	size   int64
	name   string
	footer footer
	props  Properties
	index  []byte // entries of the index block
	// skipChecksums lets the fuzz tests reach the parsers behind the CRCs.
	skipChecksums bool
}

// Open reads the footer, metaindex, properties and index block of the SST
// file r of size bytes. name identifies the file in errors.
func Open(r io.ReaderAt, size int64, name string) (*Table, error) {
	return open(r, size, name, false)
}

func open(r io.ReaderAt, size int64, name string, skipChecksums bool) (*Table, error) {
	t := &Table{r: r, size: size, name: name, skipChecksums: skipChecksums}
	if size < footerLen {
		return nil, tableError(name, -1, corruptf("file of %d bytes is shorter than a footer", size))
	}
	buf := make([]byte, footerLen)
	if _, err := r.ReadAt(buf, size-footerLen); err != nil && err != io.EOF {
		return nil, tableError(name, size-footerLen, fmt.Errorf("reading the footer: %w", err))
	}
	var err error
	if t.footer, err = parseFooter(buf); err != nil {
		return nil, tableError(name, size-footerLen, fmt.Errorf("footer: %w", err))
	}
	if err := t.readMeta(); err != nil {
		return nil, err
	}
	h := t.footer.index
	block, err := t.readBlock(h)
	if err == nil {
		t.index, err = entries(block)
	}
	if err != nil {
		return nil, tableError(name, int64(h.offset), fmt.Errorf("index block: %w", err))
	}
	return t, nil
}

// readMeta reads the metaindex and the properties, and checks that the
// range-deletion block, if any, is empty.
func (t *Table) readMeta() error {
	h := t.footer.metaindex
	block, err := t.readBlock(h)
	var meta metaBlocks
	if err == nil {
		meta, err = parseMetaindex(block)
	}
	if err != nil {
		return tableError(t.name, int64(h.offset), fmt.Errorf("metaindex block: %w", err))
	}
	if !meta.hasProperties {
		return tableError(t.name, int64(h.offset), unsupportedf("no properties block in the metaindex"))
	}
	h = meta.properties
	block, err = t.readBlock(h)
	if err == nil {
		t.props, err = parseProperties(block)
	}
	if err == nil {
		err = t.props.check()
	}
	if err != nil {
		return tableError(t.name, int64(h.offset), fmt.Errorf("properties block: %w", err))
	}
	if h = meta.rangeDel; h.size > 0 {
		return t.checkRangeDel(h)
	}
	return nil
}

// checkRangeDel fails if the range-deletion block holds a tombstone.
func (t *Table) checkRangeDel(h handle) error {
	block, err := t.readBlock(h)
	var ents []byte
	if err == nil {
		ents, err = entries(block)
	}
	if err == nil && len(ents) > 0 {
		err = unsupportedf("range deletions")
	}
	if err != nil {
		return tableError(t.name, int64(h.offset), fmt.Errorf("range-deletion block: %w", err))
	}
	return nil
}

// Name is the name given to Open.
func (t *Table) Name() string { return t.name }

// Properties returns the table properties read by Open.
func (t *Table) Properties() Properties { return t.props }

// FormatVersion is the footer's block-based table format version.
func (t *Table) FormatVersion() uint32 { return t.footer.version }
