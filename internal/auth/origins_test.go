package auth

import (
	"slices"
	"strings"
	"testing"
)

func TestParseOrigins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "" means an error
	}{
		{"https://example.com", "https://example.com"},
		{"HTTPS://Example.COM", "https://example.com"},
		{"https://example.com:443", "https://example.com"},
		{"http://example.com:80", "http://example.com"},
		{"http://example.com:443", "http://example.com:443"},
		{"https://example.com:80", "https://example.com:80"},
		{"https://example.com:08443", "https://example.com:8443"},
		{"http://localhost:3000", "http://localhost:3000"},
		{"  https://app.example.com  ", "https://app.example.com"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://[::1]:8080", "http://[::1]:8080"},
		{"https://[2001:DB8:0::1]", "https://[2001:db8::1]"},
		{"https://[2001:db8::1]:443", "https://[2001:db8::1]"},
		{"https://my_host.internal", "https://my_host.internal"},
		{"https://xn--bcher-kva.example", "https://xn--bcher-kva.example"},
		{"", ""},
		{"example.com", ""},
		{"null", ""},
		{"*", ""},
		{"https://*.example.com", ""},
		{"ftp://example.com", ""},
		{"ws://example.com", ""},
		{"https://", ""},
		{"https:///", ""},
		{"https://example.com/", ""},
		{"https://example.com/path", ""},
		{"https://example.com?q=1", ""},
		{"https://example.com#frag", ""},
		{"https://user@example.com", ""},
		{"https://example.com:", ""},
		{"https://example.com:0", ""},
		{"https://example.com:65536", ""},
		{"https://example.com:http", ""},
		{"https://example.com:-1", ""},
		{"https://example.com:1:2", ""},
		{"https://::1", ""},
		{"https://[::1", ""},
		{"https://[::1]x", ""},
		{"https://[fe80::1%25eth0]", ""},
		{"https://[10.0.0.1]", ""},
		{"https://exa mple.com", ""},
		{"https://bücher.example", ""},
		{"https://example..com", ""},
		{"https://.example.com", ""},
		{"https://example.com.", ""},
		{"https://" + strings.Repeat("a", 64) + ".com", ""},
	}
	for _, tt := range tests {
		got, err := ParseOrigins([]string{tt.in})
		if tt.want == "" {
			if err == nil {
				t.Errorf("ParseOrigins(%q) = %q, want an error", tt.in, got)
			} else if !strings.Contains(err.Error(), "allowed_origins[0]") {
				t.Errorf("ParseOrigins(%q) error %q does not name the entry", tt.in, err)
			}
			continue
		}
		if err != nil || len(got) != 1 || got[0] != tt.want {
			t.Errorf("ParseOrigins(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestParseOriginsList(t *testing.T) {
	t.Parallel()
	got, err := ParseOrigins([]string{"https://a.example", "HTTPS://A.example:443", "http://a.example"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://a.example", "http://a.example"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q (deduplicated, in order)", got, want)
	}
	if _, err := ParseOrigins([]string{"https://a.example", "nope"}); err == nil || !strings.Contains(err.Error(), `allowed_origins[1] "nope"`) {
		t.Errorf("error %v does not name entry 1", err)
	}
	if got, err := ParseOrigins(nil); err != nil || len(got) != 0 {
		t.Errorf("ParseOrigins(nil) = %q, %v", got, err)
	}
}

func TestOriginAllowed(t *testing.T) {
	t.Parallel()
	allowed := []string{"https://app.example.com", "http://localhost:3000", "https://[::1]:8443"}
	tests := []struct {
		allowed []string
		origin  string
		want    bool
	}{
		{nil, "https://evil.example", true},
		{[]string{}, "null", true},
		{allowed, "https://app.example.com", true},
		{allowed, "https://APP.example.com:443", true},
		{allowed, "http://localhost:3000", true},
		{allowed, "https://[0:0::1]:8443", true},
		{allowed, "http://app.example.com", false},
		{allowed, "https://app.example.com:8443", false},
		{allowed, "http://localhost:3001", false},
		{allowed, "https://evil.example", false},
		{allowed, "https://app.example.com.evil.example", false},
		{allowed, "null", false},
		{allowed, "", false},
		{allowed, "https://app.example.com/", false},
		// Entries that were not passed through ParseOrigins are normalised too.
		{[]string{"HTTPS://App.Example.com:443"}, "https://app.example.com", true},
		{[]string{"junk"}, "junk", false},
	}
	for _, tt := range tests {
		if got := OriginAllowed(tt.allowed, tt.origin); got != tt.want {
			t.Errorf("OriginAllowed(%q, %q) = %v, want %v", tt.allowed, tt.origin, got, tt.want)
		}
	}
}

func FuzzParseOrigins(f *testing.F) {
	f.Add("https://example.com")
	f.Add("HTTPS://Example.COM:443,http://localhost:3000")
	f.Add("http://[::1]:8080,https://[2001:DB8::1]:443")
	f.Add("https://example.com/,null,*")
	f.Add("https://example.com:08443")
	f.Add("https://[fe80::1%25eth0]")
	f.Fuzz(func(t *testing.T, s string) {
		entries := strings.Split(s, ",")
		got, err := ParseOrigins(entries)
		if err != nil {
			return
		}
		again, err := ParseOrigins(got)
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("ParseOrigins not idempotent: %q -> %q -> %q, %v", entries, got, again, err)
		}
		for _, o := range got {
			if o != strings.ToLower(o) || strings.HasSuffix(o, ":443") && strings.HasPrefix(o, "https:") ||
				strings.HasSuffix(o, ":80") && strings.HasPrefix(o, "http:") {
				t.Fatalf("not normalised: %q", o)
			}
		}
		for _, e := range entries {
			if !OriginAllowed(got, e) {
				t.Fatalf("OriginAllowed(%q, %q) = false for an accepted entry", got, e)
			}
		}
	})
}
