package llm

import (
	"strings"
	"testing"
)

func TestCountTokens(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		"":            0,
		"   \n\t":     0,
		"hello":       2,
		"hello world": 3,
		"one two three four five six seven eight nine":   12,
		"internationalization":                           4, // 20 bytes: three words' worth
		"https://example.com/a/long/path/to/a/page.html": 8, // 46 bytes: six words' worth
	} {
		if got := CountTokens(s); got != want {
			t.Errorf("CountTokens(%q) = %d, want %d", s, got, want)
		}
	}
	text := "The quick brown fox jumps over the lazy dog, again and again, until the farmer wakes up."
	prev := 0
	for i := 0; i <= len(text); i++ {
		n := CountTokens(text[:i])
		if n < prev {
			t.Fatalf("prefix %q counts %d, less than a shorter prefix (%d)", text[:i], n, prev)
		}
		prev = n
	}
	words := len(strings.Fields(text))
	if got := CountTokens(text); got != (words*4+2)/3 {
		t.Errorf("prose: %d tokens for %d words", got, words)
	}
}
