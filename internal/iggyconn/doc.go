// Package iggyconn is the Iggy connection of the iggy input and output:
// the configuration fields that say where and how to connect and log in
// (Fields, TimingFields), their parsing into the client's options (Parse),
// and the Connector that dials, logs which server it found, backs off
// between failed attempts and stops the pipeline on a login the server
// keeps refusing or a server it cannot speak with.
package iggyconn
