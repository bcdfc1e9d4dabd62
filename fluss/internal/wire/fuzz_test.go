package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzFrameDecode feeds arbitrary bytes to the response-frame decoder (length
// prefix, bound check, response header, ErrorResponse body). Seeds under
// testdata/fuzz/FuzzFrameDecode are response streams captured from a real
// Fluss 0.9.1 cluster. Invariants: no panic, every frame within the bound and
// within the input, and each error is one of the documented kinds.
func FuzzFrameDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 1, 2})
	f.Add([]byte{0, 0, 0, 6, 0, 0, 0, 0, 1, 0x08})
	f.Add([]byte{0, 0, 0, 5, 1, 0, 0, 0, 1})
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 3, 2, 0x08, 0x01})
	const max = 1 << 16
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := NewFrameReader(bytes.NewReader(data), max)
		consumed := 0
		for {
			frame, err := fr.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
					!errors.Is(err, ErrFrameTooLarge) && !errors.Is(err, ErrMalformedFrame) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				return
			}
			consumed += 4 + len(frame)
			if len(frame) > max || consumed > len(data) {
				t.Fatalf("frame of %d bytes out of bounds (consumed %d of %d)", len(frame), consumed, len(data))
			}
			r, err := ParseResponse(frame)
			if err != nil {
				if !errors.Is(err, ErrMalformedFrame) {
					t.Fatalf("unexpected parse error kind: %v", err)
				}
				continue
			}
			switch r.Type {
			case ResponseSuccess, ResponseError:
				if len(r.Body) != len(frame)-5 {
					t.Fatalf("body %d bytes of a %d-byte frame", len(r.Body), len(frame))
				}
			case ResponseServerFailure:
				if len(r.Body) != len(frame)-1 {
					t.Fatalf("body %d bytes of a %d-byte frame", len(r.Body), len(frame))
				}
			default:
				t.Fatalf("type %d accepted", r.Type)
			}
			if r.Type != ResponseSuccess {
				if err := decodeErrorBody(r.Body); err == nil {
					t.Fatal("error body decoded to nil")
				}
			}
		}
	})
}
