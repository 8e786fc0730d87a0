package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestAllowed(t *testing.T) {
	t.Parallel()
	deny := Guard{DenyPrivate: true}
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "1.1.1.1": true, "2606:4700:4700::1111": true, "93.184.216.34": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "fe80::1": false, "fc00::1": false, "0.0.0.0": false, "::": false,
		"100.64.0.1": false, "::ffff:127.0.0.1": false, "::ffff:10.0.0.1": false, "224.0.0.1": false,
		"64:ff9b::a00:1": false, "198.18.0.1": false,
	} {
		if got := deny.Allowed(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Allowed(%s) = %v, want %v", addr, got, want)
		}
		if !(Guard{}).Allowed(netip.MustParseAddr(addr)) {
			t.Errorf("the zero Guard refused %s", addr)
		}
	}
}

func TestDialRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	defer srv.Close()
	deny := &http.Client{Transport: Guard{DenyPrivate: true}.Transport(nil)}
	_, err := deny.Get(srv.URL)
	var de *DeniedError
	if !errors.As(err, &de) || de.Addr.String() != "127.0.0.1" {
		t.Fatalf("a loopback server through the denying transport: %v", err)
	}
	// Through a name, checked after resolution.
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	_ = host
	if _, err := deny.Get("http://localhost:" + port); !errors.As(err, &de) {
		t.Fatalf("localhost through the denying transport: %v", err)
	}
	allow := &http.Client{Transport: Guard{}.Transport(nil)}
	resp, err := allow.Get(srv.URL)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("the allowing transport: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := (Guard{DenyPrivate: true}).DialContext(context.Background(), "tcp", srv.Listener.Addr().String()); !errors.As(err, &de) {
		t.Fatalf("DialContext: %v", err)
	}
}
