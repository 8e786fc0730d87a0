//go:build race

package e2e

// raceEnabled says the tests run with the race detector (binaries they build get it too).
const raceEnabled = true
