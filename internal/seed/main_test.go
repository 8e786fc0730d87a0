package seed

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: every sample database is closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
