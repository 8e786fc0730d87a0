package auth

import (
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TokenTTL is how long a login token is valid.
const TokenTTL = 12 * time.Hour

// Claims are what a login token says: the user id (sub) and email, with issue and expiry
// times.
type Claims struct {
	Email string `json:"email"`
	jwt.RegisteredClaims
}

// SignToken returns an HS256 token for the user, valid from now for TokenTTL, and its expiry.
func SignToken(secret []byte, userID, email string, now time.Time) (string, time.Time, error) {
	if len(secret) == 0 {
		return "", time.Time{}, errors.New("jwt: no signing secret")
	}
	exp := now.Add(TokenTTL)
	c := Claims{Email: email, RegisteredClaims: jwt.RegisteredClaims{
		Subject: userID, IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	}}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign token: %w", err)
	}
	return tok, exp, nil
}

// ParseToken verifies an HS256 token (no other algorithm is accepted) and its expiry, and
// returns its claims.
func ParseToken(secret []byte, raw string) (*Claims, error) {
	if len(secret) == 0 {
		return nil, errors.New("jwt: no signing secret")
	}
	var c Claims
	_, err := jwt.ParseWithClaims(raw, &c, func(*jwt.Token) (any, error) { return secret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil {
		return nil, err
	}
	if c.Subject == "" {
		return nil, errors.New("jwt: token has no subject")
	}
	return &c, nil
}
