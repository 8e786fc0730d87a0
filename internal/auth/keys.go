package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

const (
	// KeyPrefixMarker starts every API key, so leaked keys are easy to recognise and scan for.
	KeyPrefixMarker = "ap_"
	// KeyBodyLength is the number of base62 characters after KeyPrefixMarker.
	KeyBodyLength = 40
	// KeyLength is the total length of a raw API key.
	KeyLength = len(KeyPrefixMarker) + KeyBodyLength
	// KeyDisplayPrefixLength is how many leading characters of a key are kept for display.
	KeyDisplayPrefixLength = 11
)

// base62 is the key alphabet, in the same order KSUIDs use.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ErrInvalidKey is wrapped by every error ParseKey returns, so callers can map any malformed key
// to 401 with errors.Is without inspecting the message.
var ErrInvalidKey = errors.New("invalid api key")

// NewKey returns a fresh raw API key: KeyPrefixMarker followed by KeyBodyLength base62
// characters drawn uniformly from crypto/rand. The raw key is shown to its owner once; store only
// HashKey of it.
func NewKey() (string, error) {
	// Bytes at or above 248 (= 4*62) are rejected so that b%62 is uniform.
	const limit = 256 - 256%len(base62)
	var sb strings.Builder
	sb.Grow(KeyLength)
	sb.WriteString(KeyPrefixMarker)
	buf := make([]byte, 64)
	for n := 0; n < KeyBodyLength; {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("generate api key: %w", err)
		}
		for _, b := range buf {
			if int(b) >= limit {
				continue
			}
			sb.WriteByte(base62[int(b)%len(base62)])
			n++
			if n == KeyBodyLength {
				break
			}
		}
	}
	return sb.String(), nil
}

// KeyPrefix returns the display prefix of a raw key (its first KeyDisplayPrefixLength
// characters), which is stored as key_prefix. Shorter input is returned whole; validate with
// ParseKey first.
func KeyPrefix(raw string) string {
	if len(raw) <= KeyDisplayPrefixLength {
		return raw
	}
	return raw[:KeyDisplayPrefixLength]
}

// ParseKey reports whether raw has the exact API key format. Its errors wrap ErrInvalidKey and
// never contain the key itself, so they are safe to log and return to clients.
func ParseKey(raw string) error {
	if !strings.HasPrefix(raw, KeyPrefixMarker) {
		return fmt.Errorf("%w: must start with %q", ErrInvalidKey, KeyPrefixMarker)
	}
	if len(raw) != KeyLength {
		return fmt.Errorf("%w: must be %d characters long, got %d", ErrInvalidKey, KeyLength, len(raw))
	}
	for i := len(KeyPrefixMarker); i < len(raw); i++ {
		if !isBase62(raw[i]) {
			return fmt.Errorf("%w: character %d is not a letter or digit", ErrInvalidKey, i+1)
		}
	}
	return nil
}

func isBase62(c byte) bool {
	return '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}

// HashKey returns the lower-case hex SHA-256 of a raw key: the only form of a key that is stored.
// A fast hash is enough because keys carry 238 bits of entropy; nothing is gained by stretching.
func HashKey(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// KeyMatches reports whether raw hashes to storedHash, comparing in constant time so response
// timing reveals nothing about how much of a stored hash a guess matched.
func KeyMatches(raw, storedHash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashKey(raw)), []byte(storedHash)) == 1
}
