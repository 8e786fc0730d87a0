package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestPasswordHashAndVerify(t *testing.T) {
	ctx := context.Background()
	enc, err := HashPassword(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=65536,t=1,p=2$") || len(strings.Split(enc, "$")) != 6 {
		t.Fatalf("encoding %q", enc)
	}
	if err := VerifyPassword(ctx, "correct horse", enc); err != nil {
		t.Fatal(err)
	}
	if err := VerifyPassword(ctx, "wrong", enc); !errors.Is(err, ErrPasswordMismatch) {
		t.Fatalf("wrong password: %v", err)
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=65536,t=1,p=2$a$b", "$argon2id$v=19$m=x$a$b"} {
		if err := VerifyPassword(ctx, "x", bad); err == nil || errors.Is(err, ErrPasswordMismatch) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
	other, _ := HashPassword(ctx, "correct horse")
	if other == enc {
		t.Fatal("two hashes share a salt")
	}
}

func TestToken(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	now := time.Now()
	tok, exp, err := SignToken(secret, "user1", "a@example.com", now)
	if err != nil || !exp.Equal(now.Add(TokenTTL)) {
		t.Fatal(err)
	}
	c, err := ParseToken(secret, tok)
	if err != nil || c.Subject != "user1" || c.Email != "a@example.com" {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := ParseToken([]byte("another secret, long enough....."), tok); err == nil {
		t.Fatal("a token of another secret was accepted")
	}
	old, _, _ := SignToken(secret, "user1", "a@example.com", now.Add(-13*time.Hour))
	if _, err := ParseToken(secret, old); !errors.Is(err, jwt.ErrTokenExpired) {
		t.Fatalf("expired: %v", err)
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "user1", "exp": now.Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := ParseToken(secret, none); err == nil {
		t.Fatal("alg none was accepted")
	}
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{"sub": "user1", "exp": now.Add(time.Hour).Unix()}).SignedString(secret)
	if _, err := ParseToken(secret, hs512); err == nil {
		t.Fatal("HS512 was accepted")
	}
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "user1"}).SignedString(secret)
	if _, err := ParseToken(secret, noExp); err == nil {
		t.Fatal("a token without exp was accepted")
	}
	if _, err := ParseToken(secret, "garbage"); err == nil {
		t.Fatal("garbage was accepted")
	}
}
