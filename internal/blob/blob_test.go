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
)

// forEachStore runs fn against both implementations.
func forEachStore(t *testing.T, fn func(t *testing.T, s Store)) {
	t.Run("dir", func(t *testing.T) {
		d, err := NewDir(filepath.Join(t.TempDir(), "blobs"))
		if err != nil {
			t.Fatal(err)
		}
		fn(t, d)
	})
	t.Run("memory", func(t *testing.T) { fn(t, NewMemory()) })
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
