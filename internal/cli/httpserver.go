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
)

// serveHTTP listens on host:port, logs the URL, and serves until ctx ends; then it drains
// in-flight requests for up to grace.
func serveHTTP(ctx context.Context, log *slog.Logger, announce io.Writer, host string, port int, h http.Handler, what string, onShutdown func(), grace time.Duration) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listen on %s:%d: %w", host, port, err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if onShutdown != nil {
		srv.RegisterOnShutdown(onShutdown)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// The address is announced whatever the log level: scripts and tests read it.
	fmt.Fprintf(announce, "agentplane %s listening on http://%s\n", what, ln.Addr())
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
