// Package flussout benchmarks the fluss output against the Java client's
// writer (see README.md).
package flussout
