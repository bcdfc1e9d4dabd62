package errcode

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestTable(t *testing.T) {
	all := All()
	// -1 and 1..73.
	if len(all) != 74 {
		t.Fatalf("table has %d entries, want 74", len(all))
	}
	names := map[string]bool{}
	for i, e := range all {
		if i > 0 && all[i-1].Code >= e.Code {
			t.Fatalf("not ordered at %d", e.Code)
		}
		if names[e.Name] {
			t.Fatalf("duplicate name %s", e.Name)
		}
		names[e.Name] = true
		if got, ok := Lookup(e.Code); !ok || got != e {
			t.Fatalf("Lookup(%d) = %v %v", e.Code, got, ok)
		}
	}
	// The retriable set of Fluss 0.9.1 (exceptions extending
	// RetriableException) plus RETRIABLE_AUTHENTICATE and the later 70/72/73.
	want := map[int32]bool{1: true, 3: true, 9: true, 10: true, 11: true, 12: true, 14: true, 21: true,
		25: true, 26: true, 28: true, 29: true, 44: true, 51: true, 70: true, 72: true, 73: true}
	for _, e := range all {
		if e.Retriable != want[e.Code] {
			t.Errorf("%s retriable = %v", e.Name, e.Retriable)
		}
	}
	spot := map[int32]string{-1: "UNKNOWN_SERVER_ERROR", 7: "TABLE_NOT_EXIST", 19: "LOG_OFFSET_OUT_OF_RANGE_EXCEPTION",
		36: "PARTITION_NOT_EXISTS", 46: "AUTHENTICATE_EXCEPTION", 63: "INVALID_PRODUCER_ID_EXCEPTION",
		// Fluss 1.0 (Errors.java in apache/fluss main).
		64: "CONFIG_EXCEPTION", 65: "NOT_COORDINATOR_LEADER_EXCEPTION", 66: "SCANNER_EXPIRED",
		67: "UNKNOWN_SCANNER_ID", 68: "INVALID_SCAN_REQUEST", 69: "TOO_MANY_SCANNERS", 70: "DISK_WRITE_LOCKED",
		71: "INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY", 72: "STORAGE_BACKPRESSURE_EXCEPTION",
		73: "HISTORICAL_PARTITION_THROTTLED"}
	for c, n := range spot {
		if e, _ := Lookup(c); e.Name != n {
			t.Errorf("code %d = %s, want %s", c, e.Name, n)
		}
	}
}

func TestNewAndInspect(t *testing.T) {
	if New(0, "x") != nil {
		t.Fatal("code 0 is not an error")
	}
	err := fmt.Errorf("get table info db.t: %w", New(7, "Table 'db.t' does not exist."))
	if !errors.Is(err, TableNotExist) || errors.Is(err, TableAlreadyExist) {
		t.Fatal("errors.Is mismatch")
	}
	var se *ServerError
	if !errors.As(err, &se) || se.Message != "Table 'db.t' does not exist." || se.Err != TableNotExist {
		t.Fatalf("ServerError = %+v", se)
	}
	if c, ok := Code(err); !ok || c != 7 {
		t.Fatalf("Code = %d %v", c, ok)
	}
	if got := New(7, "").Error(); got != "TABLE_NOT_EXIST (7): the table does not exist" {
		t.Fatalf("message = %q", got)
	}

	unknown := New(999, "from the future")
	if c, _ := Code(unknown); c != 999 {
		t.Fatalf("unknown code = %d", c)
	}
	if errors.Is(unknown, UnknownServerError) || IsRetriable(unknown) {
		t.Fatal("unknown codes are their own non-retriable errors")
	}
}

type transient struct{ error }

func (transient) Retriable() bool           { return true }
func (transient) InvalidatesMetadata() bool { return true }

func TestRetryDecision(t *testing.T) {
	cases := []struct {
		err       error
		retry     bool
		refreshMD bool
	}{
		{nil, false, false},
		{context.Canceled, false, false},
		{context.DeadlineExceeded, false, false},
		{errors.New("plain"), false, false},
		{New(12, ""), true, true},
		{fmt.Errorf("fetch bucket 3: %w", New(12, "")), true, true},
		{New(44, ""), true, true},
		{New(24, ""), false, true},
		{New(21, ""), true, true},
		{New(25, ""), true, false},
		{New(19, "offset 99 out of range [0, 10)"), false, false},
		{New(46, "bad password"), false, false},
		{New(51, ""), true, false},
		// Fluss 1.0: a standby coordinator (not retriable as such, the
		// leader is elsewhere), the retriable write refusals, the scanner
		// errors.
		{New(65, "This coordinator server is not the current leader."), false, true},
		{New(70, ""), true, false},
		{New(72, ""), true, false},
		{New(73, ""), true, false},
		{New(66, ""), false, false},
		{New(69, ""), false, false},
		{transient{errors.New("conn reset")}, true, true},
		{fmt.Errorf("ctx: %w", transient{errors.New("eof")}), true, true},
	}
	for _, c := range cases {
		if got := IsRetriable(c.err); got != c.retry {
			t.Errorf("IsRetriable(%v) = %v", c.err, got)
		}
		if got := InvalidatesMetadata(c.err); got != c.refreshMD {
			t.Errorf("InvalidatesMetadata(%v) = %v", c.err, got)
		}
	}
}
