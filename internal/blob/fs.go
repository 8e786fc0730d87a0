package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Dir keeps blobs as files under a directory: <dir>/<workspace>/<sum[:2]>/<sum>. Each is
// written to a temporary file in the same directory, synced and renamed into place.
type Dir struct {
	root string
}

var _ Store = (*Dir)(nil)

// NewDir returns a Store under root, creating it (mode 0700) if needed.
func NewDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("blob directory %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("create blob directory: %w", err)
	}
	return &Dir{root: abs}, nil
}

// Root is the directory the blobs are under.
func (d *Dir) Root() string { return d.root }

func (d *Dir) path(ws, sum string) string {
	return filepath.Join(d.root, ws, sum[:2], sum)
}

// Put writes the blob through a temporary file renamed into place once its digest is checked.
func (d *Dir) Put(ctx context.Context, ws, sum string, r io.Reader) (int64, error) {
	if err := checkKey(ws, sum); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	final := d.path(ws, sum)
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("blob directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+sum[:8]+"-*")
	if err != nil {
		return 0, fmt.Errorf("blob temp file: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), r)
	if err != nil {
		return 0, fmt.Errorf("write blob: %w", err)
	}
	if hex.EncodeToString(h.Sum(nil)) != sum {
		return 0, ErrDigestMismatch
	}
	if err := tmp.Sync(); err != nil {
		return 0, fmt.Errorf("sync blob: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("close blob: %w", err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		return 0, fmt.Errorf("rename blob: %w", err)
	}
	done = true
	return n, nil
}

// dirFile is an open blob file.
type dirFile struct {
	*os.File
	size int64
}

func (f dirFile) Size() int64 { return f.size }

// Open opens the blob's file.
func (d *Dir) Open(_ context.Context, ws, sum string) (File, error) {
	if err := checkKey(ws, sum); err != nil {
		return nil, err
	}
	f, err := os.Open(d.path(ws, sum))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("stat blob: %w", err)
	}
	return dirFile{File: f, size: fi.Size()}, nil
}

// Stat returns the blob file's size.
func (d *Dir) Stat(_ context.Context, ws, sum string) (int64, error) {
	if err := checkKey(ws, sum); err != nil {
		return 0, err
	}
	fi, err := os.Stat(d.path(ws, sum))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("stat blob: %w", err)
	}
	return fi.Size(), nil
}

// Delete removes the blob's file (and its fan-out directory when that is left empty).
func (d *Dir) Delete(_ context.Context, ws, sum string) error {
	if err := checkKey(ws, sum); err != nil {
		return err
	}
	p := d.path(ws, sum)
	err := os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete blob: %w", err)
	}
	_ = os.Remove(filepath.Dir(p)) // only succeeds when empty
	return nil
}

// Each calls fn with the workspace and sum of every blob under the directory (temporary
// files and anything else not laid out as a blob are skipped), stopping at fn's first error.
func (d *Dir) Each(fn func(ws, sum string) error) error {
	return filepath.WalkDir(d.root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 3 || checkKey(parts[0], parts[2]) != nil || parts[1] != parts[2][:2] {
			return nil
		}
		return fn(parts[0], parts[2])
	})
}

// Copy puts every blob of from for which keep is true into to, unless to has it already,
// and returns how many it put. Each blob's digest is checked again on the way.
func Copy(ctx context.Context, from *Dir, to Store, keep func(ws, sum string) (bool, error)) (int, error) {
	n := 0
	err := from.Each(func(ws, sum string) error {
		if ok, err := keep(ws, sum); err != nil || !ok {
			return err
		}
		if _, err := to.Stat(ctx, ws, sum); err == nil {
			return nil
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		f, err := from.Open(ctx, ws, sum)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := to.Put(ctx, ws, sum, f); err != nil {
			return fmt.Errorf("copy blob %s of workspace %s: %w", sum, ws, err)
		}
		n++
		return nil
	})
	return n, err
}
