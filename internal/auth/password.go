package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: 64 MiB, one pass, two lanes, a 16-byte salt and a 32-byte key.
const (
	argonMemory  = 64 * 1024
	argonTime    = 1
	argonThreads = 2
	argonSaltLen = 16
	argonKeyLen  = 32
)

// hashing bounds the Argon2id work of this process. Each hash takes 64 MiB and a core for
// tens of milliseconds, so at most half the cores hash at once (the API keeps the others),
// and a flood of logins queues only so far: past maxHashWaiting waiting, or maxHashWait of
// waiting, a check fails at once with ErrBusy instead of piling up goroutines and memory.
var hashing = newHashGate(max(1, runtime.GOMAXPROCS(0)/2), 32, 5*time.Second)

// ErrBusy is returned by HashPassword and VerifyPassword when too many password hashes are
// already running or waiting in this process; retry shortly.
var ErrBusy = errors.New("too many password checks in progress")

// hashGate is a semaphore with a bounded queue and a bounded wait.
type hashGate struct {
	slots      chan struct{}
	waiting    atomic.Int32
	maxWaiting int32
	maxWait    time.Duration
}

func newHashGate(slots, maxWaiting int, maxWait time.Duration) *hashGate {
	return &hashGate{slots: make(chan struct{}, slots), maxWaiting: int32(maxWaiting), maxWait: maxWait}
}

// acquire takes a slot, waiting in the queue if there is room; release gives it back.
func (g *hashGate) acquire(ctx context.Context) (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
		return g.release, nil
	default:
	}
	if g.waiting.Add(1) > g.maxWaiting {
		g.waiting.Add(-1)
		return nil, ErrBusy
	}
	defer g.waiting.Add(-1)
	timer := time.NewTimer(g.maxWait)
	defer timer.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.release, nil
	case <-timer.C:
		return nil, ErrBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (g *hashGate) release() { <-g.slots }

// ErrPasswordMismatch is returned by VerifyPassword when the password is wrong.
var ErrPasswordMismatch = errors.New("password does not match")

func argonKey(ctx context.Context, password string, salt []byte, m uint32, t uint32, p uint8, n uint32) ([]byte, error) {
	release, err := hashing.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return argon2.IDKey([]byte(password), salt, t, m, p, n), nil
}

// HashPassword returns the PHC-style Argon2id encoding of password:
// $argon2id$v=19$m=65536,t=1,p=2$<salt>$<hash> (unpadded standard base64).
func HashPassword(ctx context.Context, password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := argonKey(ctx, password, salt, argonMemory, argonTime, argonThreads, argonKeyLen)
	if err != nil {
		return "", err
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key)), nil
}

// VerifyPassword checks password against an encoding made by HashPassword, in constant time;
// a wrong password is ErrPasswordMismatch, a malformed encoding another error.
func VerifyPassword(ctx context.Context, password, encoded string) error {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return errors.New("password hash: not an argon2id encoding")
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return fmt.Errorf("password hash: unsupported version %q", parts[2])
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 16 || p == 0 {
		return fmt.Errorf("password hash: bad parameters %q", parts[3])
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return fmt.Errorf("password hash: salt: %w", err)
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 || len(want) > 128 {
		return fmt.Errorf("password hash: key is malformed")
	}
	got, err := argonKey(ctx, password, salt, m, t, p, uint32(len(want)))
	if err != nil {
		return err
	}
	if subtle.ConstantTimeCompare(got, want) != 1 {
		return ErrPasswordMismatch
	}
	return nil
}
