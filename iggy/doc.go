// Package iggy is a client for Apache Iggy's binary TCP protocol, written for
// the fluss-iggy output and input. It never imports Benthos.
//
// One Conn is one TCP (or TLS) connection, logged in, speaking one protocol
// dialect: Iggy 0.8 (the length-prefixed frames of server 0.8.x) or Iggy 0.9
// (binary protocol 0.11.0: 256-byte headers, register-style login, request
// numbers, XXH3-checked message batches). Dial finds the server's dialect
// unless Options.Version pins it, and refuses a server it cannot speak with
// an *UnsupportedServerError.
//
// A Conn runs one request at a time: a request is written and its reply read
// under the Conn's lock, with a deadline on every read and write, so no other
// goroutine can ever read a reply meant for another request. A Conn whose
// request failed on the transport (timeout, cancellation, EOF, a reply that
// does not pair with its request) is closed and reports ErrBroken from then
// on; a *ServerError leaves it usable.
//
// Besides sending and polling, a Conn stores and reads consumer offsets and
// manages consumer groups: a connection that joins a group is a member,
// and its polls with PollRequest.Assigned read the partitions the server
// assigned it. consumer.go says how each dialect does it.
//
// Pool keeps up to N logged-in connections for concurrent requests, pings
// idle ones to notice dead servers, and redials with a growing backoff.
package iggy
