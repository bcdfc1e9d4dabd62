package sst

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"strings"
	"testing"
)

// firstBlock returns none.sst (uncompressed) and its first data block.
func firstBlock(t *testing.T) ([]byte, handle) {
	t.Helper()
	data, err := os.ReadFile("testdata/tables/none.sst")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Open(bytes.NewReader(data), int64(len(data)), "none.sst")
	if err != nil {
		t.Fatal(err)
	}
	var x indexIter
	x.reset(tb.index, tb.props.IndexValueIsDeltaEncoded)
	h, _, err := x.next()
	if err != nil {
		t.Fatal(err)
	}
	return data, h
}

// reseal recomputes the masked CRC32c of the block at h.
func reseal(data []byte, h handle) {
	crc := crc32.Checksum(data[h.offset:h.offset+h.size+1], castagnoli)
	binary.LittleEndian.PutUint32(data[h.offset+h.size+1:], (crc>>15|crc<<17)+0xa282ead8)
}

func readAll(data []byte, name string) (*Table, error) {
	tb, err := Open(bytes.NewReader(data), int64(len(data)), name)
	if err != nil {
		return nil, err
	}
	_, err = dumpMerged(Merge(tb))
	return tb, err
}

func TestChecksumMismatchNamesBlock(t *testing.T) {
	data, h := firstBlock(t)
	data[h.offset+3] ^= 0xff
	_, err := readAll(data, "bad.sst")
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "sst bad.sst: block at offset 0: data block: corrupt: checksum mismatch") {
		t.Fatalf("got %v", err)
	}
}

func TestMergeOperandFails(t *testing.T) {
	data, h := firstBlock(t)
	// The first entry: shared 0, key length, value length (one byte each),
	// then the key, whose trailer's low byte is the kind.
	keyLen := int(data[h.offset+1])
	data[h.offset+3+uint64(keyLen)-8] = byte(KindMerge)
	reseal(data, h)
	_, err := readAll(data, "merge.sst")
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "is a merge") {
		t.Fatalf("got %v", err)
	}
}

func TestDeleteHidesKey(t *testing.T) {
	data, h := firstBlock(t)
	keyLen := int(data[h.offset+1])
	data[h.offset+3+uint64(keyLen)-8] = byte(KindSingleDelete)
	reseal(data, h)
	tb, err := Open(bytes.NewReader(data), int64(len(data)), "del.sst")
	if err != nil {
		t.Fatal(err)
	}
	got, err := dumpMerged(Merge(tb))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(got, "\n"); n != int(tb.props.NumEntries)-1 || !strings.HasPrefix(got, "0x6B65793030303031 :") {
		t.Fatalf("%d rows, first %.40s", n, got)
	}
}

func TestTruncatedAndForeignFiles(t *testing.T) {
	data, _ := firstBlock(t)
	for name, in := range map[string][]byte{
		"empty":     nil,
		"truncated": data[:len(data)-1],
		"no magic":  append(append([]byte(nil), data[:len(data)-8]...), make([]byte, 8)...),
	} {
		_, err := Open(bytes.NewReader(in), int64(len(in)), name)
		var e *Error
		if !errors.As(err, &e) || e.File != name {
			t.Errorf("%s: got %v", name, err)
		}
	}
}
