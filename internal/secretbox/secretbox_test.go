package secretbox

import (
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	b := NewRandom()
	sealed := b.Seal("ws1", "cred1", "sk-secret-value-1234")
	if strings.Contains(sealed, "secret") {
		t.Fatalf("plaintext visible in %q", sealed)
	}
	got, err := b.Open("ws1", "cred1", sealed)
	if err != nil || got != "sk-secret-value-1234" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := b.Open("ws2", "cred1", sealed); err == nil {
		t.Fatal("a value opened under another workspace")
	}
	if _, err := b.Open("ws1", "cred2", sealed); err == nil {
		t.Fatal("a value opened under another id")
	}
	if _, err := NewRandom().Open("ws1", "cred1", sealed); err == nil {
		t.Fatal("a value opened with another key")
	}
	if _, err := b.Open("ws1", "cred1", "v1:!!"); err == nil {
		t.Fatal("garbage opened")
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{
		"sk-emulator-0000000000000000abcd": "sk-…abcd",
		"ghp_1234567890abcdefWXYZ":         "ghp…WXYZ", // never more than 3 prefix characters
		"a_b-1234567890":                   "a_…7890",
		"postgres://u:p@h/db":              "pos…h/db",
		"twelve-chars":                     "twe…hars", // 12: prefix and last 4
		"eleven-char":                      "…ar",      // under 12: the last 2 only
		"short":                            "…rt",
		"abc":                              "…bc",
		"ab":                               "…", // the last 2 would be all of it
		"x":                                "…",
		"clé-secrète-ü12":                  "clé…-ü12", // characters, not bytes
		"":                                 "",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
