package iggy

// Stored offsets and consumer groups in the 0.8 dialect (see consumer.go).

func (d v08) storeOffset(w *wire, t *offsetTarget, offset uint64) error {
	b := le.AppendUint64(t.appendTo(frame08(w, code08StoreOffset, t.wireLen()+8)), offset)
	_, err := d.roundTrip(w, b)
	return err
}

func (d v08) getOffset(w *wire, t *offsetTarget) ([]byte, error) {
	return d.roundTrip(w, t.appendTo(frame08(w, code08GetOffset, t.wireLen())))
}

func (d v08) deleteOffset(w *wire, t *offsetTarget) error {
	_, err := d.roundTrip(w, t.appendTo(frame08(w, code08DeleteOffset, t.wireLen())))
	return err
}

// createGroup sends [stream][topic][len u8]name; the reply is the group
// without members.
func (d v08) createGroup(w *wire, stream, topic Identifier, name string) ([]byte, error) {
	b := frame08(w, code08CreateGroup, stream.wireLen()+topic.wireLen()+1+len(name))
	return d.roundTrip(w, appendName(topic.appendTo(stream.appendTo(b)), name))
}

// getGroup reads a group; a missing stream, topic or group is an empty
// body.
func (d v08) getGroup(w *wire, stream, topic, group Identifier) ([]byte, error) {
	return d.roundTrip(w, appendGroupPath(frame08(w, code08GetGroup, groupPathLen(stream, topic, group)), stream, topic, group))
}

func (d v08) groupOp(w *wire, op groupOp, stream, topic, group Identifier) error {
	code := uint32(code08JoinGroup)
	switch op {
	case groupLeave:
		code = code08LeaveGroup
	case groupDelete:
		code = code08DeleteGroup
	}
	_, err := d.roundTrip(w, appendGroupPath(frame08(w, code, groupPathLen(stream, topic, group)), stream, topic, group))
	return err
}

// appendGroupPath appends [stream][topic][group].
func appendGroupPath(b []byte, stream, topic, group Identifier) []byte {
	return group.appendTo(topic.appendTo(stream.appendTo(b)))
}

func groupPathLen(stream, topic, group Identifier) int {
	return stream.wireLen() + topic.wireLen() + group.wireLen()
}
