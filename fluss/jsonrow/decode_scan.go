package jsonrow

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
	"unsafe"
)

// The tokenizer of the JSON byte path: a hand-written scanner over
// RowBuilder.data at RowBuilder.pos, strict JSON as the Java tool's parser
// reads it (whitespace is space, tab, CR, LF; no trailing commas; every
// string escape of RFC 8259), with invalid UTF-8 replaced as Java's
// decoder does.

// maxSkipDepth bounds the nesting of values that are skipped (unknown
// keys), which no type bounds.
const maxSkipDepth = 1000

// syntax returns an invalid-JSON error at the current position.
func (b *RowBuilder) syntax(what string) error {
	if b.pos >= len(b.data) {
		return &DecodeError{Reason: fmt.Sprintf("invalid JSON: unexpected end of input, %s", what)}
	}
	return &DecodeError{Reason: fmt.Sprintf("invalid JSON at byte %d: %s, found %s", b.pos, what, quoteByte(b.data[b.pos]))}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7F {
		return fmt.Sprintf("'%c'", c)
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// skipWS skips whitespace and returns the next byte, 0 at the end.
func (b *RowBuilder) skipWS() byte {
	for b.pos < len(b.data) {
		switch c := b.data[b.pos]; c {
		case ' ', '\t', '\n', '\r':
			b.pos++
		default:
			return c
		}
	}
	return 0
}

// literal consumes the literal word (true, false, null) at pos.
func (b *RowBuilder) literal(word string) error {
	if len(b.data)-b.pos < len(word) || string(b.data[b.pos:b.pos+len(word)]) != word {
		return b.syntax("expected " + word)
	}
	b.pos += len(word)
	return nil
}

// numberToken consumes the number at pos and returns its text, which is a
// JSON number: like the Java tool, the run of number characters is taken
// and then checked.
func (b *RowBuilder) numberToken() ([]byte, error) {
	start := b.pos
	for b.pos < len(b.data) {
		switch c := b.data[b.pos]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			b.pos++
			continue
		}
		break
	}
	tok := b.data[start:b.pos]
	if !validNumber(unsafeString(tok)) {
		return nil, &DecodeError{Reason: fmt.Sprintf("invalid JSON at byte %d: invalid number %s", start, shorten(string(tok)))}
	}
	return tok, nil
}

// stringToken consumes the string at pos (at its '"') and returns its
// content: a slice of the input when it has no escape and is valid UTF-8,
// else the decoded text in *buf.
func (b *RowBuilder) stringToken(buf *[]byte) ([]byte, error) {
	d := b.data
	start := b.pos + 1
	i := start
	for {
		for i+8 <= len(d) && plain8(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		for i < len(d) && d[i] < utf8.RuneSelf && plainASCII[d[i]] {
			i++
		}
		if i >= len(d) {
			b.pos = i
			return nil, b.syntax("unterminated string")
		}
		c := d[i]
		if c == '"' {
			b.pos = i + 1
			return d[start:i], nil
		}
		if c < utf8.RuneSelf {
			break // an escape or a control character
		}
		r, size := utf8.DecodeRune(d[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	out, err := b.decodeString(append((*buf)[:0], d[start:i]...), i)
	*buf = out
	return out, err
}

// decodeString decodes the rest of a string from data[i:] (after what is
// already in out) up to its closing quote.
func (b *RowBuilder) decodeString(out []byte, i int) ([]byte, error) {
	d := b.data
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			b.pos = i + 1
			return out, nil
		case c == '\\':
			var err error
			if out, i, err = b.escape(out, i); err != nil {
				return out, err
			}
		case c < 0x20:
			b.pos = i
			return out, b.syntax("control character in a string (escape it)")
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, "\uFFFD"...)
				i += invalidUTF8Len(unsafeString(d[i:]))
				continue
			}
			out = append(out, d[i:i+size]...)
			i += size
		}
	}
	b.pos = i
	return out, b.syntax("unterminated string")
}

// escape decodes the escape at data[i] ('\\') into out and returns the
// index after it. A UTF-16 surrogate escape that is not half of a pair
// becomes '?', as Fluss's Java string encoding writes it.
func (b *RowBuilder) escape(out []byte, i int) ([]byte, int, error) {
	d := b.data
	if i+1 >= len(d) {
		b.pos = len(d)
		return out, i, b.syntax("unterminated escape")
	}
	switch e := d[i+1]; e {
	case '"', '\\', '/':
		return append(out, e), i + 2, nil
	case 'b':
		return append(out, '\b'), i + 2, nil
	case 'f':
		return append(out, '\f'), i + 2, nil
	case 'n':
		return append(out, '\n'), i + 2, nil
	case 'r':
		return append(out, '\r'), i + 2, nil
	case 't':
		return append(out, '\t'), i + 2, nil
	case 'u':
		r, ok := hex4(d, i+2)
		if !ok {
			b.pos = i
			return out, i, b.syntax(`\u must be followed by 4 hex digits`)
		}
		i += 6
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if lo, ok := hex4(d, i+2); ok && i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' && lo >= 0xDC00 && lo < 0xE000 {
				return utf8.AppendRune(out, 0x10000+(r-0xD800)<<10+(lo-0xDC00)), i + 6, nil
			}
			return append(out, '?'), i, nil
		case r >= 0xDC00 && r < 0xE000:
			return append(out, '?'), i, nil
		}
		return utf8.AppendRune(out, r), i, nil
	}
	b.pos = i
	return out, i, b.syntax("invalid escape")
}

// hex4 reads 4 hex digits at d[i:].
func hex4(d []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(d) {
		return 0, false
	}
	var r rune
	for _, c := range d[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// objectKey consumes `"key":` at pos (after whitespace) and returns the key.
func (b *RowBuilder) objectKey() ([]byte, error) {
	if b.skipWS() != '"' {
		return nil, b.syntax("expected a key")
	}
	k, err := b.stringToken(&b.key)
	if err != nil {
		return nil, err
	}
	if b.skipWS() != ':' {
		return nil, b.syntax("expected ':' after a key")
	}
	b.pos++
	return k, nil
}

// next consumes the ',' or the closing byte after a member or element and
// reports whether another one follows.
func (b *RowBuilder) next(closing byte) (bool, error) {
	switch b.skipWS() {
	case ',':
		b.pos++
		return true, nil
	case closing:
		b.pos++
		return false, nil
	}
	if closing == '}' {
		return false, b.syntax("expected ',' or '}' after an object member")
	}
	return false, b.syntax("expected ',' or ']' after an array element")
}

// skipValue consumes any JSON value, checking its syntax (and that no
// object has a key twice).
func (b *RowBuilder) skipValue(depth int) error {
	switch c := b.skipWS(); {
	case c == '"':
		_, err := b.stringToken(&b.tmp)
		return err
	case c == '-' || c >= '0' && c <= '9':
		_, err := b.numberToken()
		return err
	case c == 't':
		return b.literal("true")
	case c == 'f':
		return b.literal("false")
	case c == 'n':
		return b.literal("null")
	case c == '[' || c == '{':
		if depth >= maxSkipDepth {
			return b.syntax(fmt.Sprintf("values nested deeper than %d levels", maxSkipDepth))
		}
		b.pos++
		if c == '[' {
			return b.skipArray(depth)
		}
		return b.skipObject(depth)
	}
	return b.syntax("expected a value")
}

func (b *RowBuilder) skipArray(depth int) error {
	if b.skipWS() == ']' {
		b.pos++
		return nil
	}
	for more := true; more; {
		if err := b.skipValue(depth + 1); err != nil {
			return err
		}
		var err error
		if more, err = b.next(']'); err != nil {
			return err
		}
	}
	return nil
}

func (b *RowBuilder) skipObject(depth int) error {
	if b.skipWS() == '}' {
		b.pos++
		return nil
	}
	names := b.names()
	defer names.done()
	for more := true; more; {
		k, err := b.objectKey()
		if err != nil {
			return err
		}
		if names.add(k) {
			return b.duplicateKey(k)
		}
		if err := b.skipValue(depth + 1); err != nil {
			return err
		}
		if more, err = b.next('}'); err != nil {
			return err
		}
	}
	return nil
}

func (b *RowBuilder) duplicateKey(k []byte) error {
	return &DecodeError{Reason: fmt.Sprintf("key %s appears twice in an object", shorten(string(appendString(nil, string(k)))))}
}

// valueText returns the JSON text of the value starting at start, for an
// error (the whole value when it parses, else what follows start).
func (b *RowBuilder) valueText(start int) string {
	save := b.pos
	b.pos = start
	end := len(b.data)
	if b.skipValue(0) == nil {
		end = b.pos
	}
	b.pos = save
	return shorten(string(b.data[start:end]))
}

// jsonKind names the kind of JSON value starting with c.
func jsonKind(c byte) string {
	switch {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return "a number"
}

// unsafeString views b as a string without copying; b must not change
// while the string is used.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// nameSet detects keys that appear twice in one object, for the objects
// whose keys are not columns' (skipped objects, MAP objects, MAP entries).
// Its names are appended to RowBuilder.fps (after those of the objects
// around it); done drops them.
type nameSet struct {
	b     *RowBuilder
	mark  int // len(b.fpAt) at the start
	bytes int // len(b.fps) at the start
	set   map[string]struct{}
}

// nameSetLinear is the number of names compared one by one before a
// nameSet switches to a map.
const nameSetLinear = 16

func (b *RowBuilder) names() nameSet {
	return nameSet{b: b, mark: len(b.fpAt), bytes: len(b.fps)}
}

// add records k and reports whether it was recorded before.
func (s *nameSet) add(k []byte) bool {
	b := s.b
	switch {
	case s.set != nil:
		if _, dup := s.set[string(k)]; dup {
			return true
		}
		s.set[string(k)] = struct{}{}
	case len(b.fpAt)-s.mark < nameSetLinear:
		start := s.bytes
		for _, end := range b.fpAt[s.mark:] {
			if string(b.fps[start:end]) == string(k) {
				return true
			}
			start = int(end)
		}
	default:
		s.set = make(map[string]struct{}, 4*nameSetLinear)
		for i := s.mark; i < len(b.fpAt); i++ {
			s.set[string(s.name(i))] = struct{}{}
		}
		if _, dup := s.set[string(k)]; dup {
			return true
		}
		s.set[string(k)] = struct{}{}
	}
	b.fps = append(b.fps, k...)
	b.fpAt = append(b.fpAt, int32(len(b.fps)))
	return false
}

// name returns the i-th name recorded (an index into b.fpAt).
func (s *nameSet) name(i int) []byte {
	start := s.bytes
	if i > s.mark {
		start = int(s.b.fpAt[i-1])
	}
	return s.b.fps[start:s.b.fpAt[i]]
}

// last returns the name recorded last.
func (s *nameSet) last() []byte { return s.name(len(s.b.fpAt) - 1) }

// done forgets the names of the object.
func (s *nameSet) done() {
	s.b.fps = s.b.fps[:s.bytes]
	s.b.fpAt = s.b.fpAt[:s.mark]
}
