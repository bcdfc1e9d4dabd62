package iggyinput

import (
	"encoding/hex"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/fluss-iggy/fluss-iggy/iggy"
)

// MetaHeaderError is set, instead of the user headers, on a message whose
// header block does not parse: the message is delivered with the reason
// rather than stopping the partition.
const MetaHeaderError = "iggy_header_error"

// newMessage makes a polled message a Benthos message: its payload, the
// input's metadata and its user headers.
func newMessage(names [2]string, partition uint32, pm *iggy.PolledMessage) *service.Message {
	m := service.NewMessage(pm.Payload)
	if len(pm.UserHeaders) > 0 {
		hs, err := iggy.ParseHeaders(pm.UserHeaders)
		if err != nil {
			m.MetaSetMut(MetaHeaderError, err.Error())
		}
		for _, h := range hs {
			m.MetaSetMut(h.Key.String(), h.Value.Any())
		}
	}
	m.MetaSetMut(MetaStream, names[0])
	m.MetaSetMut(MetaTopic, names[1])
	m.MetaSetMut(MetaPartition, int64(partition))
	m.MetaSetMut(MetaOffset, int64(pm.Offset))
	m.MetaSetMut(MetaTimestamp, int64(pm.Timestamp))
	m.MetaSetMut(MetaOriginTimestamp, int64(pm.OriginTimestamp))
	m.MetaSetMut(MetaMessageID, messageID(pm.ID))
	return m
}

// messageID renders Iggy's little-endian 128-bit message id as a UUID of
// the number read big-endian, the form the iggy output parses back to the
// same id.
func messageID(id [16]byte) string {
	var be [16]byte
	for i := range be {
		be[i] = id[15-i]
	}
	h := hex.EncodeToString(be[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
