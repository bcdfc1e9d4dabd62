package sst

import (
	"errors"
	"fmt"
)

var (
	// ErrUnsupported is wrapped by the errors of valid RocksDB input that this
	// package does not read (a feature Fluss does not use).
	ErrUnsupported = errors.New("unsupported")
	// ErrCorrupt is wrapped by the errors of damaged or inconsistent input.
	ErrCorrupt = errors.New("corrupt")
)

// Error is an error reading one table: it names the file and, when a block
// is at fault, the block's offset in the file.
type Error struct {
	File   string // the name given to Open
	Offset int64  // offset of the block at fault, -1 when no block is
	Err    error  // the cause; wraps ErrUnsupported or ErrCorrupt
}

func (e *Error) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("sst %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("sst %s: block at offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// corruptf returns an error wrapping ErrCorrupt.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// unsupportedf returns an error wrapping ErrUnsupported.
func unsupportedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// tableError attaches the file name and block offset to err, once.
func tableError(file string, offset int64, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{File: file, Offset: offset, Err: err}
}
