package blob

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentplane/agentplane/internal/store"
)

// chunkSize is how many bytes one read of a Database blob fetches: a blob of at most this
// size (most images) is read with one query, a larger one a chunk at a time.
const chunkSize = 1 << 20

// Database keeps blobs in the store's database (table blob_data): serve's store on
// PostgreSQL, where every node of a cluster then serves every blob with no shared directory.
type Database struct{ st *store.Store }

var _ Store = (*Database)(nil)

// NewDatabase returns the blob store of st's database.
func NewDatabase(st *store.Store) *Database { return &Database{st: st} }

// Put reads r whole (assets are bounded well below memory), checks its digest and writes the
// blob in one statement; bytes already stored are kept.
func (d *Database) Put(ctx context.Context, ws, sum string, r io.Reader) (int64, error) {
	if err := checkKey(ws, sum); err != nil {
		return 0, err
	}
	data, err := readChecked(r, sum)
	if err != nil {
		return 0, err
	}
	if err := d.st.BlobDataPut(ctx, ws, sum, data); err != nil {
		return 0, err
	}
	return int64(len(data)), nil
}

// Open checks that the blob is stored and returns a reader that fetches its bytes a chunk at
// a time as they are read: a conditional request answered 304 reads none of them, a range
// request only the chunks it covers.
func (d *Database) Open(ctx context.Context, ws, sum string) (File, error) {
	if err := checkKey(ws, sum); err != nil {
		return nil, err
	}
	size, err := d.st.BlobDataSize(ctx, ws, sum)
	if err != nil {
		return nil, notFoundAs(err)
	}
	return &dbFile{ctx: ctx, st: d.st, ws: ws, sum: sum, size: size}, nil
}

// Stat returns the blob's size.
func (d *Database) Stat(ctx context.Context, ws, sum string) (int64, error) {
	if err := checkKey(ws, sum); err != nil {
		return 0, err
	}
	size, err := d.st.BlobDataSize(ctx, ws, sum)
	return size, notFoundAs(err)
}

// Delete removes the blob.
func (d *Database) Delete(ctx context.Context, ws, sum string) error {
	if err := checkKey(ws, sum); err != nil {
		return err
	}
	return notFoundAs(d.st.BlobDataDelete(ctx, ws, sum))
}

// notFoundAs maps the store's not-found error to ErrNotFound.
func notFoundAs(err error) error {
	if store.IsNotFound(err) {
		return ErrNotFound
	}
	return err
}

// dbFile reads a Database blob a chunk at a time: buf holds the bytes from bufOff on. The
// blob's bytes never change (its key is their digest); one deleted while being read ends the
// read with an error.
type dbFile struct {
	ctx     context.Context
	st      *store.Store
	ws, sum string
	size    int64
	pos     int64
	buf     []byte
	bufOff  int64
}

func (f *dbFile) Size() int64 { return f.size }

func (f *dbFile) Read(p []byte) (int, error) {
	if f.pos >= f.size {
		return 0, io.EOF
	}
	if f.pos < f.bufOff || f.pos >= f.bufOff+int64(len(f.buf)) {
		chunk, _, err := f.st.BlobDataRead(f.ctx, f.ws, f.sum, f.pos, chunkSize)
		if err != nil {
			if store.IsNotFound(err) {
				return 0, fmt.Errorf("blob %s was deleted while read: %w", f.sum, io.ErrUnexpectedEOF)
			}
			return 0, err
		}
		if len(chunk) == 0 {
			return 0, io.ErrUnexpectedEOF
		}
		f.buf, f.bufOff = chunk, f.pos
	}
	n := copy(p, f.buf[f.pos-f.bufOff:])
	f.pos += int64(n)
	return n, nil
}

func (f *dbFile) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = f.pos + offset
	case io.SeekEnd:
		abs = f.size + offset
	default:
		return 0, errors.New("blob: invalid whence")
	}
	if abs < 0 {
		return 0, errors.New("blob: negative position")
	}
	f.pos = abs
	return abs, nil
}

func (f *dbFile) Close() error { return nil }
