package flusscmd

// AppendLagLine exposes appendLagLine to the tests.
var AppendLagLine = appendLagLine
