package studio_test

import (
	"os"
	"testing"

	"github.com/agentplane/agentplane/internal/store/storetest"
)

// dbs is the migrated SQLite file every `serve` of the tests starts from (startServeModels).
var dbs = storetest.NewTemplate()

// TestMain closes the Chromium the browser tests share and removes the template once they
// are done.
func TestMain(m *testing.M) {
	code := m.Run()
	closeSharedBrowser()
	dbs.Drop()
	os.Exit(code)
}
