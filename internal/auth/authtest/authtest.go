// Package authtest gives tests cheap password hashes that auth.VerifyPassword checks as it
// checks the product's own.
package authtest

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"testing"

	"golang.org/x/crypto/argon2"
)

// PasswordHash is an Argon2id encoding of password as auth.HashPassword writes one, at 64 KiB
// instead of 64 MiB: VerifyPassword takes the cost from the encoding, and each check at the
// product's cost took a few hundred ms of CPU under -race. auth's tests cover the product's
// parameters; a login with an unknown email still checks against them.
func PasswordHash(t testing.TB, password string) string {
	t.Helper()
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		t.Fatal(err)
	}
	key := argon2.IDKey([]byte(password), salt, 1, 64, 1, 32)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=64,t=1,p=1$%s$%s", argon2.Version, enc.EncodeToString(salt), enc.EncodeToString(key))
}
