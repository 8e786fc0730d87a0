package api

import (
	"net/http"
	"strconv"
	"sync"
)

// readCache keeps the bodies of successful GET responses, tagged with the store generation
// they were read at. Any write bumps the generation, so a tagged body is served only while
// nothing has changed. It is used where this process is the database's only writer (the
// emulator's in-memory store, a SQLite file).
type readCache struct {
	mu      sync.RWMutex
	entries map[string]cachedBody
	gen     func() uint64
}

type cachedBody struct {
	gen  uint64
	body []byte
}

const readCacheMax = 4096

func newReadCache(gen func() uint64) *readCache {
	return &readCache{entries: make(map[string]cachedBody), gen: gen}
}

// wrap serves h through the cache; key identifies the response (workspace and URL).
func (c *readCache) wrap(h handlerFunc, key func(r *http.Request) string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		k := key(r)
		gen := c.gen() // read before the handler so a concurrent write makes the entry stale
		c.mu.RLock()
		e, ok := c.entries[k]
		c.mu.RUnlock()
		if ok && e.gen == gen {
			hd := w.Header()
			hd.Set("Content-Type", "application/json")
			hd.Set("Content-Length", strconv.Itoa(len(e.body)))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(e.body)
			return nil
		}
		rec := &recorder{ResponseWriter: w}
		if err := h(rec, r); err != nil || rec.status != http.StatusOK {
			return err
		}
		c.mu.Lock()
		if len(c.entries) >= readCacheMax {
			clear(c.entries)
		}
		c.entries[k] = cachedBody{gen: gen, body: append([]byte(nil), rec.body.Bytes()...)}
		c.mu.Unlock()
		return nil
	}
}
