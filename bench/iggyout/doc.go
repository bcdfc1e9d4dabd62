// Package iggyout benchmarks the iggy output, which runs on this
// repository's own Iggy client (package iggy). With the same 1 KB payloads,
// 100 messages per request and balanced partitioning it measures a
// generate -> iggy pipeline, a raw SendMessages loop on our client
// (raw_client, both dialects), the raw Iggy Go SDK loop (raw_sdk, Iggy 0.8
// only: the SDK speaks nothing else) and generate -> drop. The targets are
// the in-process test server in dialects 0.8 and 0.9, each plain and with
// 1 ms added to every send, and the real servers at IGGY_TCP_ADDRESS and
// IGGY09_TCP_ADDRESS when set. Per target it reports the pipeline over the
// raw SDK loop (a 0.9 target's over its 0.8 twin's) and over raw_client,
// and as key_figure the pipeline against the 1 ms test server in each
// dialect over the raw SDK loop on 0.8. See README.md for how to run it and
// the figures measured.
package iggyout
