package datasource

import "testing"

// TestUsers: a retired pool is to be closed exactly when its last query ends, or at once when
// none uses it; a pool that is not retired never is.
func TestUsers(t *testing.T) {
	t.Parallel()

	t.Run("RetiredWhileUsed", func(t *testing.T) {
		var u Users
		u.Add()
		u.Add()
		if u.Retire() {
			t.Fatal("Retire says close while two queries use the pool")
		}
		if u.Done() {
			t.Fatal("Done says close while a query still uses the pool")
		}
		if !u.Done() {
			t.Fatal("the last Done of a retired pool does not say close")
		}
	})

	t.Run("RetiredUnused", func(t *testing.T) {
		var u Users
		u.Add()
		if u.Done() {
			t.Fatal("Done says close on a pool that is not retired")
		}
		if !u.Idle() || !u.Retire() {
			t.Fatal("an unused pool is not idle, or Retire does not say close")
		}
	})
}
