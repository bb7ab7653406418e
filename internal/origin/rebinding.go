package origin

// This file holds the sign of DNS rebinding: a page whose domain name
// was pointed at 127.0.0.1 reaches a local server with its own name in
// Host, and its own origin in Origin, which the Origin rule then allows.

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Rebinding reports whether req came in on a loopback address with a
// Host that is not a loopback name or address. go-sdk's handler refuses
// such a request with 403 (StreamableHTTPOptions.DisableLocalhostProtection),
// and so does mark3labs/mcp-go's (WithDisableLocalhostProtection). It
// reports false for a request without a local address in its context.
func Rebinding(req *http.Request) bool {
	local, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && loopback(local.String()) && !loopback(req.Host)
}

// loopback reports whether addr, a host or host:port, is "localhost" or
// a loopback IP address, as go-sdk reads it.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
