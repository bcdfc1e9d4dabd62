// Package types models Apache Fluss data types, table schemas and table
// descriptors.
//
// It parses and writes the JSON documents the Fluss coordinator stores and
// serves (schema, table descriptor, data type), parses the Fluss SQL-like
// type syntax ("DECIMAL(10, 2) NOT NULL", "MAP<STRING, ARRAY<INT>>",
// "ROW<a INT, b STRING>") and derives the Arrow schema of the ARROW log
// format exactly as the Fluss Java writer declares it.
//
// The package has no dependency on the client or the wire protocol; it is
// used by the client (table info, schemas by id), by the records decoder
// (Arrow schema of a batch's schema id) and by the JSON row encoder.
package types
