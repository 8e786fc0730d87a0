package domain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SQLite's database, WAL and shared-memory files hold inputs, outputs and chat history: only
// the server's user may read them. SQLite creates the -wal and -shm files with the mode of the
// database file, so creating that one 0600 is enough for new databases.
const (
	sqliteFileMode fs.FileMode = 0o600
	sqliteDirMode  fs.FileMode = 0o700
)

// SecureSQLiteFiles makes the SQLite database at path private to this user, before it is
// opened: its directory is created 0700 and the database file 0600 when missing, and an
// existing directory, database, -wal or -shm file that others may read is tightened to those
// modes. It returns one line per tightened path (for the log), umask aside: modes are set
// with chmod, not left to the process's umask.
func SecureSQLiteFiles(path string) ([]string, error) {
	var fixed []string
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, sqliteDirMode); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dir, err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, sqliteFileMode)
	if err != nil {
		return nil, fmt.Errorf("create database file %s: %w", path, err)
	}
	f.Close()

	// Tighten what is wider than it should be: the directory, the database and its companions.
	for _, p := range []struct {
		path string
		mode fs.FileMode
	}{{dir, sqliteDirMode}, {path, sqliteFileMode}, {path + "-wal", sqliteFileMode}, {path + "-shm", sqliteFileMode}} {
		fi, err := os.Stat(p.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fixed, fmt.Errorf("check the mode of %s: %w", p.path, err)
		}
		if fi.Mode().Perm()&^p.mode == 0 {
			continue
		}
		if err := os.Chmod(p.path, p.mode); err != nil {
			return fixed, fmt.Errorf("make %s private (mode %04o): %w", p.path, p.mode, err)
		}
		fixed = append(fixed, fmt.Sprintf("%s was mode %04o, now %04o", p.path, fi.Mode().Perm(), p.mode))
	}
	return fixed, nil
}
