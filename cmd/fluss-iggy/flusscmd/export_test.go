package flusscmd

// AppendLagLine exposes appendLagLine to the tests.
var AppendLagLine = appendLagLine

// CollectCheckpoint exposes collectCheckpoint to the tests.
var CollectCheckpoint = collectCheckpoint
