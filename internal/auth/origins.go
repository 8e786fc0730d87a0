package auth

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// ParseOrigins validates allowed_origins entries and returns them normalised, in order, without
// duplicates. Each entry must be "scheme://host[:port]" with scheme http or https and nothing
// after the port; the result is lower-cased and the scheme's default port is dropped, which is
// the form browsers send in the Origin header. A nil or empty list is valid.
func ParseOrigins(entries []string) ([]string, error) {
	out := make([]string, 0, len(entries))
	seen := make(map[string]bool, len(entries))
	for i, entry := range entries {
		o, err := NormalizeOrigin(strings.TrimSpace(entry))
		if err != nil {
			return nil, fmt.Errorf("allowed_origins[%d] %q: %w", i, entry, err)
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out, nil
}

// OriginAllowed reports whether a request's Origin header value may use a key whose
// allowed_origins is allowed. An empty allowed list permits every origin; otherwise origin must
// equal an entry once both are normalised, and a malformed origin (including "null") never
// matches.
func OriginAllowed(allowed []string, origin string) bool {
	if len(allowed) == 0 {
		return true
	}
	o, err := NormalizeOrigin(strings.TrimSpace(origin))
	if err != nil {
		return false
	}
	for _, a := range allowed {
		if a == o {
			return true
		}
		if n, err := NormalizeOrigin(a); err == nil && n == o {
			return true
		}
	}
	return false
}

// NormalizeOrigin returns the canonical form of "scheme://host[:port]" (one allowed_origins
// entry, without surrounding spaces); its error says what is wrong with the entry.
func NormalizeOrigin(s string) (string, error) {
	scheme, hostport, ok := strings.Cut(s, "://")
	if !ok {
		return "", errors.New(`must be "scheme://host[:port]"`)
	}
	scheme = strings.ToLower(scheme)
	var defaultPort string
	switch scheme {
	case "http":
		defaultPort = "80"
	case "https":
		defaultPort = "443"
	default:
		return "", errors.New("scheme must be http or https")
	}
	if hostport == "" {
		return "", errors.New("host is missing")
	}
	if strings.ContainsAny(hostport, "/?#") {
		return "", errors.New("must not have a path, query or fragment")
	}
	if strings.Contains(hostport, "@") {
		return "", errors.New("must not have user information")
	}

	var host, port string
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", errors.New("unterminated IPv6 address")
		}
		a, err := netip.ParseAddr(hostport[1:end])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", errors.New("invalid IPv6 address")
		}
		host = "[" + a.String() + "]"
		rest := hostport[end+1:]
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return "", errors.New("unexpected text after IPv6 address")
			}
			port = p
		}
	} else {
		h, p, hasPort := strings.Cut(hostport, ":")
		if hasPort {
			if strings.Contains(p, ":") {
				return "", errors.New("IPv6 addresses must be in brackets")
			}
			port = p
		}
		h = strings.ToLower(h)
		if err := checkHostname(h); err != nil {
			return "", err
		}
		host = h
	}

	if port != "" || strings.HasSuffix(hostport, ":") {
		n, err := parsePort(port)
		if err != nil {
			return "", err
		}
		port = strconv.Itoa(n)
	}
	if port == "" || port == defaultPort {
		return scheme + "://" + host, nil
	}
	return scheme + "://" + host + ":" + port, nil
}

// checkHostname accepts ASCII DNS names and dotted IPv4 addresses (already lower-cased).
// Browsers send internationalised names in punycode, so non-ASCII is never valid here.
func checkHostname(h string) error {
	if h == "" {
		return errors.New("host is missing")
	}
	if len(h) > 253 {
		return errors.New("host name is too long")
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" {
			return errors.New("host name has an empty label")
		}
		if len(label) > 63 {
			return errors.New("host name label is longer than 63 characters")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("host name has invalid character %q", c)
			}
		}
	}
	return nil
}

// parsePort parses a decimal port in 1..65535; leading zeros are allowed, as browsers allow them.
func parsePort(p string) (int, error) {
	if p == "" || len(p) > 5 {
		return 0, errors.New("port must be a number from 1 to 65535")
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return 0, errors.New("port must be a number from 1 to 65535")
		}
	}
	n, _ := strconv.Atoi(p)
	if n < 1 || n > 65535 {
		return 0, errors.New("port must be a number from 1 to 65535")
	}
	return n, nil
}
