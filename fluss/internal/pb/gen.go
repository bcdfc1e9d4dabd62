// Package pb holds the protobuf messages of the Fluss client protocol, generated
// from fluss.proto (written for this project; see the header of that file).
//
// It is internal: callers use the typed API of package fluss and the request
// helpers of package fluss/internal/wire.
//
// The generated code must be current. Regenerate with
//
//	go generate ./fluss/internal/pb
//
// using exactly these tool versions (they are recorded in fluss.pb.go, so a
// CI check can regenerate and diff):
//
//	protoc         libprotoc 3.21.12 (Debian 12 package protobuf-compiler)
//	protoc-gen-go  v1.36.12 (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12)
package pb

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative fluss.proto
