package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/agentplane/agentplane/internal/api"
)

// listen opens host:port before anything else starts, so that a busy port fails the command
// before it creates a database, prints a key or says it is ready.
func listen(host string, port int) (net.Listener, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", net.JoinHostPort(host, strconv.Itoa(port)), err)
	}
	return ln, nil
}

// serveHTTP logs the listener's URL and serves on it until ctx ends; then it drains
// in-flight requests for up to grace.
func serveHTTP(ctx context.Context, log *slog.Logger, announce io.Writer, ln net.Listener, h http.Handler, what string, onShutdown func(), grace time.Duration, hint string) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		// Headers over api.MaxHeaderBytes get a 431 with the JSON envelope from the API's
		// middleware; net/http's own limit sits far above it, so its plain-text 431 only meets
		// requests 16 times over.
		MaxHeaderBytes: 16 * api.MaxHeaderBytes,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if onShutdown != nil {
		srv.RegisterOnShutdown(onShutdown)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// The address is announced whatever the log level: scripts and tests read it. Then where
	// a person goes first, and the hint (what to do before the first run), if any.
	base := browseURL(ln.Addr())
	fmt.Fprintf(announce, "agentplane %s listening on %s\n  Studio:   %s/studio\n  API docs: %s/docs\n", what, base, base, base)
	if hint != "" {
		fmt.Fprintln(announce, hint)
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// browseURL is the base URL to print for a listener: localhost when it listens on every
// interface (0.0.0.0 or [::], which a browser cannot open), else its address.
func browseURL(addr net.Addr) string {
	if a, ok := addr.(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		return "http://localhost:" + strconv.Itoa(a.Port)
	}
	return "http://" + addr.String()
}
