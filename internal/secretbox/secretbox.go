// Package secretbox encrypts secret values at rest with AES-256-GCM. Each value's key is
// derived (HKDF-SHA256) from a master key and bound, as additional data, to the workspace and
// resource id it belongs to, so a ciphertext copied to another row does not decrypt.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the length of a master key in bytes.
const KeySize = 32

// version prefixes every ciphertext so the scheme or key can change later.
const version = "v1"

// Box encrypts and decrypts with one master key.
type Box struct {
	aead   cipher.AEAD
	master []byte
}

// New returns a Box for a 32-byte master key.
func New(master []byte) (*Box, error) {
	if len(master) != KeySize {
		return nil, fmt.Errorf("secretbox: master key must be %d bytes, got %d", KeySize, len(master))
	}
	key, err := hkdf.Key(sha256.New, master, nil, "agentplane secretbox v1", 32)
	if err != nil {
		return nil, fmt.Errorf("secretbox: derive key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead, master: append([]byte(nil), master...)}, nil
}

// Derive returns a 32-byte key for another purpose, derived from the master key with
// HKDF-SHA256 and the info string (e.g. "agentplane jwt v1"), so one configured secret can
// key several things without them sharing a key.
func (b *Box) Derive(info string) ([]byte, error) {
	k, err := hkdf.Key(sha256.New, b.master, nil, info, 32)
	if err != nil {
		return nil, fmt.Errorf("secretbox: derive %q key: %w", info, err)
	}
	return k, nil
}

// NewRandom returns a Box with a fresh random key, for data that lives only in memory.
func NewRandom() *Box {
	b, err := New(RandomKey())
	if err != nil {
		panic(err) // unreachable: the key has the right size
	}
	return b
}

// RandomKey returns a new random master key.
func RandomKey() []byte {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k)
	return k
}

func aad(workspaceID, id string) []byte { return []byte(workspaceID + "\x00" + id) }

// Seal encrypts plaintext for the given workspace and resource id.
func (b *Box) Seal(workspaceID, id, plaintext string) string {
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	ct := b.aead.Seal(nonce, nonce, []byte(plaintext), aad(workspaceID, id))
	return version + ":" + base64.RawStdEncoding.EncodeToString(ct)
}

// ErrDecrypt says a ciphertext is corrupt, was made with another key, or belongs to another row.
var ErrDecrypt = errors.New("secretbox: cannot decrypt value")

// Open decrypts a value made by Seal for the same workspace and id.
func (b *Box) Open(workspaceID, id, sealed string) (string, error) {
	rest, ok := strings.CutPrefix(sealed, version+":")
	if !ok {
		return "", ErrDecrypt
	}
	raw, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return "", ErrDecrypt
	}
	n := b.aead.NonceSize()
	pt, err := b.aead.Open(nil, raw[:n], raw[n:], aad(workspaceID, id))
	if err != nil {
		return "", ErrDecrypt
	}
	return string(pt), nil
}

// Mask shows a secret the way reads return it, in characters (runes): values of 12 or more
// show a prefix of at most 3 characters (cut after a "-" or "_" within them, as in "sk-"),
// an ellipsis and the last four ("sk-…abcd"); shorter values show only the ellipsis
// and their last two ("…cd"), and values of one or two characters only the ellipsis, since
// their last two would be the whole secret.
func Mask(v string) string {
	r := []rune(v)
	switch {
	case len(r) == 0:
		return ""
	case len(r) <= 2:
		return "…"
	case len(r) < 12:
		return "…" + string(r[len(r)-2:])
	}
	prefix := 3
	for i, c := range r[:3] {
		if c == '-' || c == '_' {
			prefix = i + 1
			break
		}
	}
	return string(r[:prefix]) + "…" + string(r[len(r)-4:])
}
