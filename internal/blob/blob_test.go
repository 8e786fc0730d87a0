package blob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentplane/agentplane/internal/dbtest"
	"github.com/agentplane/agentplane/internal/domain"
	"github.com/agentplane/agentplane/internal/store"
)

// forEachStore runs fn against every implementation: a directory, memory, and the database
// on SQLite and (when TEST_DATABASE_URL is set) PostgreSQL, with workspaces ws, ws1 and ws2.
func forEachStore(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Run("dir", func(t *testing.T) {
		d, err := NewDir(filepath.Join(t.TempDir(), "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		fn(t, d)
	})
	t.Run("memory", func(t *testing.T) { fn(t, NewMemory()) })
	t.Run("database-sqlite", func(t *testing.T) { fn(t, NewDatabase(testStore(t, filepath.Join(t.TempDir(), "db.sqlite")))) })
	t.Run("database-postgres", func(t *testing.T) {
		u := dbtest.PostgresURL(t)
		if u == "" {
			t.Skip(dbtest.SkipMessage)
		}
		fn(t, NewDatabase(testStore(t, u)))
	})
}

// testStore opens the store at url with the workspaces the tests name.
func testStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, ws := range []string{"ws", "ws1", "ws2"} {
		if _, err := st.WorkspaceCreate(context.Background(), &domain.Workspace{ID: ws, Name: ws, Slug: ws}); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// A database blob larger than a chunk reads back whole, from any position, and a blob
// deleted while being read ends the read with an error, not with short content.
func TestDatabaseChunks(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			url := filepath.Join(t.TempDir(), "db.sqlite")
			if name == "postgres" {
				if url = dbtest.PostgresURL(t); url == "" {
					t.Skip(dbtest.SkipMessage)
				}
			}
			ctx := context.Background()
			d := NewDatabase(testStore(t, url))
			data := make([]byte, 2*chunkSize+12345)
			for i := range data {
				data[i] = byte(i * 7 % 251)
			}
			sum := Sum(data)
			if n, err := d.Put(ctx, "ws", sum, bytes.NewReader(data)); err != nil || n != int64(len(data)) {
				t.Fatalf("put: %d %v", n, err)
			}
			f, err := d.Open(ctx, "ws", sum)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(f); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read whole: %d bytes, %v", len(got), err)
			}
			for _, off := range []int64{0, chunkSize - 1, chunkSize, 2*chunkSize + 1, int64(len(data)) - 1} {
				if _, err := f.Seek(off, io.SeekStart); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, 3)
				n, err := io.ReadFull(f, got)
				want := data[off:min(off+3, int64(len(data)))]
				if !bytes.Equal(got[:n], want) || (n < 3 && !errors.Is(err, io.ErrUnexpectedEOF)) {
					t.Fatalf("at %d: %v %v, want %v", off, got[:n], err, want)
				}
			}
			if pos, _ := f.Seek(-10, io.SeekEnd); pos != int64(len(data))-10 {
				t.Fatalf("seek from end: %d", pos)
			}
			if err := d.Delete(ctx, "ws", sum); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			// Nothing more can be read: the chunks are fetched as they are read.
			if _, err := io.ReadAll(f); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("read of a deleted blob: %v", err)
			}
		})
	}
}

func TestStoreRoundTrip(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		data := []byte("\x89PNG fake image bytes")
		sum := Sum(data)
		n, err := s.Put(ctx, "ws1", sum, bytes.NewReader(data))
		if err != nil || n != int64(len(data)) {
			t.Fatalf("put: %d %v", n, err)
		}
		// The same bytes again: still one blob, same content.
		if _, err := s.Put(ctx, "ws1", sum, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if size, err := s.Stat(ctx, "ws1", sum); err != nil || size != int64(len(data)) {
			t.Fatalf("stat: %d %v", size, err)
		}
		f, err := s.Open(ctx, "ws1", sum)
		if err != nil {
			t.Fatal(err)
		}
		if f.Size() != int64(len(data)) {
			t.Fatalf("size %d", f.Size())
		}
		if _, err := f.Seek(5, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(f)
		f.Close()
		if !bytes.Equal(rest, data[5:]) {
			t.Fatalf("read after seek: %q", rest)
		}
		// Workspaces are apart.
		if _, err := s.Open(ctx, "ws2", sum); !errors.Is(err, ErrNotFound) {
			t.Fatalf("other workspace: %v", err)
		}
		if err := s.Delete(ctx, "ws1", sum); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stat(ctx, "ws1", sum); !errors.Is(err, ErrNotFound) {
			t.Fatalf("stat after delete: %v", err)
		}
		if err := s.Delete(ctx, "ws1", sum); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second delete: %v", err)
		}
	})
}

func TestStoreRejects(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		data := []byte("abc")
		if _, err := s.Put(ctx, "ws", Sum([]byte("other")), bytes.NewReader(data)); !errors.Is(err, ErrDigestMismatch) {
			t.Fatalf("mismatch: %v", err)
		}
		if _, err := s.Stat(ctx, "ws", Sum([]byte("other"))); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a mismatched put stored something: %v", err)
		}
		for _, bad := range []struct{ ws, sum string }{{"../x", Sum(data)}, {"ws", "../../etc/passwd"}, {"", Sum(data)}, {"ws", strings.ToUpper(Sum(data))}} {
			if _, err := s.Put(ctx, bad.ws, bad.sum, bytes.NewReader(data)); err == nil {
				t.Errorf("put %q %q: no error", bad.ws, bad.sum)
			}
			if _, err := s.Open(ctx, bad.ws, bad.sum); err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("open %q %q: %v", bad.ws, bad.sum, err)
			}
		}
	})
}

// A failed write leaves neither the blob nor a temporary file behind.
func TestDirLeavesNoTempFiles(t *testing.T) {
	root := t.TempDir()
	d, err := NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := []byte("hello")
	if _, err := d.Put(ctx, "ws", Sum([]byte("nope")), bytes.NewReader(data)); err == nil {
		t.Fatal("mismatch accepted")
	}
	if _, err := d.Put(ctx, "ws", Sum(data), io.MultiReader(bytes.NewReader(data[:2]), errReader{})); err == nil {
		t.Fatal("read error ignored")
	}
	var files []string
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Fatalf("files left: %v", files)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }
