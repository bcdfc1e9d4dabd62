package sst

import (
	"encoding/binary"
	"strings"
)

// Properties are the table properties this package reads
// (table/table_properties.cc, the "rocksdb.properties" meta block).
type Properties struct {
	Comparator               string // must be leveldb.BytewiseComparator
	MergeOperator            string // "nullptr" when none
	Compression              string // the table's configured compression, e.g. "LZ4"
	FilterPolicy             string
	NumEntries               uint64 // point entries (puts, deletes, merges)
	NumDeletions             uint64
	NumMergeOperands         uint64
	NumRangeDeletions        uint64
	NumDataBlocks            uint64
	FormatVersion            uint64 // the property, 0 for block-based tables
	IndexKeyIsUserKey        bool   // index keys lack the 8-byte trailer
	IndexValueIsDeltaEncoded bool   // index values after a restart hold a size delta
	IndexType                uint32 // 0 binary search, 1 hash, 2 partitioned, 3 with first key
	GlobalSeqno              uint64 // of ingested (external) files
}

// Property names (TablePropertiesNames and block-based table user properties).
const (
	propComparator     = "rocksdb.comparator"
	propMergeOperator  = "rocksdb.merge.operator"
	propCompression    = "rocksdb.compression"
	propFilterPolicy   = "rocksdb.filter.policy"
	propNumEntries     = "rocksdb.num.entries"
	propDeletions      = "rocksdb.deleted.keys"
	propMergeOperands  = "rocksdb.merge.operands"
	propRangeDeletions = "rocksdb.num.range-deletions"
	propDataBlocks     = "rocksdb.num.data.blocks"
	propFormatVersion  = "rocksdb.format.version"
	propKeyIsUserKey   = "rocksdb.index.key.is.user.key"
	propValueIsDelta   = "rocksdb.index.value.is.delta.encoded"
	propIndexType      = "rocksdb.block.based.table.index.type"
	propGlobalSeqno    = "rocksdb.external_sst_file.global_seqno"
	bytewiseComparator = "leveldb.BytewiseComparator"
)

// parseProperties reads a properties block: keys are property names,
// numbers are varint64 except the fixed-width user properties.
func parseProperties(block []byte) (Properties, error) {
	var p Properties
	ents, err := entries(block)
	if err != nil {
		return p, err
	}
	var it blockIter
	it.reset(ents, false)
	for {
		_, ok, err := it.next()
		if err != nil || !ok {
			return p, err
		}
		if err := p.set(string(it.key), it.value); err != nil {
			return p, err
		}
	}
}

// set records one property; unknown ones are ignored.
func (p *Properties) set(name string, v []byte) error {
	num := func() uint64 {
		d := decoder{b: v}
		return d.uvarint64(name)
	}
	switch name {
	case propComparator:
		p.Comparator = string(v)
	case propMergeOperator:
		p.MergeOperator = string(v)
	case propCompression:
		p.Compression = string(v)
	case propFilterPolicy:
		p.FilterPolicy = string(v)
	case propNumEntries:
		p.NumEntries = num()
	case propDeletions:
		p.NumDeletions = num()
	case propMergeOperands:
		p.NumMergeOperands = num()
	case propRangeDeletions:
		p.NumRangeDeletions = num()
	case propDataBlocks:
		p.NumDataBlocks = num()
	case propFormatVersion:
		p.FormatVersion = num()
	case propKeyIsUserKey:
		p.IndexKeyIsUserKey = num() != 0
	case propValueIsDelta:
		p.IndexValueIsDeltaEncoded = num() != 0
	case propIndexType:
		if len(v) != 4 {
			return corruptf("property %s of %d bytes", name, len(v))
		}
		p.IndexType = binary.LittleEndian.Uint32(v)
	case propGlobalSeqno:
		if len(v) != 8 {
			return corruptf("property %s of %d bytes", name, len(v))
		}
		p.GlobalSeqno = binary.LittleEndian.Uint64(v)
	}
	return nil
}

// check refuses the tables whose entries this package would misread.
func (p *Properties) check() error {
	switch {
	case p.Comparator != bytewiseComparator:
		return unsupportedf("comparator %q (want %s)", p.Comparator, bytewiseComparator)
	case p.IndexType != 0:
		return unsupportedf("index type %d (want 0, binary search; 2 is partitioned)", p.IndexType)
	case p.NumRangeDeletions != 0:
		return unsupportedf("%d range deletions", p.NumRangeDeletions)
	case p.GlobalSeqno != 0:
		return unsupportedf("ingested file with global sequence number %d", p.GlobalSeqno)
	case p.FormatVersion != 0:
		return unsupportedf("table format %d is not block-based", p.FormatVersion)
	}
	return nil
}

// metaBlocks is what the metaindex names that matters here.
type metaBlocks struct {
	properties, rangeDel handle
	hasProperties        bool
}

// parseMetaindex reads the metaindex block (meta block name → handle).
func parseMetaindex(block []byte) (metaBlocks, error) {
	var m metaBlocks
	ents, err := entries(block)
	if err != nil {
		return m, err
	}
	var it blockIter
	it.reset(ents, false)
	for {
		_, ok, err := it.next()
		if err != nil || !ok {
			return m, err
		}
		d := decoder{b: it.value}
		h := decodeHandle(&d)
		if d.err != nil {
			return m, d.err
		}
		switch name := string(it.key); {
		case name == "rocksdb.properties":
			m.properties, m.hasProperties = h, true
		case name == "rocksdb.range_del":
			m.rangeDel = h
		case name == "rocksdb.compression_dict":
			return m, unsupportedf("compression dictionary (meta block %q)", name)
		case strings.HasPrefix(name, "rocksdb.hashindex"):
			return m, unsupportedf("hash index (meta block %q)", name)
		}
	}
}
