package sst

import (
	"encoding/binary"
)

const (
	footerLen    = 53 // checksum type, two handles padded to 40 bytes, version, magic
	trailerLen   = 5  // compression type byte + checksum after every block
	tableMagic   = 0x88e241b785f4cff7
	legacyMagic  = 0xdb4775248b80fb57 // format version 0 (LevelDB-style footer)
	minFormat    = 2                  // compressed blocks carry their size (compress_format_version 2)
	maxFormat    = 5                  // format version 6 changed the footer and checksums
	checksumNone = 0
	checksumCRC  = 1
)

// handle locates a block: its offset and size, trailer excluded.
type handle struct {
	offset, size uint64
}

// decodeHandle reads a BlockHandle (two varint64).
func decodeHandle(d *decoder) handle {
	return handle{offset: d.uvarint64("block offset"), size: d.uvarint64("block size")}
}

// footer is what the last footerLen bytes of a table say.
type footer struct {
	checksum  byte
	metaindex handle
	index     handle
	version   uint32
}

// parseFooter decodes the footer of format versions 1 to 5 (table/format.cc).
func parseFooter(b []byte) (footer, error) {
	var f footer
	if len(b) != footerLen {
		return f, corruptf("file shorter than a footer (%d bytes)", len(b))
	}
	switch magic := binary.LittleEndian.Uint64(b[footerLen-8:]); magic {
	case tableMagic:
	case legacyMagic:
		return f, unsupportedf("legacy block-based table (format version 0)")
	default:
		return f, unsupportedf("not a block-based table (magic %#x)", magic)
	}
	f.version = binary.LittleEndian.Uint32(b[footerLen-12:])
	if f.version < minFormat || f.version > maxFormat {
		return f, unsupportedf("format version %d (want %d to %d)", f.version, minFormat, maxFormat)
	}
	f.checksum = b[0]
	if f.checksum != checksumNone && f.checksum != checksumCRC {
		return f, unsupportedf("checksum type %d (want 1, CRC32c)", f.checksum)
	}
	d := decoder{b: b[1 : footerLen-12]}
	f.metaindex = decodeHandle(&d)
	f.index = decodeHandle(&d)
	return f, d.err
}
