package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"modernc.org/sqlite"
)

// Every "memory" store of a process starts as a copy of one migrated template, made by the
// first: most tests of the module open a store of their own, and applying the migrations to an
// empty database costs about ten times the copy (BenchmarkOpenMemory, 2 cores shared with
// other builds: 485–551 ms against 3.5–36 ms per store, and 22 s against 2.5 s under the race
// detector).
var memoryTemplate struct {
	once sync.Once
	uri  string      // the template's memdb database
	conn driver.Conn // keeps it alive: a memdb database lives while a connection names it
	err  error
}

// openMemory opens a private in-memory store holding a copy of the migrated template.
func openMemory(ctx context.Context) (*Store, error) {
	memoryTemplate.once.Do(func() { memoryTemplate.err = makeMemoryTemplate() })
	if memoryTemplate.err != nil {
		return nil, memoryTemplate.err
	}
	s, err := connect(ctx, "memory")
	if err != nil {
		return nil, err
	}
	if err := s.restore(ctx, memoryTemplate.uri); err != nil {
		s.Close()
		return nil, fmt.Errorf("copy the migrated in-memory template: %w", err)
	}
	return s, nil
}

// makeMemoryTemplate migrates an in-memory database and keeps one bare driver connection to
// it (no pool, so no goroutine outlives the store that migrated it).
func makeMemoryTemplate() error {
	ctx := context.Background()
	s, err := openMigrated(ctx, "memory")
	if err != nil {
		return err
	}
	defer s.Close()
	conn, err := (&sqlite.Driver{}).Open(s.memURI)
	if err != nil {
		return fmt.Errorf("open the in-memory template: %w", err)
	}
	memoryTemplate.uri, memoryTemplate.conn = s.memURI, conn
	return nil
}

// restorer is what modernc's connection offers to copy a database into its own.
type restorer interface {
	NewRestore(srcURI string) (*sqlite.Backup, error)
}

// restore replaces the store's (empty) database with a copy of the database at srcURI, with
// SQLite's online backup.
func (s *Store) restore(ctx context.Context, srcURI string) error {
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stmtConn)
		if !ok {
			return errors.New("not a SQLite connection of the store")
		}
		r, ok := sc.sqliteDriverConn.(restorer)
		if !ok {
			return errors.New("the SQLite driver cannot restore a backup")
		}
		b, err := r.NewRestore(srcURI)
		if err != nil {
			return err
		}
		for more := true; more; {
			if more, err = b.Step(-1); err != nil {
				return errors.Join(err, b.Finish())
			}
		}
		return b.Finish()
	})
}
