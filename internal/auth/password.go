package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

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

// hashSlots bounds how many Argon2id hashes run at once: each takes 64 MiB, so a burst of
// logins must queue rather than exhaust memory.
var hashSlots = make(chan struct{}, 2)

// ErrPasswordMismatch is returned by VerifyPassword when the password is wrong.
var ErrPasswordMismatch = errors.New("password does not match")

func argonKey(ctx context.Context, password string, salt []byte, m uint32, t uint32, p uint8, n uint32) ([]byte, error) {
	select {
	case hashSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-hashSlots }()
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
