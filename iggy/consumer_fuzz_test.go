package iggy

import "testing"

// FuzzDecodeConsumer feeds arbitrary bytes to the consumer reply decoders
// of both dialects (group, offset, 0.9 assignment): they must return an
// error or a result, never panic, and never return more than the reply
// holds.
func FuzzDecodeConsumer(f *testing.F) {
	group := append(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 1), 3), 2), 2, 'c', 'g')
	group = le.AppendUint32(le.AppendUint32(le.AppendUint32(group, 0), 2), 0)
	group = le.AppendUint32(le.AppendUint32(le.AppendUint32(group, 2), 1), 2)
	f.Add(group)
	f.Add(le.AppendUint64(le.AppendUint64(le.AppendUint32(nil, 1), 9), 4))
	f.Add(le.AppendUint32(le.AppendUint32(le.AppendUint64(nil, 7), 1), 3))
	f.Add([]byte{})
	f.Add(append(le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 1), 3), 1<<30), 1, 'g'))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, members := range []bool{false, true} {
			g, err := decodeGroup(b, members)
			if err != nil {
				continue
			}
			size := 13 + len(g.Name)
			for _, m := range g.Members {
				size += 8 + 4*len(m.Partitions)
			}
			if size > len(b) {
				t.Fatalf("decoded a group of %d bytes from %d", size, len(b))
			}
		}
		if _, stored, err := decodeOffset(b); err == nil && stored != (len(b) == 20) {
			t.Fatalf("stored %v from %d bytes", stored, len(b))
		}
		if _, parts, member, err := v09DecodeAssignment(b); err == nil && (member && 12+4*len(parts) != len(b) || !member && len(b) != 0) {
			t.Fatalf("%d partitions, member %v from %d bytes", len(parts), member, len(b))
		}
	})
}
