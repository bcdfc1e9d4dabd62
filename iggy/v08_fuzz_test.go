package iggy

import "testing"

// FuzzDecode08 feeds arbitrary bytes to the 0.8 reply decoders: they must
// return an error or a result, never panic, and never return a message
// that reaches past the reply.
func FuzzDecode08(f *testing.F) {
	topic := make([]byte, 51, 60)
	topic[50] = 3
	topic = append(topic, "abc"...)
	f.Add(topic)
	polled := le.AppendUint32(nil, 1)
	polled = le.AppendUint64(polled, 9)
	polled = le.AppendUint32(polled, 1)
	h := make([]byte, header08Bytes)
	le.PutUint32(h[52:], 2)
	polled = append(append(polled, h...), 'h', 'i')
	f.Add(polled)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if tp, err := decodeTopic08(b); err == nil && len(tp.Name) > len(b) {
			t.Fatalf("topic name longer than the reply")
		}
		p, err := decodePolled08(b)
		if err != nil {
			return
		}
		total := 0
		for _, m := range p.Messages {
			total += len(m.Payload) + len(m.UserHeaders) + header08Bytes
		}
		if total > len(b) {
			t.Fatalf("decoded %d bytes of messages from %d", total, len(b))
		}
	})
}
