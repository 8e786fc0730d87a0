// Command baresse is the stream-memory baseline: a bare net/http Server-Sent Events server
// that holds every stream open, sending a comment every 15 s, until the client leaves.
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "baresse listening on http://%s\n", ln.Addr())
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = w.Write([]byte(": open\n\n"))
		w.(http.Flusher).Flush()
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-t.C:
				_, _ = w.Write([]byte(": ping\n\n"))
				w.(http.Flusher).Flush()
			}
		}
	}))
}
