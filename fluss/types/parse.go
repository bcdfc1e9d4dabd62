package types

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseDataType parses a type in the Fluss type syntax:
//
//	BOOLEAN, TINYINT, SMALLINT, INT | INTEGER, BIGINT, FLOAT, DOUBLE [PRECISION],
//	DECIMAL[(p[, s])] (also DEC, NUMERIC), CHAR[(n)], STRING, BINARY[(n)], BYTES,
//	DATE, TIME[(p)] [WITHOUT TIME ZONE], TIMESTAMP[(p)] [WITHOUT TIME ZONE],
//	TIMESTAMP_LTZ[(p)], TIMESTAMP[(p)] WITH LOCAL TIME ZONE,
//	ARRAY<t>, MAP<k, v>, ROW<name t ['description'], ...> (also ROW(...)),
//
// each optionally followed by NOT NULL (or NULL). Keywords are
// case-insensitive; field names may be quoted with backticks (“ escapes a
// backtick). The JSON root names (INTEGER, TIME_WITHOUT_TIME_ZONE, ...) are
// accepted too. Omitted parameters take the Fluss defaults: DECIMAL(10, 0),
// CHAR(1), BINARY(1), TIME(0), TIMESTAMP(6), TIMESTAMP_LTZ(6).
func ParseDataType(s string) (DataType, error) {
	if !utf8.ValidString(s) {
		// Fluss names and descriptions are Java strings: invalid UTF-8 could
		// not survive the schema JSON unchanged.
		return DataType{}, fmt.Errorf("parse type %q: not valid UTF-8", s)
	}
	p := &typeParser{lex: lexer{src: s}}
	p.next()
	t, err := p.parseType(0)
	if err != nil {
		return DataType{}, fmt.Errorf("parse type %q: %w", s, err)
	}
	if p.tok.kind != tokEOF {
		return DataType{}, fmt.Errorf("parse type %q: unexpected %s after the type", s, p.tok)
	}
	if err := t.Validate(); err != nil {
		return DataType{}, fmt.Errorf("parse type %q: %w", s, err)
	}
	return t, nil
}

// MustParseDataType is ParseDataType for tests and fixed declarations; it
// panics on error.
func MustParseDataType(s string) DataType {
	t, err := ParseDataType(s)
	if err != nil {
		panic(err)
	}
	return t
}

// ParseColumns parses a comma-separated column list such as
// "id BIGINT NOT NULL, name STRING COMMENT 'the name', tags ARRAY<STRING>".
func ParseColumns(s string) ([]Column, error) {
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("parse columns %q: not valid UTF-8", s)
	}
	p := &typeParser{lex: lexer{src: s}}
	p.next()
	var cols []Column
	for {
		name, err := p.ident()
		if err != nil {
			return nil, fmt.Errorf("parse columns %q: column %d: %w", s, len(cols)+1, err)
		}
		t, err := p.parseType(0)
		if err != nil {
			return nil, fmt.Errorf("parse columns %q: column %q: %w", s, name, err)
		}
		c := Column{Name: name, Type: t}
		if p.isKeyword("COMMENT") {
			p.next()
			if p.tok.kind != tokString {
				return nil, fmt.Errorf("parse columns %q: column %q: expected a quoted comment, got %s", s, name, p.tok)
			}
			c.Comment = p.tok.text
			p.next()
		}
		cols = append(cols, c)
		if p.tok.kind == tokEOF {
			break
		}
		if err := p.expect(tokComma); err != nil {
			return nil, fmt.Errorf("parse columns %q: after column %q: %w", s, name, err)
		}
	}
	s2 := Schema{Columns: cols}
	if err := s2.Validate(); err != nil {
		return nil, fmt.Errorf("parse columns %q: %w", s, err)
	}
	return cols, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokQuotedIdent
	tokString
	tokNumber
	tokLT
	tokGT
	tokLParen
	tokRParen
	tokComma
	tokInvalid
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of input"
	case tokInvalid:
		return fmt.Sprintf("invalid input %q at offset %d", t.text, t.pos)
	case tokString:
		return fmt.Sprintf("string '%s' at offset %d", t.text, t.pos)
	default:
		return fmt.Sprintf("%q at offset %d", t.text, t.pos)
	}
}

type lexer struct {
	src string
	pos int
}

func (l *lexer) next() token {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tokEOF, pos: start}
	}
	c := l.src[l.pos]
	switch {
	case c == '<':
		l.pos++
		return token{kind: tokLT, text: "<", pos: start}
	case c == '>':
		l.pos++
		return token{kind: tokGT, text: ">", pos: start}
	case c == '(':
		l.pos++
		return token{kind: tokLParen, text: "(", pos: start}
	case c == ')':
		l.pos++
		return token{kind: tokRParen, text: ")", pos: start}
	case c == ',':
		l.pos++
		return token{kind: tokComma, text: ",", pos: start}
	case c == '`' || c == '\'':
		q := c
		var b strings.Builder
		l.pos++
		for l.pos < len(l.src) {
			if l.src[l.pos] == q {
				if l.pos+1 < len(l.src) && l.src[l.pos+1] == q {
					b.WriteByte(q)
					l.pos += 2
					continue
				}
				l.pos++
				kind := tokQuotedIdent
				if q == '\'' {
					kind = tokString
				}
				return token{kind: kind, text: b.String(), pos: start}
			}
			b.WriteByte(l.src[l.pos])
			l.pos++
		}
		return token{kind: tokInvalid, text: l.src[start:], pos: start}
	case c >= '0' && c <= '9':
		for l.pos < len(l.src) && l.src[l.pos] >= '0' && l.src[l.pos] <= '9' {
			l.pos++
		}
		return token{kind: tokNumber, text: l.src[start:l.pos], pos: start}
	case isWordStart(c):
		for l.pos < len(l.src) && isWordPart(l.src[l.pos]) {
			l.pos++
		}
		return token{kind: tokWord, text: l.src[start:l.pos], pos: start}
	default:
		l.pos++
		return token{kind: tokInvalid, text: l.src[start:l.pos], pos: start}
	}
}

func isSpace(c byte) bool     { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isWordStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isWordPart(c byte) bool  { return isWordStart(c) || c >= '0' && c <= '9' }

type typeParser struct {
	lex lexer
	tok token
}

func (p *typeParser) next() { p.tok = p.lex.next() }

func (p *typeParser) isKeyword(kw string) bool {
	return p.tok.kind == tokWord && strings.EqualFold(p.tok.text, kw)
}

func (p *typeParser) expect(k tokKind) error {
	if p.tok.kind != k {
		want := map[tokKind]string{tokLT: "'<'", tokGT: "'>'", tokLParen: "'('", tokRParen: "')'", tokComma: "','", tokNumber: "a number"}[k]
		return fmt.Errorf("expected %s, got %s", want, p.tok)
	}
	p.next()
	return nil
}

func (p *typeParser) expectKeyword(kw string) error {
	if !p.isKeyword(kw) {
		return fmt.Errorf("expected %s, got %s", kw, p.tok)
	}
	p.next()
	return nil
}

func (p *typeParser) ident() (string, error) {
	switch p.tok.kind {
	case tokWord, tokQuotedIdent:
		s := p.tok.text
		if s == "" {
			return "", fmt.Errorf("empty name at offset %d", p.tok.pos)
		}
		p.next()
		return s, nil
	}
	return "", fmt.Errorf("expected a name, got %s", p.tok)
}

func (p *typeParser) number() (int, error) {
	if p.tok.kind != tokNumber {
		return 0, fmt.Errorf("expected a number, got %s", p.tok)
	}
	n, err := strconv.ParseInt(p.tok.text, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("number %s out of range", p.tok)
	}
	p.next()
	return int(n), nil
}

// optParams parses an optional "(a)" or "(a, b)"; max is 1 or 2.
func (p *typeParser) optParams(max int) ([]int, error) {
	if p.tok.kind != tokLParen {
		return nil, nil
	}
	p.next()
	var out []int
	for {
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		out = append(out, n)
		if p.tok.kind != tokComma || len(out) == max {
			break
		}
		p.next()
	}
	if err := p.expect(tokRParen); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *typeParser) parseType(depth int) (DataType, error) {
	if depth > maxNestingDepth {
		return DataType{}, fmt.Errorf("type nesting deeper than %d", maxNestingDepth)
	}
	if p.tok.kind != tokWord {
		return DataType{}, fmt.Errorf("expected a type, got %s", p.tok)
	}
	word := strings.ToUpper(p.tok.text)
	p.next()
	t, err := p.parseTypeName(word, depth)
	if err != nil {
		return DataType{}, err
	}
	switch {
	case p.isKeyword("NOT"):
		p.next()
		if err := p.expectKeyword("NULL"); err != nil {
			return DataType{}, err
		}
		t.Nullable = false
	case p.isKeyword("NULL"):
		p.next()
	}
	return t, nil
}

// parseTypeName parses what follows the type name word (already consumed):
// parameters, time zone suffixes, nested types.
func (p *typeParser) parseTypeName(word string, depth int) (DataType, error) {
	switch word {
	case "BOOLEAN", "BOOL":
		return Boolean(), nil
	case "TINYINT":
		return TinyInt(), nil
	case "SMALLINT":
		return SmallInt(), nil
	case "INT", "INTEGER":
		return Int(), nil
	case "BIGINT":
		return BigInt(), nil
	case "FLOAT":
		return Float(), nil
	case "DOUBLE":
		if p.isKeyword("PRECISION") {
			p.next()
		}
		return Double(), nil
	case "STRING":
		return String(), nil
	case "BYTES":
		return Bytes(), nil
	case "DATE":
		return Date(), nil
	case "DECIMAL", "DEC", "NUMERIC":
		return p.parseDecimal()
	case "CHAR", "BINARY":
		return p.parseFixedLength(word)
	case "TIME", "TIME_WITHOUT_TIME_ZONE":
		return p.parseTime(word)
	case "TIMESTAMP", "TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_LTZ", "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
		return p.parseTimestamp(word)
	case "ARRAY":
		return p.parseArray(depth)
	case "MAP":
		return p.parseMap(depth)
	case "ROW":
		return p.parseRow(depth)
	}
	return DataType{}, fmt.Errorf("unknown type %q", word)
}

func (p *typeParser) parseDecimal() (DataType, error) {
	ps, err := p.optParams(2)
	if err != nil {
		return DataType{}, fmt.Errorf("DECIMAL: %w", err)
	}
	t := Decimal(DefaultDecimalPrecision, DefaultDecimalScale)
	if len(ps) > 0 {
		t.Precision = ps[0]
		t.Scale = 0
	}
	if len(ps) > 1 {
		t.Scale = ps[1]
	}
	return t, nil
}

// parseFixedLength parses the optional length of CHAR and BINARY.
func (p *typeParser) parseFixedLength(word string) (DataType, error) {
	ps, err := p.optParams(1)
	if err != nil {
		return DataType{}, fmt.Errorf("%s: %w", word, err)
	}
	n := DefaultLength
	if len(ps) > 0 {
		n = ps[0]
	}
	if word == "CHAR" {
		return Char(n), nil
	}
	return Binary(n), nil
}

func (p *typeParser) parseTime(word string) (DataType, error) {
	ps, err := p.optParams(1)
	if err != nil {
		return DataType{}, fmt.Errorf("TIME: %w", err)
	}
	t := Time(DefaultTimePrecision)
	if len(ps) > 0 {
		t.Precision = ps[0]
	}
	if word == "TIME" && p.isKeyword("WITHOUT") {
		if err := p.timeZoneSuffix(false); err != nil {
			return DataType{}, fmt.Errorf("TIME: %w", err)
		}
	}
	return t, nil
}

func (p *typeParser) parseTimestamp(word string) (DataType, error) {
	ps, err := p.optParams(1)
	if err != nil {
		return DataType{}, fmt.Errorf("%s: %w", word, err)
	}
	prec := DefaultTimestampPrecision
	if len(ps) > 0 {
		prec = ps[0]
	}
	t := Timestamp(prec)
	switch word {
	case "TIMESTAMP_LTZ", "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
		t = TimestampLTZ(prec)
	case "TIMESTAMP":
		if p.isKeyword("WITHOUT") {
			if err := p.timeZoneSuffix(false); err != nil {
				return DataType{}, fmt.Errorf("TIMESTAMP: %w", err)
			}
		} else if p.isKeyword("WITH") {
			if err := p.timeZoneSuffix(true); err != nil {
				return DataType{}, fmt.Errorf("TIMESTAMP: %w", err)
			}
			t = TimestampLTZ(prec)
		}
	}
	return t, nil
}

func (p *typeParser) parseArray(depth int) (DataType, error) {
	if err := p.expect(tokLT); err != nil {
		return DataType{}, fmt.Errorf("ARRAY: %w", err)
	}
	e, err := p.parseType(depth + 1)
	if err != nil {
		return DataType{}, fmt.Errorf("ARRAY element: %w", err)
	}
	if err := p.expect(tokGT); err != nil {
		return DataType{}, fmt.Errorf("ARRAY: %w", err)
	}
	return ArrayOf(e), nil
}

func (p *typeParser) parseMap(depth int) (DataType, error) {
	if err := p.expect(tokLT); err != nil {
		return DataType{}, fmt.Errorf("MAP: %w", err)
	}
	k, err := p.parseType(depth + 1)
	if err != nil {
		return DataType{}, fmt.Errorf("MAP key: %w", err)
	}
	if err := p.expect(tokComma); err != nil {
		return DataType{}, fmt.Errorf("MAP: %w", err)
	}
	v, err := p.parseType(depth + 1)
	if err != nil {
		return DataType{}, fmt.Errorf("MAP value: %w", err)
	}
	if err := p.expect(tokGT); err != nil {
		return DataType{}, fmt.Errorf("MAP: %w", err)
	}
	return MapOf(k, v), nil
}

// parseRow parses ROW<name type ['description'], ...> (or with parentheses).
func (p *typeParser) parseRow(depth int) (DataType, error) {
	var closing tokKind
	switch p.tok.kind {
	case tokLT:
		closing = tokGT
	case tokLParen:
		closing = tokRParen
	default:
		return DataType{}, fmt.Errorf("ROW: expected '<' or '(', got %s", p.tok)
	}
	p.next()
	t := RowOf()
	t.Fields = []Field{}
	for p.tok.kind != closing {
		if len(t.Fields) > 0 {
			if err := p.expect(tokComma); err != nil {
				return DataType{}, fmt.Errorf("ROW: %w", err)
			}
		}
		name, err := p.ident()
		if err != nil {
			return DataType{}, fmt.Errorf("ROW field %d: %w", len(t.Fields)+1, err)
		}
		ft, err := p.parseType(depth + 1)
		if err != nil {
			return DataType{}, fmt.Errorf("ROW field %q: %w", name, err)
		}
		f := Field{Name: name, Type: ft, ID: int32(len(t.Fields))}
		if p.tok.kind == tokString {
			f.Description = p.tok.text
			p.next()
		}
		t.Fields = append(t.Fields, f)
	}
	p.next()
	return t, nil
}

// timeZoneSuffix parses "WITHOUT TIME ZONE" or "WITH LOCAL TIME ZONE".
func (p *typeParser) timeZoneSuffix(local bool) error {
	words := []string{"WITHOUT", "TIME", "ZONE"}
	if local {
		words = []string{"WITH", "LOCAL", "TIME", "ZONE"}
	}
	for _, w := range words {
		if err := p.expectKeyword(w); err != nil {
			return err
		}
	}
	return nil
}
