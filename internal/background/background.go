// Package background holds the loop that lease renewers and periodic passes share: call a
// function at a fixed interval until the context ends or the function asks to stop.
package background

import (
	"context"
	"time"
)

// Every calls f once per interval, the first time one interval after the call, until ctx
// ends or f returns false; then it returns.
func Every(ctx context.Context, interval time.Duration, f func() bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !f() {
			return
		}
	}
}
