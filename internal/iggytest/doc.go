// Package iggytest is an in-process Apache Iggy server for tests. It speaks
// the binary TCP protocol of Iggy 0.8 (the one github.com/apache/iggy/foreign/go
// v0.8.0 talks, closely enough that the unchanged SDK works against it) or of
// Iggy 0.9, one per server (Options.Version), keeps everything in memory, and
// can inject faults. The store and the inspection API are the same for both
// dialects.
//
// # Starting and stopping
//
//	srv, err := iggytest.Start(iggytest.Options{})   // 0.8 on 127.0.0.1:0
//	srv, err := iggytest.Start(iggytest.Options{Version: iggytest.Version09})
//	defer srv.Close()
//	addr := srv.Addr()                                // "127.0.0.1:PORT"
//
// Start listens before it returns. Close stops the listener, closes every
// connection, abandons stalled requests and waits for every goroutine the
// server started. Stop does the same but keeps the data; Resume listens again
// on the same port; Restart is Stop followed by Resume. By default
// connections are cut (clients see EOF); with Options.GracefulStop each is
// closed after the answer to a request in progress, and a 0.8 server first
// sends the unsolicited error response 8 (Disconnected) a 0.8.0 server sends
// when it shuts down cleanly (the SDK returns it as ierror.ErrDisconnected
// from the next request); a 0.9 server sends nothing.
//
// # Durability
//
// Options.MessagesRequiredToSave models the server's unsaved buffer: accepted
// messages (readable at once) stay unsaved in their partition until that many
// wait there, then all of them are saved. FlushUnsavedBuffer saves a
// partition's; Stop and Restart save everything, as a clean shutdown does.
// Crash stops the server as a SIGKILL would: every unsaved message is lost,
// and after Resume new messages get offsets after the last saved one, as a
// restarted server recovers them from its segments. 0 (the default) saves
// every message at once. A 0.9 topic created with the topic option
// messages_required_to_save uses its own threshold.
//
// # Users and tokens
//
// By default there is one user, DefaultUsername / DefaultPassword
// ("iggy" / "iggy"), with ID 0, as a real server started with its default root
// credentials. Options.Users replaces that list (IDs are the list indexes);
// Options.Tokens adds personal access tokens (raw token strings) for those
// users. Tokens created through the protocol (CreatePersonalAccessToken) work
// too, and Server.AddUser adds a user while the server runs. Every user may
// do everything (permissions are not modelled).
//
// # Iggy 0.8, as in server 0.8.0
//
//   - framing: request [u32 length = 4 + payload][u32 code][payload], response
//     [u32 status][u32 length][payload]; errors carry no payload. A length
//     below 4 is answered with InvalidCommand and the next 8 bytes read as a
//     new header; so a 256-byte 0.9 header gets [3,0,0,0,0,0,0,0] for each of
//     its first six 8-byte groups (length 0), then its size field (256, at
//     offset 48) reads as a length and the server waits for the payload.
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
//     xxHash32) or as a consumer group member, auto-commit; store/get/delete
//     consumer offsets (120-122) of either.
//   - consumer groups (600-605): get (a missing stream, topic or group is an
//     empty body), get all, create (5004 for a taken name; the reply is the
//     group without members), delete, join, leave (5006 for a non-member);
//     1009, 2010 and 5000 for what does not resolve. A member is the
//     connection that joined; leaving, disconnecting and changing the
//     partition count reassign all partitions round robin; a join hands the
//     newcomer partitions cooperatively (see groups.go). A member polls with
//     partition "none" and gets its partitions in turn (none: an empty poll);
//     an explicit partition it does not own is an empty poll. Group offsets
//     are per group; storing or deleting one needs a partition the member
//     owns (else 3022), reading one needs no membership.
//   - flush unsaved buffer (102): [stream ident][topic ident][u32 partition]
//     [u8 fsync]; saves the partition's unsaved messages (fsync accepted).
//
// Not implemented (answered with error 3 InvalidCommand, like an unknown
// command): user management (31-37), stats (10),
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
// # Iggy 0.9, as in server 0.9.0 (binary protocol 0.11.0)
//
//   - framing: every frame, both ways, is a 256-byte header and a body; the
//     u32 at 48 is the whole size. The server reads 256 bytes before anything
//     else, so a 0.8 request gets no answer at all. A size below 256 or above
//     Options.MaxFrameSize (default 64 MiB), or a command byte (60) above 29,
//     closes the connection. A frame that is not a request (command 5), or
//     whose header is invalid (client id 0, an unknown operation, a Register
//     with a session or request number, any other non-read without both), is
//     dropped without an answer. A non-zero request checksum (u128 at 144)
//     must be the XXH3-64 of the body, else status 4.
//   - replies: command 8, request number echoed at 200, operation at 208,
//     status at 216; an error status has an empty body.
//   - login: operation Register (1), request 0, session 0, body [protocol u32]
//     [len u8]sdk name[len u8]sdk version, then [len u8]username[len u8]
//     password or [len u8]token, then [u32 context length][context]. The
//     reply body is [0 u32][user id u32][session u64][protocol u32][len u8]
//     "0.9.0". Refusals are Eviction frames (command 13, reason at 255):
//     14 for a protocol outside 0.11.0..0.11.x (window max at 144, min at
//     148), 15 for a body without the version prefix or a 0.8 login code
//     (38, 44) sent as a read, 9 bad credentials (an inactive user too), 10
//     a bad token, 11 a token of an inactive user. A replicated request
//     without a login is evicted with reason 1; a read gets status 40; ping
//     works without one. Logout (3) ends the session.
//   - reads (operation 2, command code at 196): ping, get me, get clients,
//     cluster metadata, personal access tokens (0.8 layouts), get stream(s)
//     (stream records end with an empty u32-length options block), get
//     topic(s) (no replication factor; an explicit and a derived u32-length
//     options block; get topics is count-prefixed), poll, get consumer
//     offset. Known codes that are replicated operations answer status 5.
//   - metadata operations (create/update/delete stream 128-130, topic
//     132-134, create/delete partitions 136/137, create/delete personal
//     access token 146/147): each takes the client's next request number
//     (from 1; reads reuse the current one, sends take one as well). A body that does not
//     decode, an option key out of the catalog (4041) or a bad option value
//     (4042), 0 or over 1000 partitions (2015) and a max topic size below the
//     segment size (1019) are refused with a status. Otherwise the server's
//     client table applies: a request number already committed gets the
//     cached reply (the last 5 are kept; older ones status 59), and one reused
//     for other arguments (request checksums differ) gets no answer. A
//     committed reply body starts with the result section: [0] and the
//     payload, or [1][0][code] for a refusal the server committed (1009,
//     1012, 2010, 2013, 51, ...). A CreateTopic reply carries operation 64,
//     a CreatePartitions reply 65. Topic options, as released in 0.9.0:
//     compression_algorithm, message_expiry, max_topic_size, segment_size,
//     durability and consumer_offset_durability (replicated, the default,
//     or persisted: a persisted topic saves every message before its send
//     is answered, so Crash loses none), messages_required_to_save,
//     size_of_messages_required_to_save, preallocate_segments (the
//     pre-release enforce_fsync is refused with 4041); String values are
//     parsed approximately (plain numbers, "unlimited", "128 MiB", "7
//     days").
//   - send messages (operation 160): [u32 metadata length][stream ident]
//     [topic ident][partitioning kind u8, len u8, value][u32 count], then one
//     batch (256-byte header, 48-byte frames with payload before user
//     headers). A target that does not resolve gets status 20; a batch that
//     does not decode or verify (frame or batch XXH3 checksum, count, length,
//     reserved bytes, a metadata section longer than its contents) is dropped
//     without an answer, as the server's partition plane does. The reply is
//     [count u32 = 1][stream u32][topic u32][partition u32][base offset u64].
//     A send whose request number does not go above the highest of its
//     client's stored sends is a duplicate, as a released 0.9.0 server
//     deduplicates partition writes: status 0, an empty body, nothing
//     stored (DuplicateSendCount counts them).
//     Frames are stored as sent (a zero ID stays zero); the server sets the
//     batch's base offset and base timestamp (the messages' timestamp).
//   - poll answers [partition u32][current offset u64][count u32] and batch
//     records: a stored batch as it was stored, or with its header rewritten
//     (count, length, checksum) when only part of it is polled. A group
//     member names the partition: one it owns and is not handing over, else
//     an empty poll of partition 4294967295 (re-read your assignment); no
//     partition is an empty poll of partition 0.
//   - consumer groups: create 139 (the committed payload is the group),
//     delete 140, join 148, leave 149 as metadata operations (1009, 2010,
//     5000, 5004, 5006 committed as results); get group (600) and get groups
//     (601) as reads (1009 and 2010 as statuses, a missing group an empty
//     body); sync group (606: [generation u64][count u32][partition u32]* of
//     the partitions the caller polls, empty for a non-member). Membership,
//     assignment and handovers as in 0.8 except that a join hands the
//     newcomer its fair share at once (only partitions with uncommitted
//     polled messages wait), group IDs are never reused, and a departed
//     member's "last polled" marks stay. Heartbeat eviction of idle members
//     is not modelled.
//   - store/delete consumer offset (161/162) end with an ack byte, need an
//     explicit partition, and answer status 20 for every target that does not
//     resolve (a group's partition the member does not own included), 4100
//     and 3021 as 0.8 does; the reply body is [0].
//   - flush unsaved buffer (code 102) answers status 5 (FeatureUnavailable)
//     as server 0.9.0 does; with Options.Flush09 it is carried out as in 0.8.
//   - faults and RequestCount see 0.9 requests as the 0.8 commands they
//     correspond to (see Command); a graceful stop closes connections without
//     a goodbye frame.
//
// Version010 simulates a 0.10 server (protocol 0.12.0) for tests of refusal:
// it answers 0.9-framed requests (ping works) but evicts every login whose
// version prefix decodes with reason 14 and the window 0.12.0..0.12.0; with
// Options.LoginInvalidFormat it answers them with status 4 (InvalidFormat)
// and an empty body instead.
//
// Not modelled in 0.9 (status 3): users, purge, segments,
// stats, snapshot, get client, describe options.
//
// # Looking at what was stored
//
// Messages and PartitionMessages return copies of the stored messages (all
// fields as the server set them, headers parsed), whichever dialect sent
// them; Stream, Streams and Topic describe the metadata; ConsumerOffset reads
// a stored offset, ConsumerGroupOffset a group's, ConsumerGroupAssignment a
// group's members and their partitions; CreateStream, CreateTopic and
// CreateConsumerGroup set up data without a client.
// Stream and topic arguments of these helpers are names, or decimal IDs when
// no entity has that name. RequestCount counts the requests received per
// command; Connections counts open connections. PartitionForKey, Checksum,
// ConsumerKey and ParseUserHeaders expose the server's rules (key hashing,
// message checksum, named-consumer key, user-header layout) for assertions.
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
//	srv.FailTimes(iggytest.CmdStoreConsumerOffset, iggytest.CodeTransientNotAccepted, 3) // refuse 3, then accept
//
// A fault is matched against requests in arrival order across all
// connections: Fault.After matching requests pass untouched, then it fires on
// the next Fault.Times matching requests (0 = all of them until removed). A
// stalled request is handled (and answered) when the stall ends; if the server
// is stopped or the connection dropped first it is abandoned unhandled. A
// failed 0.9 request is answered with a reply carrying the code as its status
// and no body. FaultHandle.Fired and FaultHandle.WaitFired tell a test when a
// fault has fired (for example that a request is now stalled).
package iggytest
