package e2e

import (
	"os"
	"testing"
)

// TestMain removes the binary buildBinary shared between the tests once they are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
