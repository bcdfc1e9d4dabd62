package iggy

// dialect encodes the requests and decodes the replies of one protocol
// version. Its methods run with the Conn's lock held and the socket's
// deadline set; they write one request and read its one reply, and return
// a *ServerError for an error status (after reading the whole reply, so the
// connection stays on a frame boundary). Any other error means the
// connection is no longer usable.
//
// Adding a protocol version means one more implementation of this
// interface, a case in Dial's detection, and the test server's side of it.
type dialect interface {
	version() Version
	login(w *wire, c Credentials) (ServerInfo, error)
	ping(w *wire) error
	// streamExists reads a stream; false when it does not exist.
	streamExists(w *wire, stream Identifier) (bool, error)
	// getTopic returns (nil, nil) when the stream or topic does not exist.
	getTopic(w *wire, stream, topic Identifier) (*Topic, error)
	createStream(w *wire, name string) error
	createTopic(w *wire, stream Identifier, t TopicSpec) error
	deleteStream(w *wire, stream Identifier) error
	createToken(w *wire, name string) (string, error)
	send(w *wire, b *Batch) ([]Appended, error)
	poll(w *wire, r *PollRequest) (*Polled, error)
	flush(w *wire, stream, topic Identifier, partition uint32, fsync bool) error
	storeOffset(w *wire, t *offsetTarget, offset uint64) error
	// getOffset returns the offset reply (decodeOffset), valid until the
	// next read.
	getOffset(w *wire, t *offsetTarget) ([]byte, error)
	deleteOffset(w *wire, t *offsetTarget) error
	// createGroup and getGroup return the group's bytes (decodeGroup),
	// valid until the next read; getGroup's are empty when the group does
	// not exist.
	createGroup(w *wire, stream, topic Identifier, name string) ([]byte, error)
	getGroup(w *wire, stream, topic, group Identifier) ([]byte, error)
	groupOp(w *wire, op groupOp, stream, topic, group Identifier) error
}

// clientName is how this client introduces itself where the protocol asks.
const clientName = "fluss-iggy"
