package client

import (
	"net/http"
	"strconv"
	"time"
)

// Backoff bounds of WithRetries: the first wait, and the longest any wait may be.
const (
	retryBase = 200 * time.Millisecond
	retryMax  = 10 * time.Second
)

// retryAfter says whether a try may be repeated, and after how long. A 429 always may (after
// its Retry-After); a 5xx or a connection error only for a request safe to repeat.
func retryAfter(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	safe := req.Method == http.MethodGet || req.Header.Get("Idempotency-Key") != ""
	backoff := min(retryBase<<attempt, retryMax)
	switch {
	case err != nil:
		return backoff, safe && req.Context().Err() == nil
	case resp.StatusCode == http.StatusTooManyRequests:
		if s, convErr := strconv.Atoi(resp.Header.Get("Retry-After")); convErr == nil && s >= 0 {
			return min(time.Duration(s)*time.Second, retryMax), true
		}
		return backoff, true
	case resp.StatusCode >= 500:
		return backoff, safe
	}
	return 0, false
}
