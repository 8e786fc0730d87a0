package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// IPAllowlist is a parsed set of IP rules (single addresses and CIDR ranges, IPv4 and IPv6). It
// is immutable once parsed and safe for concurrent use.
//
// IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) are treated as the IPv4 address they carry, both
// in rules and in the addresses checked, so a dual-stack listener sees the same rules either way.
// IPv6 ranges never match IPv4 clients: "::/0" means "every IPv6 client", not "everyone".
type IPAllowlist struct {
	prefixes []netip.Prefix
}

// ParseIPAllowlist parses allowed_ips entries: each is an address ("10.0.0.1", "2001:db8::1")
// or a CIDR range ("10.0.0.0/8", "2001:db8::/32"); surrounding spaces are ignored and host bits
// in a range are cleared. Empty entries, zones ("fe80::1%eth0") and anything else are rejected
// with an error naming the entry's index and value. A nil or empty list is valid.
func ParseIPAllowlist(entries []string) (*IPAllowlist, error) {
	l := &IPAllowlist{prefixes: make([]netip.Prefix, 0, len(entries))}
	for i, entry := range entries {
		p, err := ParseIPRule(strings.TrimSpace(entry))
		if err != nil {
			return nil, fmt.Errorf("allowed_ips[%d] %q: %w", i, entry, err)
		}
		l.prefixes = append(l.prefixes, p)
	}
	return l, nil
}

// ParseIPRule parses one allowed_ips entry, without surrounding spaces: an address or a CIDR
// range (host bits cleared). Its error says what is wrong with the entry, not which it is.
func ParseIPRule(s string) (netip.Prefix, error) {
	if s == "" {
		return netip.Prefix{}, errors.New("empty entry")
	}
	if strings.Contains(s, "%") {
		return netip.Prefix{}, errors.New("zoned addresses are not allowed")
	}
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("not an IP address or CIDR range: %w", err)
		}
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("not an IP address or CIDR range: %w", err)
	}
	if a := p.Addr(); a.Is4In6() {
		// ::ffff:10.0.0.0/104 is 10.0.0.0/8; a shorter mask would straddle IPv4-mapped and
		// native IPv6 space, which is almost certainly a mistake.
		if p.Bits() < 96 {
			return netip.Prefix{}, errors.New("an IPv4-mapped range needs a prefix length of at least 96")
		}
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// Len returns the number of rules in the list.
func (l *IPAllowlist) Len() int {
	if l == nil {
		return 0
	}
	return len(l.prefixes)
}

// Allows reports whether a client at addr may use a key with this allowlist. An empty or nil
// list allows every address, because allowed_ips is optional.
func (l *IPAllowlist) Allows(addr netip.Addr) bool {
	if l.Len() == 0 {
		return true
	}
	return l.Contains(addr)
}

// Contains reports whether addr matches one of the rules. Unlike Allows, an empty or nil list
// contains nothing, which is what a list of trusted proxies needs.
func (l *IPAllowlist) Contains(addr netip.Addr) bool {
	if l == nil || !addr.IsValid() {
		return false
	}
	addr = normalizeAddr(addr)
	for _, p := range l.prefixes {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// normalizeAddr drops the zone and unwraps IPv4-mapped addresses, so rules see one form of
// every address.
func normalizeAddr(a netip.Addr) netip.Addr {
	return a.WithZone("").Unmap()
}

// ClientIP returns the address a request came from. remoteAddr is the connection's peer
// ("ip:port", as in http.Request.RemoteAddr; a bare IP is also accepted). If that peer is in
// trusted (a nil or empty list trusts no one), the X-Forwarded-For values in xff are walked from
// the right, and the right-most address that is not trusted is the client; if every forwarded
// address is trusted, the left-most is. Entries left of the answer are never read, because only
// the trusted proxies' appends can be believed. A malformed entry that is read is an error.
// The result is normalised: no zone, and IPv4-mapped addresses unwrapped.
func ClientIP(remoteAddr string, xff []string, trusted *IPAllowlist) (netip.Addr, error) {
	peer, err := parseHostPort(remoteAddr)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("remote address %q: %w", remoteAddr, err)
	}
	if !trusted.Contains(peer) {
		return peer, nil
	}
	client := peer
	for i := len(xff) - 1; i >= 0; i-- {
		parts := strings.Split(xff[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			s := strings.TrimSpace(parts[j])
			if s == "" {
				continue // empty list elements are legal in HTTP list headers
			}
			a, err := parseHostPort(s)
			if err != nil {
				return netip.Addr{}, fmt.Errorf("X-Forwarded-For entry %q: %w", s, err)
			}
			if !trusted.Contains(a) {
				return a, nil
			}
			client = a
		}
	}
	return client, nil
}

// parseHostPort parses "ip:port", "[ipv6]:port" or a bare IP and returns the normalised address.
func parseHostPort(s string) (netip.Addr, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return normalizeAddr(ap.Addr()), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, errors.New("not an IP address or ip:port")
	}
	return normalizeAddr(a), nil
}
