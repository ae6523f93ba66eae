//go:build race

package mcpgo_test

// raceDetector: the race detector multiplies what allocations cost, so
// allocation bounds are not checked under it.
const raceDetector = true
