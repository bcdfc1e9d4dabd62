package iggyoutput

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fluss-iggy/fluss-iggy/internal/flussmeta"
	"github.com/redpanda-data/benthos/v4/public/service"
)

// BenchmarkGroupBatch measures what the output adds per message before the
// SDK serialises it: destinations, validation and building Iggy messages.
func BenchmarkGroupBatch(b *testing.B) {
	payload := []byte(strings.Repeat("x", 1024))
	for name, extra := range map[string]string{
		"static":                  "",
		"key+id+headers":          "partitioning: messages_key\nkey: '${! @k }'\nmessage_id: '${! @id }'\nheaders: {include_prefixes: [fluss_]}",
		"interpolated_topic+part": "partitioning: partition_id\npartition: '${! @p }'",
		// config/fluss_to_iggy.yaml's message id
		"fluss_message_id": "message_id: '${! @fluss_message_id }'",
		// the no-mapping pipeline of make bench: config/fluss_to_iggy.yaml
		// keyed by bucket, on a log table's 8 metadata keys
		"shipped_nomap": "partitioning: messages_key\nkey: '${! @fluss_bucket }'\nmessage_id: '${! @fluss_message_id }'\nheaders: {include_prefixes: [fluss_]}",
	} {
		b.Run(name, func(b *testing.B) {
			yaml := "username: u\npassword: p\nstream: s\ntopic: '${! @topic.or(\"t\") }'\n" + extra
			if name == "shipped_nomap" {
				yaml = "username: u\npassword: p\nstream: s\ntopic: '${! @fluss_table }'\n" + extra
			}
			if name == "static" {
				yaml = "username: u\npassword: p\nstream: s\ntopic: t\n"
			}
			pc, err := Spec().ParseYAML(yaml, nil)
			if err != nil {
				b.Fatal(err)
			}
			o, err := NewFromConfig(pc, service.MockResources())
			if err != nil {
				b.Fatal(err)
			}
			batch := make(service.MessageBatch, 100)
			for i := range batch {
				m := service.NewMessage(payload)
				if name == "shipped_nomap" {
					logTableMeta(m, i)
					batch[i] = m
					continue
				}
				m.MetaSetMut("k", fmt.Sprint(i%8))
				m.MetaSetMut("p", int64(i%4))
				m.MetaSetMut("id", fmt.Sprint(i+1))
				m.MetaSetMut("fluss_offset", int64(i))
				m.MetaSetMut("fluss_table", "orders")
				m.MetaSetMut("fluss_table_id", int64(12))
				m.MetaSetMut("fluss_bucket", int64(i%4))
				m.MetaSetMut("fluss_message_id", flussmeta.FormatMessageID(12, -1, int32(i%4), int64(i)))
				batch[i] = m
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				var parts partitionsFunc
				if o.conf.partitioning == partitioningKey {
					parts = func(string, string) (uint32, error) { return 4, nil }
				}
				mb := o.builders.get(o.conf.headers, o.messageIDs(batch), len(batch))
				groups, err := o.groupBatch(mb, batch, parts, func(i int, err error) { b.Fatal(err) })
				o.builders.put(mb)
				if err != nil || len(groups) == 0 {
					b.Fatal("no groups")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/msg")
		})
	}
}

// logTableMeta sets the 8 metadata keys the fluss input gives a log table's
// row message.
func logTableMeta(m *service.Message, i int) {
	m.MetaSetMut("fluss_database", "demo")
	m.MetaSetMut("fluss_table", "orders")
	m.MetaSetMut("fluss_table_id", int64(12))
	m.MetaSetMut("fluss_bucket", int64(i%4))
	m.MetaSetMut("fluss_timestamp", int64(1767225600000))
	m.MetaSetMut("fluss_schema_id", int64(1))
	m.MetaSetMut("fluss_offset", int64(i))
	m.MetaSetMut("fluss_message_id", flussmeta.FormatMessageID(12, -1, int32(i%4), int64(i)))
}
