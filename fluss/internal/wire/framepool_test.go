package wire

import (
	"context"
	"testing"
	"unsafe"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-iggy/fluss-iggy/fluss/internal/pb"
)

// TestWithFrameRelease: a call's frame handed back with WithFrameRelease
// holds the next large response, whose body is read whole into it.
func TestWithFrameRelease(t *testing.T) {
	big := func(i int32) *pb.GetTableSchemaResponse {
		json := make([]byte, 100<<10)
		for j := range json {
			json[j] = byte(i)
		}
		return &pb.GetTableSchemaResponse{SchemaId: proto.Int32(i), SchemaJson: json}
	}
	s := newFakeServer(t, func(sc *serverConn) {
		for {
			r, ok := sc.read()
			if !ok {
				return
			}
			sc.respond(ResponseSuccess, r.id, big(decodeSchemaReq(t, r)))
		}
	})
	c := dialRaw(t, s, Config{})
	var first []byte
	for i := int32(1); i <= 3; i++ {
		var release func()
		body, err := c.CallRaw(context.Background(), GetTableSchema, schemaReq(i), WithVersion(0), WithFrameRelease(&release))
		if err != nil || release == nil {
			t.Fatalf("call %d: %v (release set: %v)", i, err, release != nil)
		}
		var resp pb.GetTableSchemaResponse
		if err := proto.Unmarshal(body, &resp); err != nil || !proto.Equal(&resp, big(i)) {
			t.Fatalf("call %d: response %d with %d bytes of JSON, %v", i, resp.GetSchemaId(), len(resp.GetSchemaJson()), err)
		}
		if i == 1 {
			first = body
		} else if unsafe.SliceData(body[len(body)-1:]) != unsafe.SliceData(first[len(first)-1:]) {
			t.Errorf("call %d: the response was not read into the frame handed back", i)
		}
		release()
	}
}
