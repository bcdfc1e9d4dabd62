// Package oracle checks the request frames of our Iggy client (package iggy,
// dialect 0.9) against the frames the released Iggy Rust SDK 0.11.0 writes
// for the same operations. The SDK is the reference for what a released
// Iggy 0.9.0 server expects on the wire.
//
// Everything here is test code. sdk011/ is a small Rust program that runs
// one fixed scenario through the SDK's TCP client; the tests run it (and
// our client) against a scripted recording peer, which answers every
// request in the released 0.11.0 reply layout and keeps the request frames.
// The SDK's frames are kept in testdata/, so the comparison of our frames
// runs without Rust. README.md says how to regenerate them.
package oracle
