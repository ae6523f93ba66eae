// Package faults holds the test that sends every server fault through
// every entry point of the session layer (mcpgen snapshot, a generated
// client over mcpgo, the connection manager) and checks that each meets
// it with the same error class and the same facts, worded once.
package faults
