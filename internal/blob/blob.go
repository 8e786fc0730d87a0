// Package blob stores the bytes of assets, content-addressed by their SHA-256 and kept apart
// per workspace: the seam between the asset records in the database and wherever their bytes
// live (a directory on disk for serve, memory for the emulator and tests).
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNotFound is returned by Open, Stat and Delete for a blob that is not stored.
var ErrNotFound = errors.New("blob not found")

// ErrDigestMismatch is returned by Put when the bytes read do not hash to the sum given.
var ErrDigestMismatch = errors.New("blob content does not match its sha256")

// Store keeps blobs by workspace and SHA-256 (lower-case hex). Storing the same bytes twice
// in a workspace keeps one blob; callers count references (the assets table does).
type Store interface {
	// Put stores the bytes r yields as the blob sum of workspace ws, atomically: a reader
	// never sees a partial blob. The bytes must hash to sum (ErrDigestMismatch otherwise,
	// and nothing is stored). It returns the number of bytes stored.
	Put(ctx context.Context, ws, sum string, r io.Reader) (int64, error)
	// Open returns the blob for reading and seeking, with its size.
	Open(ctx context.Context, ws, sum string) (File, error)
	// Stat returns the size of a stored blob.
	Stat(ctx context.Context, ws, sum string) (int64, error)
	// Delete removes a blob; deleting one that is not stored returns ErrNotFound.
	Delete(ctx context.Context, ws, sum string) error
}

// File is an open blob: http.ServeContent reads it with Seek and Read.
type File interface {
	io.ReadSeekCloser
	Size() int64
}

// Sum is the lower-case hex SHA-256 of data, the key of its blob.
func Sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// checkKey rejects a workspace id or sum that cannot name a blob safely (a path separator,
// say): sums are 64 lower-case hex digits, workspace ids letters and digits.
func checkKey(ws, sum string) error {
	if len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
		return fmt.Errorf("blob: invalid sha256 %q", sum)
	}
	if ws == "" || len(ws) > 64 {
		return fmt.Errorf("blob: invalid workspace id %q", ws)
	}
	for _, c := range ws {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return fmt.Errorf("blob: invalid workspace id %q", ws)
		}
	}
	return nil
}

// readChecked reads r whole and checks that the bytes hash to sum (ErrDigestMismatch
// otherwise): the Put of the stores that hold a blob in one piece.
func readChecked(r io.Reader, sum string) ([]byte, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if Sum(data) != sum {
		return nil, ErrDigestMismatch
	}
	return data, nil
}
