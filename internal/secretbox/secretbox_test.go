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
		"ghp_1234567890abcdefWXYZ":         "ghp_…WXYZ",
		"postgres://u:p@h/db":              "pos…h/db",
		"short":                            "…t",
		"":                                 "",
	} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}
