package iggy

import (
	"time"

	"github.com/OneOfOne/xxhash"
)

// v09RouteTTL is how long a topic's partition count is trusted before a
// routed send reads it again, so that partitions added to a topic are used.
const v09RouteTTL = 10 * time.Second

// v09Route is what a connection knows of a topic it routes sends to.
type v09Route struct {
	partitions uint32
	read       time.Time
	cursor     uint32 // the round-robin position of the next Balanced send
}

// route returns the partitioning a send of b goes out with. The released
// Iggy 0.9.0 SDK never sends Balanced or MessagesKey: it resolves both on
// the client to a partition id (iggy_common 0.11.0,
// traits/binary_impls/messages.rs resolve_partitioning), Balanced with a
// round-robin cursor per topic that starts at partition 0, MessagesKey as
// xxHash32(key, seed 0) modulo the partition count; so does this dialect,
// reading the topic's partition count with a get-topic request when it is
// not known or older than v09RouteTTL. A topic that does not exist, or has
// no partitions, is answered as the server answers a send whose target
// does not resolve: ResourceNotFound.
func (v *v09) route(w *wire, b *Batch) (Partitioning, error) {
	p := b.Partitioning
	if p.Kind == PartitionByID {
		return p, nil
	}
	v.routeKey = b.Stream.appendTo(b.Topic.appendTo(v.routeKey[:0]))
	r := v.routes[string(v.routeKey)] // no allocation for the lookup
	if r == nil || time.Since(r.read) > v09RouteTTL {
		t, err := v.getTopic(w, b.Stream, b.Topic)
		if err != nil {
			return p, err
		}
		if t == nil || t.Partitions == 0 {
			v.forgetRoute()
			return p, &ServerError{Code: CodeResourceNotFound}
		}
		if r == nil {
			if v.routes == nil {
				v.routes = map[string]*v09Route{}
			}
			r = &v09Route{}
			v.routes[string(v.routeKey)] = r
		}
		r.partitions, r.read = t.Partitions, time.Now()
	}
	var partition uint32
	if p.Kind == PartitionBalanced {
		partition = r.cursor % r.partitions
		r.cursor++
	} else {
		partition = xxhash.Checksum32(p.Value) % r.partitions
	}
	v09le.PutUint32(v.routed[:], partition)
	return Partitioning{Kind: PartitionByID, Value: v.routed[:]}, nil
}

// forgetRoute drops what is known of the topic of the last routed send, so
// that the next send to it reads its partition count again (after the
// server found the routed partition missing).
func (v *v09) forgetRoute() { delete(v.routes, string(v.routeKey)) }
