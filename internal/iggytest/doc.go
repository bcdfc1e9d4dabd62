// Package iggytest is an in-process Apache Iggy server for tests. It speaks the
// Iggy 0.8 binary TCP protocol (the one github.com/apache/iggy/foreign/go v0.8.0
// talks) closely enough that the unchanged SDK works against it, keeps
// everything in memory, and can inject faults.
//
// # Starting and stopping
//
//	srv, err := iggytest.Start(iggytest.Options{})   // listens on 127.0.0.1:0
//	defer srv.Close()
//	addr := srv.Addr()                                // "127.0.0.1:PORT"
//
// Start listens before it returns. Close stops the listener, closes every
// connection, abandons stalled requests and waits for every goroutine the
// server started. Stop does the same but keeps the data; Resume listens again
// on the same port; Restart is Stop followed by Resume. By default
// connections are cut as by a crash (clients see EOF); with
// Options.GracefulStop each first gets the unsolicited error response 8
// (Disconnected) a 0.8.0 server sends when it shuts down cleanly, which the
// SDK returns as ierror.ErrDisconnected from the next request.
//
// # Users and tokens
//
// By default there is one user, DefaultUsername / DefaultPassword
// ("iggy" / "iggy"), with ID 0, as a real server started with its default root
// credentials. Options.Users replaces that list (IDs are the list indexes);
// Options.Tokens adds personal access tokens (raw token strings) for those
// users. Tokens created through the protocol (CreatePersonalAccessToken) work
// too. Every user may do everything (permissions are not modelled).
//
// # What is implemented, as in server 0.8.0
//
//   - framing: request [u32 length = 4 + payload][u32 code][payload], response
//     [u32 status][u32 length][payload]; errors carry no payload.
//   - ping (1), get me (20), get clients (22), get cluster metadata (12: one
//     healthy leader node named "iggy-node" in cluster "single-node", as a
//     0.8.0 server with clustering disabled answers).
//   - login with username/password (38) and personal access token (44),
//     logout (39), create/get/delete personal access tokens (41-43).
//     Everything except ping and the logins needs a logged-in connection
//     (error 40 Unauthenticated).
//   - streams and topics (200-204, 300-304), partitions (402, 403): 0-based IDs
//     handed out like the server's slab (a freed ID is reused, newest first),
//     lookup by numeric ID or by name; a missing stream/topic in Get answers
//     OK with an empty body; not-found and already-exists errors use the
//     server's codes (1009, 1012, 2010, 2013, 3007, ...).
//   - send messages (101), fully parsed and validated like the server (index
//     table, sizes, non-zero index offsets/timestamps, payload <= 64 MB, user
//     headers <= 100 KB); partitioning balanced (per-topic round robin starting
//     at partition 0), partition ID, or messages key (xxHash32 of the key with
//     seed 0, modulo the partition count). The server sets offset (per
//     partition, from 0), timestamp (microseconds, one per batch), the ID when
//     it is 0 (a random UUID v4) and the checksum (XXH3-64 of the message
//     without its checksum field); origin timestamp, reserved field and user
//     headers are kept as sent (user headers are not validated, as in the
//     server).
//   - poll messages (100) by offset, timestamp, first, last and next, with a
//     single consumer (numeric ID, or a name, which the server hashes with
//     xxHash32), auto-commit; store/get/delete consumer offsets (120-122).
//
// Not implemented (answered with error 3 InvalidCommand, like an unknown
// command): consumer groups (600-605), user management (31-37), stats (10),
// snapshot (11), get client (21), purge (205, 305), segments (503).
//
// Deliberate differences from the real server: a request whose payload the
// real server would leave unread on an early error (for example an
// unauthenticated SendMessages, or a control command over 10 MiB) is read and
// skipped here, so the connection stays in sync; frames larger than
// Options.MaxFrameSize close the connection; Options.MaxMessagesPerPartition
// can cap what is kept in memory (older messages are dropped as if their
// segment expired).
//
// # Looking at what was stored
//
// Messages and PartitionMessages return copies of the stored messages (all
// fields as the server set them, headers parsed); Stream, Streams and Topic
// describe the metadata; ConsumerOffset reads a stored offset; CreateStream and
// CreateTopic set up data without a client. Stream and topic arguments of these
// helpers are names, or decimal IDs when no entity has that name.
// RequestCount counts the requests received per command; Connections counts
// open connections. PartitionForKey, Checksum, ConsumerKey and
// ParseUserHeaders expose the server's rules (key hashing, message checksum,
// named-consumer key, user-header layout) for assertions.
//
// # TLS
//
// NewTLSConfig makes a throw-away CA and server certificate; pass the config
// as Options.TLSConfig and give clients the CA PEM (the SDK needs it in a
// file: tcp.WithTLS(tcp.WithTLSCAFile(path))).
//
// # Server down
//
// To test a client against a server that is down, Stop the server (the port
// then refuses connections) and Resume it later; nothing is lost.
//
// # Faults
//
// Inject registers a Fault; shortcuts cover the common cases:
//
//	srv.DropConnections()                         // close every open connection now
//	srv.DropAfter(iggytest.CmdSendMessages, 2)    // 3rd SendMessages: connection closed, request not applied
//	h := srv.Stall(iggytest.CmdSendMessages)      // every SendMessages waits until h.Release()
//	srv.StallFor(iggytest.CmdPing, time.Second)   // every ping answered a second late
//	srv.FailWith(iggytest.CmdCreateTopic, iggytest.CodeUnauthorized)
//
// A fault is matched against requests in arrival order across all
// connections: Fault.After matching requests pass untouched, then it fires on
// the next Fault.Times matching requests (0 = all of them until removed). A
// stalled request is handled (and answered) when the stall ends; if the server
// is stopped or the connection dropped first it is abandoned unhandled.
// FaultHandle.Fired and FaultHandle.WaitFired tell a test when a fault has
// fired (for example that a request is now stalled).
package iggytest
