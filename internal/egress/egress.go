// Package egress decides which addresses the server's outbound connections may reach: model
// providers, MCP servers, data sources and completion webhooks. Self-hosted platforms call internal services, so
// private addresses are allowed unless `serve --deny-private-egress` is set; then loopback,
// private, link-local and other non-public addresses are refused when the connection is made
// (after DNS resolution), not only when a URL is saved, so a name that later resolves inward
// is refused too.
package egress

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Guard is an outbound connection policy; its zero value allows everything.
type Guard struct {
	// DenyPrivate refuses connections to addresses that are not publicly routable.
	DenyPrivate bool
}

// DeniedError is the error of a connection the policy refused.
type DeniedError struct{ Addr netip.Addr }

// Permanent reports that retrying cannot help: the policy will refuse the address again.
func (e *DeniedError) Permanent() bool { return true }

func (e *DeniedError) Error() string {
	return fmt.Sprintf("egress to %s is denied: it is a private, loopback or link-local address (serve --deny-private-egress)", e.Addr)
}

// nonPublic lists ranges that are not the public internet beyond what netip classifies.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved
	netip.MustParsePrefix("64:ff9b::/96"),  // NAT64 (could reach private IPv4)
}

// Allowed reports whether the policy lets a connection reach addr.
func (g Guard) Allowed(addr netip.Addr) bool {
	if !g.DenyPrivate {
		return true
	}
	addr = addr.Unmap()
	if addr.IsLoopback() || addr.IsPrivate() || addr.IsLinkLocalUnicast() || addr.IsLinkLocalMulticast() ||
		addr.IsInterfaceLocalMulticast() || addr.IsUnspecified() || addr.IsMulticast() || !addr.IsValid() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(addr) {
			return false
		}
	}
	return true
}

// Control is a net.Dialer Control function enforcing the policy on the resolved address of
// every connection attempt.
func (g Guard) Control(_, address string, _ syscall.RawConn) error {
	if !g.DenyPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: unexpected address %q: %w", address, err)
	}
	if !g.Allowed(ap.Addr()) {
		return &DeniedError{Addr: ap.Addr().Unmap()}
	}
	return nil
}

// Check enforces the policy on a resolved address ("10.1.2.3:443"), for dialers that take a
// checking hook rather than a Control function.
func (g Guard) Check(_ context.Context, network, address string) error {
	return g.Control(network, address, nil)
}

// Dialer is a dialer enforcing the policy.
func (g Guard) Dialer() *net.Dialer {
	return &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: g.Control}
}

// DialContext dials through Dialer; it fits pgx's DialFunc and similar hooks.
func (g Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return g.Dialer().DialContext(ctx, network, address)
}

// Transport returns a clone of base (http.DefaultTransport when nil) whose connections go
// through the policy.
func (g Guard) Transport(base *http.Transport) *http.Transport {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	t := base.Clone()
	t.DialContext = g.DialContext
	// A proxy would hide the destination from Control: the policy sees only the proxy.
	t.Proxy = nil
	return t
}
