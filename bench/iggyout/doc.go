// Package iggyout benchmarks the iggy output: a generate -> iggy pipeline
// against a raw Iggy SDK SendMessages loop with the same 1 KB payloads and
// batch size, on the in-process test server and, when IGGY_TCP_ADDRESS is
// set, on a real Iggy 0.8 server. See README.md for how to run it and the
// figures measured.
package iggyout
