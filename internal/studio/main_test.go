package studio_test

import (
	"os"
	"testing"
)

// TestMain closes the Chromium the browser tests share once they are done.
func TestMain(m *testing.M) {
	code := m.Run()
	closeSharedBrowser()
	os.Exit(code)
}
