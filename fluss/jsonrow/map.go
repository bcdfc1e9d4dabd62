package jsonrow

import (
	"bytes"
	"slices"
)

// mapScratch renders the entries of one MAP value before they are written in
// canonical order. Each MAP node of an encoder owns one, reused for every
// value, so rendering allocates only while the scratch buffers grow.
type mapScratch struct {
	text  []byte      // rendered keys and values
	spans []entrySpan // per entry: where its key and value text are
	order []int32     // entry indices in output order
}

type entrySpan struct{ k0, k1, v1 int32 } // key = text[k0:k1], value = text[k1:v1]

// sortThreshold is the entry count from which a stable library sort is used
// instead of insertion sort.
const sortThreshold = 12

// appendMap writes the entries [start, end) of a MAP value, sorted by the
// canonical JSON text of their key compared as bytes (stable: equal keys keep
// their stored order), as {"k":v,...} when the keys are character strings and
// as [{"key":k,"value":v},...] otherwise. A null key (Fluss map keys are NOT
// NULL) is rendered as the key text null, which in an object becomes "null".
func (m *mapScratch) appendMap(dst []byte, key, val appendFn, start, end int, object bool) []byte {
	n := end - start
	if n == 0 {
		if object {
			return append(dst, '{', '}')
		}
		return append(dst, '[', ']')
	}
	m.text = m.text[:0]
	m.spans = m.spans[:0]
	m.order = m.order[:0]
	for j := start; j < end; j++ {
		k0 := len(m.text)
		m.text = key(m.text, j)
		if object && m.text[k0] != '"' { // null key
			m.text = append(m.text[:k0], `"null"`...)
		}
		k1 := len(m.text)
		m.text = val(m.text, j)
		m.spans = append(m.spans, entrySpan{int32(k0), int32(k1), int32(len(m.text))})
		m.order = append(m.order, int32(j-start))
	}
	if n > 1 {
		m.sort()
	}
	if object {
		dst = append(dst, '{')
	} else {
		dst = append(dst, '[')
	}
	for x, e := range m.order {
		if x > 0 {
			dst = append(dst, ',')
		}
		sp := m.spans[e]
		if object {
			dst = append(dst, m.text[sp.k0:sp.k1]...)
			dst = append(dst, ':')
			dst = append(dst, m.text[sp.k1:sp.v1]...)
		} else {
			dst = append(dst, `{"key":`...)
			dst = append(dst, m.text[sp.k0:sp.k1]...)
			dst = append(dst, `,"value":`...)
			dst = append(dst, m.text[sp.k1:sp.v1]...)
			dst = append(dst, '}')
		}
	}
	if object {
		return append(dst, '}')
	}
	return append(dst, ']')
}

func (m *mapScratch) keyOf(e int32) []byte {
	sp := m.spans[e]
	return m.text[sp.k0:sp.k1]
}

// sort orders m.order stably by key text.
func (m *mapScratch) sort() {
	if len(m.order) < sortThreshold {
		for x := 1; x < len(m.order); x++ {
			e := m.order[x]
			k := m.keyOf(e)
			y := x
			for ; y > 0 && bytes.Compare(m.keyOf(m.order[y-1]), k) > 0; y-- {
				m.order[y] = m.order[y-1]
			}
			m.order[y] = e
		}
		return
	}
	slices.SortStableFunc(m.order, m.cmp)
}

func (m *mapScratch) cmp(a, b int32) int { return bytes.Compare(m.keyOf(a), m.keyOf(b)) }
