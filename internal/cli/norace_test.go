//go:build !race

package cli_test

// raceEnabled says the tests run with the race detector (the binary they build gets it too).
const raceEnabled = false
