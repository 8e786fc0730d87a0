package auth

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseIPAllowlistErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []string
		wantErr string
	}{
		{"empty entry", []string{"10.0.0.1", ""}, `allowed_ips[1] "": empty entry`},
		{"blank entry", []string{"  "}, `allowed_ips[0] "  "`},
		{"junk", []string{"localhost"}, `allowed_ips[0] "localhost"`},
		{"zone", []string{"fe80::1%eth0"}, "zone"},
		{"zoned prefix", []string{"fe80::%eth0/64"}, "zone"},
		{"bad mask", []string{"10.0.0.0/33"}, `allowed_ips[0] "10.0.0.0/33"`},
		{"bad v6 mask", []string{"2001:db8::/129"}, "2001:db8::/129"},
		{"no mask", []string{"10.0.0.0/"}, "10.0.0.0/"},
		{"octal-looking", []string{"010.0.0.1"}, "010.0.0.1"},
		{"short v4", []string{"10.0.1"}, "10.0.1"},
		{"port", []string{"10.0.0.1:80"}, "10.0.0.1:80"},
		{"brackets", []string{"[::1]"}, "[::1]"},
		{"mapped short mask", []string{"::ffff:10.0.0.0/80"}, "at least 96"},
		{"range syntax", []string{"10.0.0.1-10.0.0.9"}, "10.0.0.1-10.0.0.9"},
		{"comma list in one entry", []string{"10.0.0.1,10.0.0.2"}, `allowed_ips[0]`},
		{"second bad", []string{"10.0.0.0/8", "::1", "nope"}, `allowed_ips[2] "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := ParseIPAllowlist(tt.entries)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ParseIPAllowlist(%q) = %v, %v; want error containing %q", tt.entries, l, err, tt.wantErr)
			}
		})
	}
}

func TestIPAllowlistAllows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		entries []string
		allow   []string
		deny    []string
	}{
		{
			name:    "nil list allows all",
			entries: nil,
			allow:   []string{"10.0.0.1", "2001:db8::1", "::ffff:1.2.3.4", "fe80::1%eth0"},
		},
		{
			name:    "single IPv4",
			entries: []string{"203.0.113.7"},
			allow:   []string{"203.0.113.7", "::ffff:203.0.113.7"},
			deny:    []string{"203.0.113.8", "203.0.113.6", "::203.0.113.7", "2001:db8::1"},
		},
		{
			name:    "IPv4 CIDR",
			entries: []string{"10.0.0.0/8"},
			allow:   []string{"10.0.0.0", "10.255.255.255", "10.1.2.3", "::ffff:10.1.2.3"},
			deny:    []string{"11.0.0.0", "9.255.255.255", "::ffff:11.0.0.1"},
		},
		{
			name:    "host bits are cleared",
			entries: []string{" 192.168.1.77/24 "},
			allow:   []string{"192.168.1.0", "192.168.1.255"},
			deny:    []string{"192.168.2.1"},
		},
		{
			name:    "single IPv6",
			entries: []string{"2001:DB8::1"},
			allow:   []string{"2001:db8::1", "2001:db8:0:0:0:0:0:1", "2001:db8::1%eth0"},
			deny:    []string{"2001:db8::2", "10.0.0.1"},
		},
		{
			name:    "IPv6 CIDR",
			entries: []string{"2001:db8::/32"},
			allow:   []string{"2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8:1::5"},
			deny:    []string{"2001:db9::", "2001:db7:ffff::1", "32.1.13.184"},
		},
		{
			name:    "mapped rule matches plain IPv4",
			entries: []string{"::ffff:10.0.0.1"},
			allow:   []string{"10.0.0.1", "::ffff:10.0.0.1"},
			deny:    []string{"10.0.0.2"},
		},
		{
			name:    "mapped CIDR rule",
			entries: []string{"::ffff:10.0.0.0/104"},
			allow:   []string{"10.9.9.9", "::ffff:10.9.9.9"},
			deny:    []string{"11.0.0.1", "::ffff:11.0.0.1"},
		},
		{
			name:    "IPv6 ranges do not match IPv4",
			entries: []string{"::/0"},
			allow:   []string{"::1", "2001:db8::1"},
			deny:    []string{"10.0.0.1", "::ffff:10.0.0.1"},
		},
		{
			name:    "IPv4 everything",
			entries: []string{"0.0.0.0/0"},
			allow:   []string{"1.1.1.1", "::ffff:8.8.8.8"},
			deny:    []string{"::1"},
		},
		{
			name:    "mixed",
			entries: []string{"10.0.0.0/8", "192.168.1.5", "2001:db8::/48", "::1"},
			allow:   []string{"10.4.4.4", "192.168.1.5", "2001:db8:0:1::", "::1", "::ffff:192.168.1.5"},
			deny:    []string{"192.168.1.6", "2001:db8:1::", "::2", "127.0.0.1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l, err := ParseIPAllowlist(tt.entries)
			if err != nil {
				t.Fatalf("ParseIPAllowlist(%q): %v", tt.entries, err)
			}
			if l.Len() != len(tt.entries) {
				t.Errorf("Len() = %d, want %d", l.Len(), len(tt.entries))
			}
			for _, s := range tt.allow {
				if !l.Allows(netip.MustParseAddr(s)) {
					t.Errorf("%q does not allow %s", tt.entries, s)
				}
			}
			for _, s := range tt.deny {
				if l.Allows(netip.MustParseAddr(s)) {
					t.Errorf("%q allows %s", tt.entries, s)
				}
			}
		})
	}
}

func TestIPAllowlistEmpty(t *testing.T) {
	t.Parallel()
	var nilList *IPAllowlist
	empty, err := ParseIPAllowlist([]string{})
	if err != nil {
		t.Fatal(err)
	}
	a := netip.MustParseAddr("10.0.0.1")
	for name, l := range map[string]*IPAllowlist{"nil": nilList, "empty": empty} {
		if !l.Allows(a) || !l.Allows(netip.Addr{}) {
			t.Errorf("%s list does not allow everything", name)
		}
		if l.Contains(a) {
			t.Errorf("%s list contains %s", name, a)
		}
	}
	one, _ := ParseIPAllowlist([]string{"0.0.0.0/0", "::/0"})
	if one.Allows(netip.Addr{}) {
		t.Error("a non-empty list allows the zero Addr")
	}
}

func TestClientIP(t *testing.T) {
	t.Parallel()
	proxies, err := ParseIPAllowlist([]string{"10.0.0.0/8", "fd00::/8", "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		remote  string
		xff     []string
		trusted *IPAllowlist
		want    string // "" means an error
	}{
		{"direct IPv4", "203.0.113.9:5555", nil, proxies, "203.0.113.9"},
		{"direct IPv6", "[2001:db8::9]:443", nil, proxies, "2001:db8::9"},
		{"direct zoned", "[fe80::1%eth0]:80", nil, proxies, "fe80::1"},
		{"direct mapped", "[::ffff:203.0.113.9]:80", nil, proxies, "203.0.113.9"},
		{"bare IP", "203.0.113.9", nil, proxies, "203.0.113.9"},
		{"untrusted peer ignores XFF", "203.0.113.9:1", []string{"1.2.3.4"}, proxies, "203.0.113.9"},
		{"nil trusted ignores XFF", "10.0.0.2:1", []string{"1.2.3.4"}, nil, "10.0.0.2"},
		{"untrusted peer ignores junk XFF", "203.0.113.9:1", []string{"junk"}, proxies, "203.0.113.9"},
		{"one proxy", "10.0.0.2:1", []string{"198.51.100.4"}, proxies, "198.51.100.4"},
		{"trusted peer, no XFF", "10.0.0.2:1", nil, proxies, "10.0.0.2"},
		{"trusted peer, empty XFF", "10.0.0.2:1", []string{""}, proxies, "10.0.0.2"},
		{"chain of proxies", "10.0.0.2:1", []string{"198.51.100.4, 10.1.1.1, 192.0.2.1"}, proxies, "198.51.100.4"},
		{"spoofed left part skipped", "10.0.0.2:1", []string{"6.6.6.6, 198.51.100.4, 10.1.1.1"}, proxies, "198.51.100.4"},
		{"junk left of the client is never read", "10.0.0.2:1", []string{"junk, 198.51.100.4"}, proxies, "198.51.100.4"},
		{"several header values", "10.0.0.2:1", []string{"6.6.6.6", "198.51.100.4", "10.1.1.1,10.2.2.2"}, proxies, "198.51.100.4"},
		{"all trusted gives left-most", "10.0.0.2:1", []string{"10.9.9.9, 10.1.1.1", "192.0.2.1"}, proxies, "10.9.9.9"},
		{"IPv6 chain", "[fd00::1]:1", []string{"2001:db8::5, fd12::3"}, proxies, "2001:db8::5"},
		{"mapped in XFF", "10.0.0.2:1", []string{"::ffff:198.51.100.4, ::ffff:10.1.1.1"}, proxies, "198.51.100.4"},
		{"mapped peer is trusted", "[::ffff:10.0.0.2]:1", []string{"198.51.100.4"}, proxies, "198.51.100.4"},
		{"XFF entry with port", "10.0.0.2:1", []string{"198.51.100.4:1234"}, proxies, "198.51.100.4"},
		{"XFF bracketed IPv6 with port", "10.0.0.2:1", []string{"[2001:db8::5]:1234"}, proxies, "2001:db8::5"},
		{"empty elements skipped", "10.0.0.2:1", []string{"198.51.100.4,, ,"}, proxies, "198.51.100.4"},
		{"malformed right-most", "10.0.0.2:1", []string{"198.51.100.4, junk"}, proxies, ""},
		{"unknown", "10.0.0.2:1", []string{"unknown"}, proxies, ""},
		{"malformed after trusted", "10.0.0.2:1", []string{"nope, 10.1.1.1"}, proxies, ""},
		{"empty remote", "", nil, proxies, ""},
		{"hostname remote", "localhost:80", nil, proxies, ""},
		{"unix socket remote", "@", nil, proxies, ""},
		{"bad port remote", "1.2.3.4:99999", nil, proxies, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ClientIP(tt.remote, tt.xff, tt.trusted)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ClientIP(%q, %q) = %s, want an error", tt.remote, tt.xff, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ClientIP(%q, %q): %v", tt.remote, tt.xff, err)
			}
			if got != netip.MustParseAddr(tt.want) {
				t.Fatalf("ClientIP(%q, %q) = %s, want %s", tt.remote, tt.xff, got, tt.want)
			}
		})
	}
}

// entryAddr returns the address an allowlist entry names (a range's own address for CIDR).
func entryAddr(entry string) (netip.Addr, bool) {
	entry = strings.TrimSpace(entry)
	if p, err := netip.ParsePrefix(entry); err == nil {
		return p.Addr(), true
	}
	a, err := netip.ParseAddr(entry)
	return a, err == nil
}

func FuzzParseIPAllowlist(f *testing.F) {
	f.Add("10.0.0.1")
	f.Add("10.0.0.0/8,2001:db8::/32,::1")
	f.Add("::ffff:10.0.0.1,::ffff:10.0.0.0/104")
	f.Add("192.168.1.77/24, fe80::1")
	f.Add("fe80::1%eth0")
	f.Add("10.0.0.1,,junk")
	f.Add("::ffff:0:0/96")
	f.Fuzz(func(t *testing.T, s string) {
		entries := strings.Split(s, ",")
		l, err := ParseIPAllowlist(entries)
		if err != nil {
			if l != nil {
				t.Fatal("non-nil list with an error")
			}
			return
		}
		if l.Len() != len(entries) {
			t.Fatalf("Len() = %d for %d entries", l.Len(), len(entries))
		}
		for _, e := range entries {
			a, ok := entryAddr(e)
			if !ok {
				t.Fatalf("accepted entry %q that netip cannot parse", e)
			}
			if !l.Allows(a) || !l.Contains(a) {
				t.Fatalf("list %q does not allow its own address %s", s, a)
			}
			u := a.Unmap()
			if u.Is4() {
				m := netip.AddrFrom16(u.As16())
				if !l.Allows(u) || !l.Allows(m) {
					t.Fatalf("list %q treats %s and %s differently", s, u, m)
				}
			}
		}
	})
}

func FuzzClientIP(f *testing.F) {
	f.Add("10.0.0.2:1", "198.51.100.4, 10.1.1.1", "10.0.0.0/8")
	f.Add("[fd00::1]:1", "2001:db8::5, fd12::3", "fd00::/8")
	f.Add("10.0.0.2:1", "10.9.9.9\n10.1.1.1", "10.0.0.0/8")
	f.Add("203.0.113.9:5555", "junk", "10.0.0.0/8")
	f.Add("[::ffff:10.0.0.2]:1", "::ffff:198.51.100.4,,", "::ffff:10.0.0.0/104")
	f.Add("[fe80::1%eth0]:80", "", "fe80::/10")
	f.Fuzz(func(t *testing.T, remote, xff, trustedCSV string) {
		trusted, err := ParseIPAllowlist(strings.Split(trustedCSV, ","))
		if err != nil {
			trusted = nil
		}
		headers := strings.Split(xff, "\n")
		got, err := ClientIP(remote, headers, trusted)
		if err != nil {
			return
		}
		if !got.IsValid() || got.Zone() != "" || got.Is4In6() {
			t.Fatalf("ClientIP returned unnormalised %s", got)
		}
		peer, err := parseHostPort(remote)
		if err != nil {
			t.Fatalf("ClientIP accepted remote %q that parseHostPort rejects", remote)
		}
		if !trusted.Contains(peer) {
			if got != peer {
				t.Fatalf("untrusted peer %s, but ClientIP = %s", peer, got)
			}
			return
		}
		if got != peer && trusted.Contains(got) {
			// Only allowed when every forwarded entry is trusted; then got is the left-most.
			for _, h := range headers {
				for _, e := range strings.Split(h, ",") {
					if e = strings.TrimSpace(e); e == "" {
						continue
					}
					a, err := parseHostPort(e)
					if err == nil && !trusted.Contains(a) {
						t.Fatalf("returned trusted %s although %s is untrusted", got, a)
					}
				}
			}
		}
	})
}
