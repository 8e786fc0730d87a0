package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestNewKey(t *testing.T) {
	t.Parallel()
	const n = 1000
	seen := make(map[string]bool, n)
	counts := make(map[byte]int)
	for range n {
		k, err := NewKey()
		if err != nil {
			t.Fatalf("NewKey: %v", err)
		}
		if err := ParseKey(k); err != nil {
			t.Fatalf("NewKey produced a key ParseKey rejects: %v", err)
		}
		if seen[k] {
			t.Fatalf("duplicate key after %d keys", len(seen))
		}
		seen[k] = true
		if p := KeyPrefix(k); len(p) != 11 || !strings.HasPrefix(k, p) {
			t.Fatalf("KeyPrefix = %q, want the first 11 characters", p)
		}
		for i := len(KeyPrefixMarker); i < len(k); i++ {
			counts[k[i]]++
		}
	}
	// 40,000 draws over 62 symbols: about 645 each, standard deviation about 25. A modulo bias
	// (b%62 over 0..255) would put the first eight symbols near 826; allow six deviations.
	if len(counts) != 62 {
		t.Fatalf("only %d of 62 symbols seen", len(counts))
	}
	want := float64(n*KeyBodyLength) / 62
	for c, got := range counts {
		if d := float64(got) - want; d > 150 || d < -150 {
			t.Errorf("symbol %q drawn %d times, want about %.0f", c, got, want)
		}
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	valid := "ap_" + strings.Repeat("aZ09", 10)
	tests := []struct {
		name, key string
		ok        bool
	}{
		{"valid", valid, true},
		{"all digits", "ap_" + strings.Repeat("7", 40), true},
		{"empty", "", false},
		{"prefix only", "ap_", false},
		{"wrong prefix", "sk_" + strings.Repeat("a", 40), false},
		{"upper prefix", "AP_" + strings.Repeat("a", 40), false},
		{"too short", valid[:42], false},
		{"too long", valid + "a", false},
		{"dash", valid[:20] + "-" + valid[21:], false},
		{"underscore", valid[:42] + "_", false},
		{"space", valid[:42] + " ", false},
		{"non-ascii", valid[:41] + "é", false},
		{"nul", valid[:42] + "\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ParseKey(tt.key)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseKey(%q) = %v, want ok=%v", tt.key, err, tt.ok)
			}
			if err == nil {
				return
			}
			if !errors.Is(err, ErrInvalidKey) {
				t.Errorf("error %v does not wrap ErrInvalidKey", err)
			}
			if len(tt.key) > 3 && strings.Contains(err.Error(), tt.key) {
				t.Errorf("error %q echoes the key", err)
			}
		})
	}
}

func TestKeyPrefix(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ap_abcdefgh" + strings.Repeat("x", 32): "ap_abcdefgh",
		"ap_abcdefgh":                           "ap_abcdefgh",
		"ap_":                                   "ap_",
		"":                                      "",
	} {
		if got := KeyPrefix(in); got != want {
			t.Errorf("KeyPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHashKeyAndKeyMatches(t *testing.T) {
	t.Parallel()
	// SHA-256("abc"), a published test vector.
	if got, want := HashKey("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Fatalf("HashKey(abc) = %s, want %s", got, want)
	}
	k, err := NewKey()
	if err != nil {
		t.Fatal(err)
	}
	h := HashKey(k)
	other, _ := NewKey()
	tests := []struct {
		name, raw, hash string
		want            bool
	}{
		{"match", k, h, true},
		{"other key", other, h, false},
		{"key off by one char", k[:42] + string(k[42]^1), h, false},
		{"upper-case hash", k, strings.ToUpper(h), false},
		{"truncated hash", k, h[:63], false},
		{"empty hash", k, "", false},
		{"raw hash as key", h, h, false},
		{"empty key", "", HashKey(""), true},
	}
	for _, tt := range tests {
		if got := KeyMatches(tt.raw, tt.hash); got != tt.want {
			t.Errorf("%s: KeyMatches = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// keyErrorTemplates are ParseKey's messages with digits removed: a message must be one of these,
// which proves no part of the key leaks into it.
var keyErrorTemplates = map[string]bool{
	`invalid api key: must start with "ap_"`:               true,
	`invalid api key: must be  characters long, got `:      true,
	`invalid api key: character  is not a letter or digit`: true,
}

func FuzzParseKey(f *testing.F) {
	f.Add("ap_" + strings.Repeat("aZ09", 10))
	f.Add("ap_" + strings.Repeat("aZ09", 10) + "x")
	f.Add("ap_")
	f.Add("")
	f.Add("ap_" + strings.Repeat("-", 40))
	f.Add("sk-secret")
	f.Fuzz(func(t *testing.T, raw string) {
		err := ParseKey(raw)
		if err != nil {
			msg := strings.Map(func(r rune) rune {
				if '0' <= r && r <= '9' {
					return -1
				}
				return r
			}, err.Error())
			if !keyErrorTemplates[msg] {
				t.Fatalf("unexpected error text %q", err)
			}
			if !errors.Is(err, ErrInvalidKey) {
				t.Fatalf("error %v does not wrap ErrInvalidKey", err)
			}
			return
		}
		if len(raw) != KeyLength || !strings.HasPrefix(raw, KeyPrefixMarker) {
			t.Fatalf("accepted %q", raw)
		}
		if p := KeyPrefix(raw); len(p) != KeyDisplayPrefixLength {
			t.Fatalf("KeyPrefix(%q) = %q", raw, p)
		}
		if !KeyMatches(raw, HashKey(raw)) {
			t.Fatalf("KeyMatches(%q, HashKey) = false", raw)
		}
	})
}
