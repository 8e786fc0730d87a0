package store_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// TestSQLiteFilesPrivate: a SQLite database's directory is 0700 and its database, WAL and SHM
// files 0600, whatever the umask; an existing database others could read is tightened, and
// what was tightened is reported.
func TestSQLiteFilesPrivate(t *testing.T) {
	mode := func(t *testing.T, p string) fs.FileMode {
		t.Helper()
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode().Perm()
	}
	open := func(t *testing.T, path string) {
		t.Helper()
		st, err := store.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if _, err := st.WorkspaceCreate(context.Background(), &domain.Workspace{Name: "w", Slug: "w"}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T, path string) {
		t.Helper()
		if m := mode(t, filepath.Dir(path)); m != 0o700 {
			t.Errorf("data directory is %04o, want 0700", m)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			if m := mode(t, p); m != 0o600 {
				t.Errorf("%s is %04o, want 0600", filepath.Base(p), m)
			}
		}
	}

	t.Run("New", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "data", "agentplane.db")
		open(t, path)
		check(t, path)
	})
	t.Run("ExistingOpenToOthers", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		path := filepath.Join(dir, "agentplane.db")
		open(t, path)
		for _, p := range []string{path, path + "-wal", path + "-shm"} {
			os.Chmod(p, 0o644)
		}
		os.Chmod(dir, 0o755)
		fixed, err := domain.SecureSQLiteFiles(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(fixed) != 4 || !strings.Contains(fixed[0], "was mode 0755, now 0700") {
			t.Errorf("tightened %q, want the directory and 3 files", fixed)
		}
		check(t, path)
		if fixed, _ := domain.SecureSQLiteFiles(path); len(fixed) != 0 {
			t.Errorf("a second look tightened %q, want nothing", fixed)
		}
	})
}
