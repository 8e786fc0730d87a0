package api

import (
	"net/http"
	"sync"
)

// readCache keeps the bodies (and ETags) of successful GET responses, tagged with the store
// generation they were read at. Any write bumps the generation, so a kept body is served only
// while nothing has changed. Only the emulator uses it: it is the one writer of its in-memory
// store, while the database of `serve` may be written by other nodes and by the CLI (there,
// clients revalidate with If-None-Match instead; see etagged).
type readCache struct {
	mu      sync.RWMutex
	entries map[string]cachedBody
	gen     func() uint64
}

type cachedBody struct {
	gen  uint64
	body []byte
	tag  string
}

const readCacheMax = 4096

func newReadCache(gen func() uint64) *readCache {
	return &readCache{entries: make(map[string]cachedBody), gen: gen}
}

// wrap serves h through the cache, with ETags as etagged gives them; key identifies the
// response (workspace and URL).
func (c *readCache) wrap(h handlerFunc, key func(r *http.Request) string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		k := key(r)
		gen := c.gen() // read before the handler so a concurrent write makes the entry stale
		c.mu.RLock()
		e, ok := c.entries[k]
		c.mu.RUnlock()
		if ok && e.gen == gen {
			w.Header().Set("Content-Type", "application/json")
			writeTagged(w, r, e.body, e.tag)
			return nil
		}
		buf := &bufferedWriter{header: w.Header()}
		if err := h(buf, r); err != nil {
			return err
		}
		if buf.status != http.StatusOK {
			buf.flushTo(w)
			return nil
		}
		e = cachedBody{gen: gen, body: append([]byte(nil), buf.body.Bytes()...)}
		e.tag = entityTag(e.body)
		c.mu.Lock()
		if len(c.entries) >= readCacheMax {
			clear(c.entries)
		}
		c.entries[k] = e
		c.mu.Unlock()
		writeTagged(w, r, e.body, e.tag)
		return nil
	}
}
