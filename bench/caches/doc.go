// Package caches benchmarks Set on the caches that can hold the Fluss input's
// checkpoints: bbolt (sync on and off), redis (without persistence and with
// appendfsync always), and Benthos's own file and memory caches. Every cache
// is built from YAML and reached through the resource manager, as the input
// reaches it.
//
// Run with:
//
//	go test -run '^$' -bench . -benchtime 2s ./bench/caches
//
// Each result reports ns/op (mean Set latency), ops/s, and p50/p99 latency in
// ns. BenchmarkSet is one writer; BenchmarkSetParallel has GOMAXPROCS writers
// on distinct keys (one per bucket, say), which shows whether a store
// serialises writers (bbolt does: one write transaction at a time).
//
// How many writes the input needs: it coalesces checkpoint writes, so each
// checkpoint key is written at most once per acknowledged batch and at most
// once per flush interval. With a 100 ms interval that is at most 10 writes/s
// per key: 10/s for one table whose checkpoint is one key, 10 x N/s when
// each of N buckets has its own key (640/s for 64 buckets), however many
// records per second flow. A store is fast enough when its Set throughput is
// comfortably above that figure.
package caches
