package jsonrow

import (
	"encoding/binary"
	"math"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// parseMapObject parses a MAP given as an object: each key is read as a
// string of the key type (as the Java tool does, so it works for CHAR,
// STRING, DECIMAL, DATE, TIME, TIMESTAMP, BINARY keys and fails for
// numbers and booleans).
func (b *RowBuilder) parseMapObject(n *dnode, si int32) error {
	b.pos++
	if b.skipWS() == '}' {
		b.pos++
		b.setList(si, 0, 0)
		return nil
	}
	names := b.names()
	defer names.done()
	var first, prev int32
	count := 0
	for more := true; more; {
		k, err := b.objectKey()
		if err != nil {
			return err
		}
		if names.add(k) {
			return b.duplicateKey(k)
		}
		e := b.newSlots(2)
		if count == 0 {
			first = e
		} else {
			b.tape[prev].next = e
		}
		prev = e
		if err := b.setString(n.key, e, k); err != nil {
			return inPath(keyErr(err, n, k), ".key")
		}
		if err := b.parseValue(n.val, e+1); err != nil {
			return inPath(err, "["+shorten(string(names.last()))+"]")
		}
		count++
		if more, err = b.next('}'); err != nil {
			return err
		}
	}
	b.setList(si, first, count)
	if !n.objectKeys { // keys of other types can be equal with different text
		b.dedupe(n, si)
	}
	return nil
}

// keyErr completes the error of an object key that is no value of the
// MAP's key type.
func keyErr(err error, n *dnode, k []byte) error {
	if e, ok := err.(*DecodeError); ok && e.Type == "" {
		e.Type = n.key.typ
		e.Value = shorten(string(appendString(nil, string(k))))
	}
	return err
}

// dedupe merges the entries of the MAP in slot si whose keys are equal as
// Java compares them, the way a java.util.LinkedHashMap built in order
// does: the first entry keeps its place and takes the value of the last.
// BINARY/BYTES keys are byte arrays in Java, equal only to themselves:
// they are never merged.
func (b *RowBuilder) dedupe(n *dnode, si int32) {
	count := int(b.tape[si].j)
	if count < 2 || n.binaryKeys {
		return
	}
	mark, bytes := len(b.fpAt), len(b.fps)
	defer func() { b.fps, b.fpAt = b.fps[:bytes], b.fpAt[:mark] }()
	b.ents = b.ents[:0]
	for e, k := int32(b.tape[si].i), 0; k < count; e, k = b.tape[e].next, k+1 {
		b.fps = b.appendFingerprint(b.fps, n.key, e)
		b.fpAt = append(b.fpAt, int32(len(b.fps)))
		b.ents = append(b.ents, e)
	}
	fp := func(k int) string {
		start := bytes
		if k > 0 {
			start = int(b.fpAt[mark+k-1])
		}
		return unsafeString(b.fps[start:b.fpAt[mark+k]])
	}
	var firstOf map[string]int
	if count > nameSetLinear {
		firstOf = make(map[string]int, count)
	}
	merged := false
	for k := 0; k < count; k++ {
		at := -1
		if firstOf != nil {
			if f, ok := firstOf[fp(k)]; ok {
				at = f
			} else {
				firstOf[fp(k)] = k
			}
		} else {
			for f := 0; f < k && at < 0; f++ {
				if b.ents[f] >= 0 && fp(f) == fp(k) {
					at = f
				}
			}
		}
		if at >= 0 {
			b.tape[b.ents[at]+1] = b.tape[b.ents[k]+1]
			b.ents[k] = -1
			merged = true
		}
	}
	if merged {
		b.relink(si)
	}
}

// relink drops the entries marked -1 in b.ents from the MAP in slot si.
func (b *RowBuilder) relink(si int32) {
	var first, prev int32
	count := 0
	for _, e := range b.ents {
		if e < 0 {
			continue
		}
		if count == 0 {
			first = e
		} else {
			b.tape[prev].next = e
		}
		prev = e
		count++
	}
	b.tape[si].i, b.tape[si].j = int64(first), int64(count)
}

// appendFingerprint appends bytes that are equal for two slots of n
// exactly when Java's equals holds for their values (Float and Double
// compare bits with one NaN; nested byte arrays compare by content).
func (b *RowBuilder) appendFingerprint(dst []byte, n *dnode, si int32) []byte {
	s := &b.tape[si]
	if s.flags&slotSet == 0 {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	switch n.kind {
	case types.KindFloat:
		if f := math.Float32frombits(uint32(s.i)); f != f {
			return binary.LittleEndian.AppendUint64(dst, uint64(math.Float32bits(float32(math.NaN()))))
		}
	case types.KindDouble:
		if f := math.Float64frombits(uint64(s.i)); f != f {
			return binary.LittleEndian.AppendUint64(dst, math.Float64bits(math.NaN()))
		}
	case types.KindChar, types.KindString, types.KindBinary, types.KindBytes:
		dst = binary.LittleEndian.AppendUint64(dst, uint64(s.j-s.i))
		return append(dst, b.text[s.i:s.j]...)
	case types.KindDecimal, types.KindTimestamp, types.KindTimestampLTZ:
		dst = binary.LittleEndian.AppendUint64(dst, uint64(s.i))
		return binary.LittleEndian.AppendUint64(dst, uint64(s.j))
	case types.KindArray, types.KindMap:
		dst = binary.LittleEndian.AppendUint64(dst, uint64(s.j))
		for e, k := int32(s.i), s.j; k > 0; e, k = b.tape[e].next, k-1 {
			if n.kind == types.KindArray {
				dst = b.appendFingerprint(dst, n.elem, e)
				continue
			}
			dst = b.appendFingerprint(dst, n.key, e)
			dst = b.appendFingerprint(dst, n.val, e+1)
		}
		return dst
	case types.KindRow:
		for f, fn := range n.fields {
			dst = b.appendFingerprint(dst, fn, int32(s.i)+int32(f))
		}
		return dst
	}
	return binary.LittleEndian.AppendUint64(dst, uint64(s.i))
}
