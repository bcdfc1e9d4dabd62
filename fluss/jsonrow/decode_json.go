package jsonrow

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fluss-iggy/fluss-iggy/fluss/types"
)

// The typed JSON byte path: each value is parsed for the type of its
// column straight into the row's slots.

// parseTopRow parses the row object of AppendJSON.
func (b *RowBuilder) parseTopRow(keysOnly bool) error {
	c := b.skipWS()
	switch {
	case b.pos >= len(b.data):
		return &DecodeError{Reason: "no JSON object: the input is empty"}
	case c != '{':
		if !startsValue(c) {
			return b.syntax("expected a JSON object")
		}
		return &DecodeError{Value: b.valueText(b.pos), Reason: "is " + jsonKind(c) + ", want a JSON object (a row)"}
	}
	if err := b.parseRow(b.root, 0, keysOnly); err != nil {
		return err
	}
	if b.skipWS(); b.pos != len(b.data) {
		return b.syntax("expected the end of the input after the row object")
	}
	return nil
}

func startsValue(c byte) bool {
	return c == '"' || c == '{' || c == '[' || c == 't' || c == 'f' || c == 'n' || c == '-' || c >= '0' && c <= '9'
}

// newSlots appends k null slots to the tape and returns the first's index.
func (b *RowBuilder) newSlots(k int) int32 {
	at := len(b.tape)
	b.tape = slices.Grow(b.tape, k)[:at+k]
	clear(b.tape[at:])
	return int32(at)
}

// setList marks slot si a non-null ARRAY or MAP of count elements from first.
func (b *RowBuilder) setList(si, first int32, count int) {
	s := &b.tape[si]
	s.flags |= slotSet
	s.i, s.j = int64(first), int64(count)
}

// parseRow parses the object at pos ('{') into the fields of n, slots
// from base on. keysOnly (top level only) skips the values of non-key
// columns.
func (b *RowBuilder) parseRow(n *dnode, base int32, keysOnly bool) error {
	b.pos++
	top := n == b.root
	unknown := b.names()
	defer unknown.done()
	if b.skipWS() == '}' {
		b.pos++
		return b.checkMissing(n, base, keysOnly)
	}
	hint := 0
	for more := true; more; {
		k, err := b.objectKey()
		if err != nil {
			return err
		}
		f := n.lookup(k, hint)
		switch {
		case f < 0 && !b.cfg.ignoreUnknown:
			return unknownKey(n, k, top)
		case f < 0:
			if unknown.add(k) {
				return b.duplicateKey(k)
			}
			err = b.skipValue(0)
		default:
			hint = f + 1
			si := base + int32(f)
			if b.tape[si].flags&slotSeen != 0 {
				return b.duplicateKey(k)
			}
			b.tape[si].flags |= slotSeen
			if keysOnly && !b.isKey[f] {
				if err = b.skipValue(0); err != nil {
					if e, ok := err.(*DecodeError); ok {
						e.Type = n.fields[f].typ
					}
				}
			} else {
				err = b.parseValue(n.fields[f], si)
			}
			err = inField(err, n, f, top)
		}
		if err != nil {
			return err
		}
		if more, err = b.next('}'); err != nil {
			return err
		}
	}
	return b.checkMissing(n, base, keysOnly)
}

// lookup returns the index of the field named k, trying hint (the field
// after the last one found) first.
func (n *dnode) lookup(k []byte, hint int) int {
	if hint < len(n.names) && n.names[hint] == string(k) {
		return hint
	}
	if f, ok := n.index[string(k)]; ok {
		return f
	}
	return -1
}

// checkMissing fails on a NOT NULL field of n whose key did not appear.
func (b *RowBuilder) checkMissing(n *dnode, base int32, keysOnly bool) error {
	top := n == b.root
	for f, fn := range n.fields {
		if fn.nullable || b.tape[base+int32(f)].flags&slotSeen != 0 || top && keysOnly && !b.isKey[f] {
			continue
		}
		return inField(&DecodeError{Type: fn.typ, Reason: "missing, and the type is NOT NULL"}, n, f, top)
	}
	return nil
}

// unknownKey is the error of a key that names no field of n.
func unknownKey(n *dnode, k []byte, top bool) error {
	what := "field"
	if top {
		what = "column"
	}
	return &DecodeError{Reason: fmt.Sprintf("unknown key %s: no %s of that name (%ss: %s)",
		shorten(string(appendString(nil, string(k)))), what, what, nameList(n.names))}
}

// nameList joins names for an error, cut after about 200 bytes.
func nameList(names []string) string {
	var sb strings.Builder
	for i, s := range names {
		if i > 0 {
			sb.WriteString(", ")
		}
		if sb.Len() > 200 {
			fmt.Fprintf(&sb, "... (%d in all)", len(names))
			break
		}
		sb.WriteString(s)
	}
	return sb.String()
}

// inField prefixes the path of an error of field f of n.
func inField(err error, n *dnode, f int, top bool) error {
	if top {
		return inPath(err, n.names[f])
	}
	return inPath(err, "."+n.names[f])
}

// inPath prefixes seg to the path of a *DecodeError.
func inPath(err error, seg string) error {
	if e, ok := err.(*DecodeError); ok {
		e.Path = seg + e.Path
	}
	return err
}

// bad is the error of a value that does not fit its type; the caller
// fills in the type, the value and the path.
func bad(reason string) error { return &DecodeError{Reason: reason, showValue: true} }

// nullErr is the error of a null where the type is NOT NULL.
func nullErr() error { return &DecodeError{Reason: "null for a NOT NULL type"} }

// parseValue parses the value at pos into slot si, for n.
func (b *RowBuilder) parseValue(n *dnode, si int32) error {
	c := b.skipWS()
	start := b.pos
	var err error
	switch {
	case c == 'n':
		if err = b.literal("null"); err == nil && !n.nullable {
			err = nullErr()
		}
	case c == '"':
		var s []byte
		if s, err = b.stringToken(&b.tmp); err == nil {
			err = b.setString(n, si, s)
		}
	case c == '-' || c >= '0' && c <= '9':
		var num []byte
		if num, err = b.numberToken(); err == nil {
			err = b.setNumber(n, si, num)
		}
	case c == 't' || c == 'f':
		word := "true"
		if c == 'f' {
			word = "false"
		}
		if err = b.literal(word); err == nil {
			err = b.setBool(n, si, c == 't')
		}
	case c == '[' || c == '{':
		err = b.parseNested(n, si, c)
	default:
		err = b.syntax("expected a value")
	}
	if err == nil {
		return nil
	}
	if e, ok := err.(*DecodeError); ok && e.Type == "" {
		e.Type = n.typ
		if e.showValue {
			e.Value = b.valueText(start)
		}
	}
	return err
}

// parseNested parses an array or object (c is its first byte) for n.
func (b *RowBuilder) parseNested(n *dnode, si int32, c byte) error {
	switch {
	case c == '[' && n.kind == types.KindArray:
		return b.parseArray(n, si)
	case c == '[' && n.kind == types.KindMap:
		return b.parseMapEntries(n, si)
	case c == '{' && n.kind == types.KindMap:
		return b.parseMapObject(n, si)
	case c == '{' && n.kind == types.KindRow:
		base := b.newSlots(len(n.fields))
		b.setList(si, base, len(n.fields))
		return b.parseRow(n, base, false)
	}
	return bad("is " + jsonKind(c) + ", " + n.want)
}

// parseArray parses the array at pos into an ARRAY slot.
func (b *RowBuilder) parseArray(n *dnode, si int32) error {
	b.pos++
	var first, prev int32
	count := 0
	if b.skipWS() == ']' {
		b.pos++
		b.setList(si, 0, 0)
		return nil
	}
	for more := true; more; {
		e := b.newSlots(1)
		if count == 0 {
			first = e
		} else {
			b.tape[prev].next = e
		}
		prev = e
		if err := b.parseValue(n.elem, e); err != nil {
			return inPath(err, "["+strconv.Itoa(count)+"]")
		}
		count++
		var err error
		if more, err = b.next(']'); err != nil {
			return err
		}
	}
	b.setList(si, first, count)
	return nil
}

// parseMapEntries parses a MAP given as an array of {"key","value"} objects.
func (b *RowBuilder) parseMapEntries(n *dnode, si int32) error {
	b.pos++
	var first, prev int32
	count := 0
	if b.skipWS() == ']' {
		b.pos++
		b.setList(si, 0, 0)
		return nil
	}
	for more := true; more; {
		e := b.newSlots(2)
		if count == 0 {
			first = e
		} else {
			b.tape[prev].next = e
		}
		prev = e
		if err := b.parseEntry(n, e); err != nil {
			return inPath(err, "["+strconv.Itoa(count)+"]")
		}
		count++
		var err error
		if more, err = b.next(']'); err != nil {
			return err
		}
	}
	b.setList(si, first, count)
	b.dedupe(n, si)
	return nil
}

// parseEntry parses one {"key":…,"value":…} object into slots e (key) and
// e+1 (value); other members are skipped, as the Java tool does.
func (b *RowBuilder) parseEntry(n *dnode, e int32) error {
	if c := b.skipWS(); c != '{' {
		if !startsValue(c) {
			return b.syntax("expected a MAP entry object")
		}
		return &DecodeError{Value: b.valueText(b.pos), Reason: `is ` + jsonKind(c) + `, want a {"key":…,"value":…} object`}
	}
	b.pos++
	var seen [2]bool
	if b.skipWS() == '}' {
		b.pos++
	} else if err := b.parseEntryMembers(n, e, &seen); err != nil {
		return err
	}
	if !seen[0] {
		return inPath(&DecodeError{Type: n.key.typ, Reason: "missing, and a MAP key is NOT NULL"}, ".key")
	}
	if !seen[1] && !n.val.nullable {
		return inPath(&DecodeError{Type: n.val.typ, Reason: "missing, and the type is NOT NULL"}, ".value")
	}
	return nil
}

// parseEntryMembers parses the members of a MAP entry object up to its '}'.
func (b *RowBuilder) parseEntryMembers(n *dnode, e int32, seen *[2]bool) error {
	other := b.names()
	defer other.done()
	for more := true; more; {
		k, err := b.objectKey()
		if err != nil {
			return err
		}
		switch x := string(k); {
		case x == "key" || x == "value":
			at, seg, vn := 0, ".key", n.key
			if x == "value" {
				at, seg, vn = 1, ".value", n.val
			}
			if seen[at] {
				return b.duplicateKey(k)
			}
			seen[at] = true
			err = inPath(b.parseValue(vn, e+int32(at)), seg)
		case other.add(k):
			return b.duplicateKey(k)
		default:
			err = b.skipValue(0)
		}
		if err != nil {
			return err
		}
		if more, err = b.next('}'); err != nil {
			return err
		}
	}
	return nil
}
