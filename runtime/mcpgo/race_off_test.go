//go:build !race

package mcpgo_test

const raceDetector = false
