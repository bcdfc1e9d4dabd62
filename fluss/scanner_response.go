package fluss

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// A FetchLog response is decoded by hand rather than with proto.Unmarshal
// so that each bucket's records slice aliases the response body: the
// decoded Arrow arrays then point into the bytes read from the socket, and
// a 16 MiB response is never copied.

// fetchBucketResp is one PbFetchLogRespForBucket.
type fetchBucketResp struct {
	partitionID int64 // NoPartition when absent
	bucket      int32
	errCode     int32
	errMsg      string
	hw          int64 // -1 when absent
	records     []byte
	remote      []byte // PbRemoteLogFetchInfo, undecoded
	// filteredEnd is how far a Fluss 1.0 server read while dropping
	// batches a filter excluded (-1 when absent).
	filteredEnd int64
}

type fetchTableResp struct {
	tableID int64
	buckets []fetchBucketResp
}

type fetchResp struct {
	tables []fetchTableResp
}

func (r *fetchResp) find(tableID, partitionID int64, bucket int32) (*fetchBucketResp, bool) {
	for i := range r.tables {
		t := &r.tables[i]
		if t.tableID != tableID {
			continue
		}
		for j := range t.buckets {
			b := &t.buckets[j]
			if b.partitionID == partitionID && b.bucket == bucket {
				return b, true
			}
		}
	}
	return nil, false
}

var errTruncatedProto = errors.New("truncated protobuf field")

// parseFetchResponse decodes a FetchLogResponse body. Unknown fields are
// skipped, as proto2 parsers do.
func parseFetchResponse(b []byte) (*fetchResp, error) {
	r := &fetchResp{}
	err := walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num == 1 && typ == protowire.BytesType { // tables_resp
			t, err := parseFetchTable(v)
			if err != nil {
				return fmt.Errorf("tables_resp: %w", err)
			}
			r.tables = append(r.tables, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decoding FetchLogResponse: %w", err)
	}
	return r, nil
}

func parseFetchTable(b []byte) (fetchTableResp, error) {
	var t fetchTableResp
	err := walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			t.tableID = int64(n)
		case num == 2 && typ == protowire.BytesType:
			bk, err := parseFetchBucket(v)
			if err != nil {
				return fmt.Errorf("buckets_resp: %w", err)
			}
			t.buckets = append(t.buckets, bk)
		}
		return nil
	})
	return t, err
}

func parseFetchBucket(b []byte) (fetchBucketResp, error) {
	bk := fetchBucketResp{partitionID: NoPartition, hw: -1, filteredEnd: -1}
	err := walkFields(b, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			if typ == protowire.VarintType {
				bk.partitionID = int64(n)
			}
		case 2:
			if typ == protowire.VarintType {
				bk.bucket = int32(n)
			}
		case 3:
			if typ == protowire.VarintType {
				bk.errCode = int32(n)
			}
		case 4:
			if typ == protowire.BytesType {
				bk.errMsg = string(v)
			}
		case 5:
			if typ == protowire.VarintType {
				bk.hw = int64(n)
			}
		case 7:
			if typ == protowire.BytesType {
				bk.remote = v
			}
		case 8:
			if typ == protowire.BytesType {
				bk.records = v
			}
		case 9:
			if typ == protowire.VarintType {
				bk.filteredEnd = int64(n)
			}
		}
		return nil
	})
	return bk, err
}

// walkFields calls fn for every field of a message: v holds the bytes of
// length-delimited fields, n the value of varint and fixed fields.
func walkFields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return protowire.ParseError(l)
		}
		b = b[l:]
		var (
			v []byte
			n uint64
		)
		switch typ {
		case protowire.VarintType:
			n, l = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, l = protowire.ConsumeFixed32(b)
			n = uint64(x)
		case protowire.Fixed64Type:
			n, l = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, l = protowire.ConsumeBytes(b)
		default:
			l = protowire.ConsumeFieldValue(num, typ, b)
		}
		if l < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(l))
		}
		if l > len(b) {
			return fmt.Errorf("field %d: %w", num, errTruncatedProto)
		}
		b = b[l:]
		if err := fn(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}
