package blob

import (
	"bytes"
	"context"
	"io"
	"sync"
)

// Memory keeps blobs in process memory: the emulator's store, gone when it exits.
type Memory struct {
	mu    sync.RWMutex
	blobs map[string][]byte // workspace + "/" + sum -> bytes
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory Store.
func NewMemory() *Memory { return &Memory{blobs: map[string][]byte{}} }

// Put reads r whole, checks its digest and keeps the bytes.
func (m *Memory) Put(ctx context.Context, ws, sum string, r io.Reader) (int64, error) {
	if err := checkKey(ws, sum); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	data, err := readChecked(r, sum)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	m.blobs[ws+"/"+sum] = data
	m.mu.Unlock()
	return int64(len(data)), nil
}

type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

// Open returns a reader over the blob's bytes (which are never changed in place).
func (m *Memory) Open(_ context.Context, ws, sum string) (File, error) {
	if err := checkKey(ws, sum); err != nil {
		return nil, err
	}
	m.mu.RLock()
	data, ok := m.blobs[ws+"/"+sum]
	m.mu.RUnlock()
	if !ok {
		return nil, ErrNotFound
	}
	return memFile{bytes.NewReader(data)}, nil
}

// Stat returns the blob's size.
func (m *Memory) Stat(_ context.Context, ws, sum string) (int64, error) {
	if err := checkKey(ws, sum); err != nil {
		return 0, err
	}
	m.mu.RLock()
	data, ok := m.blobs[ws+"/"+sum]
	m.mu.RUnlock()
	if !ok {
		return 0, ErrNotFound
	}
	return int64(len(data)), nil
}

// Delete drops the blob.
func (m *Memory) Delete(_ context.Context, ws, sum string) error {
	if err := checkKey(ws, sum); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.blobs[ws+"/"+sum]; !ok {
		return ErrNotFound
	}
	delete(m.blobs, ws+"/"+sum)
	return nil
}

// Clear drops every blob (the emulator's reset).
func (m *Memory) Clear() {
	m.mu.Lock()
	m.blobs = map[string][]byte{}
	m.mu.Unlock()
}
