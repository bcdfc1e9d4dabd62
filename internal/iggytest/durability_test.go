package iggytest

import (
	"bytes"
	"fmt"
	"testing"
)

// The unsaved buffer: Options.MessagesRequiredToSave, FlushUnsavedBuffer,
// Stop (saves) and Crash (loses the unsaved messages).

// payloadsT lists the payloads and offsets kept in partition 0 of s/t.
func payloadsT(s *Server) (out []string, offsets []uint64) {
	for _, m := range s.PartitionMessages("s", "t", 0) {
		out = append(out, string(m.Payload))
		offsets = append(offsets, m.Offset)
	}
	return out, offsets
}

func TestCrashAndUnsavedBuffer(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		s := startT(t, Options{Version: v, MessagesRequiredToSave: 3, Flush09: true})
		c := loginT(t, s)
		setupT(t, c, 1)
		mustSend := func(p ...string) {
			t.Helper()
			if err := c.send("s", "t", 0, p...); err != nil {
				t.Fatal(err)
			}
		}
		mustSend("a", "b") // 2 unsaved
		mustSend("c")      // 3: saved
		mustSend("d")      // unsaved
		if err := c.flush("s", "t", 0); err != nil {
			t.Fatalf("flush: %v", err)
		}
		mustSend("e", "f") // unsaved, readable
		if got, err := c.poll("s", "t", 0, 0, 10); err != nil || len(got) != 6 {
			t.Fatalf("poll before the crash = %q, %v", got, err)
		}
		if err := s.Crash(); err != nil {
			t.Fatal(err)
		}
		if err := s.Resume(); err != nil {
			t.Fatal(err)
		}
		if got, _ := payloadsT(s); len(got) != 4 || got[3] != "d" {
			t.Fatalf("after the crash: %q", got)
		}
		c = loginT(t, s)
		if err := c.send("s", "t", 0, "g"); err != nil {
			t.Fatal(err)
		}
		// A clean stop saves everything.
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		if err := s.Crash(); err != nil {
			t.Fatal(err)
		}
		got, offsets := payloadsT(s)
		if len(got) != 5 || got[4] != "g" || offsets[4] != 4 {
			t.Fatalf("after stop and crash: %q at %v", got, offsets)
		}
		if s.RequestCount(CmdFlushUnsavedBuffer) != 1 {
			t.Fatalf("flushes counted: %d", s.RequestCount(CmdFlushUnsavedBuffer))
		}
	})
}

func TestFlushRefusals(t *testing.T) {
	forVersions(t, func(t *testing.T, v Version) {
		s := startT(t, Options{Version: v, Flush09: true})
		c := loginT(t, s)
		setupT(t, c, 1)
		if err := c.flush("x", "t", 0); !isStatus(err, CodeStreamIDNotFound) {
			t.Fatalf("flush of a missing stream = %v", err)
		}
		if err := c.flush("s", "t", 3); !isStatus(err, CodePartitionNotFound) {
			t.Fatalf("flush of a missing partition = %v", err)
		}
	})
	// Server 0.9.0 has no flush on demand.
	s := startT(t, Options{Version: Version09, MessagesRequiredToSave: 10})
	c := loginT(t, s)
	setupT(t, c, 1)
	if err := c.flush("s", "t", 0); !isStatus(err, CodeFeatureUnavailable) {
		t.Fatalf("0.9 flush = %v", err)
	}
}

// A 0.9 topic can set messages_required_to_save; GetTopic reports it as an
// explicit option, and the server option as derived for other topics.
func TestTopicSaveThreshold09(t *testing.T) {
	s := startT(t, Options{Version: Version09, MessagesRequiredToSave: 100})
	c := loginT(t, s)
	if err := c.createStream("s"); err != nil {
		t.Fatal(err)
	}
	e := encoder{b: nameIdent("s")}
	e.u32(1)
	e.name("t")
	e.b = append(e.b, encodeOptions([]option{{key: optToSave, kind: HeaderUint32, value: le32(1)}})...)
	if _, err := c.meta09(opCreateTopic, e.b); err != nil {
		t.Fatal(err)
	}
	if err := c.createTopic("s", "u", 1); err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"t", "u"} {
		if err := c.send("s", topic, 0, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Crash(); err != nil {
		t.Fatal(err)
	}
	if a, b := s.MessageCount("s", "t"), s.MessageCount("s", "u"); a != 1 || b != 0 {
		t.Fatalf("after the crash: t has %d, u has %d", a, b)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	c = loginT(t, s)
	_, body, err := c.call09(opNonReplicated, uint32(CmdGetTopic), append(nameIdent("s"), nameIdent("u")...))
	if err != nil || !bytes.Contains(body, append([]byte(optToSave), HeaderUint32, 4, 0, 0, 0, 100, 0, 0, 0)) {
		t.Fatalf("get topic u: %v %x", err, body)
	}
}

// TestPersistedTopicSurvivesCrash: a 0.9 topic created with durability
// persisted saves every message before its send is answered, so a crash
// loses none of them, while a replicated topic beside it loses what waits
// in its unsaved buffer. The explicit option is stored in its canonical
// (lower-case) spelling.
func TestPersistedTopicSurvivesCrash(t *testing.T) {
	s := startT(t, Options{Version: Version09, MessagesRequiredToSave: 100})
	c := loginT(t, s)
	if _, err := c.meta09(opCreateStream, []byte{1, 's'}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, durability string }{{"p", "Persisted"}, {"r", "replicated"}} {
		e := encoder{b: nameIdent("s")}
		e.u32(1)
		e.name(tc.name)
		body := append(e.b, optionsBlock(option{key: optDurability, kind: HeaderString, value: []byte(tc.durability)})...)
		if _, err := c.meta09(opCreateTopic, body); err != nil {
			t.Fatalf("topic %s: %v", tc.name, err)
		}
		for i := range 10 {
			if err := c.send("s", tc.name, 0, fmt.Sprint(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.mu.Lock()
	explicit, _ := parseOptions(s.findTopicLocked("s", "p").explicitOptions)
	s.mu.Unlock()
	if len(explicit) != 1 || string(explicit[0].value) != durabilityPersisted {
		t.Fatalf("explicit options %+v", explicit)
	}
	if err := s.Crash(); err != nil {
		t.Fatal(err)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	if p, r := len(s.Messages("s", "p")), len(s.Messages("s", "r")); p != 10 || r != 0 {
		t.Fatalf("after the crash: persisted topic %d of 10, replicated %d of 10 (100 required to save)", p, r)
	}
}
