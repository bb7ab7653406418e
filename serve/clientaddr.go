package serve

// This file holds the client address the edge records for each request,
// and the network it counts the request in: anonymous callers are told
// apart by network, so that one machine with many addresses of one
// network is one caller.

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/mcpres/mcpres/internal/clientaddr"
)

// ClientAddress returns the client address the edge recorded in ctx, or
// "" if there is none.
func ClientAddress(ctx context.Context) string { return clientaddr.From(ctx).Client }

// ClientNetwork returns the network the edge counted the request of ctx
// in, such as "192.0.2.0/24" (see Options.IPv4Prefix), or "" if it
// recorded no address. resource.DefaultRateKey names anonymous callers
// by it. An address that is not an IP address is its own network.
func ClientNetwork(ctx context.Context) string { return clientaddr.From(ctx).Network }

// withClientAddress returns req with its client address recorded, unless
// an edge in front recorded one already.
func (g *guard) withClientAddress(req *http.Request) *http.Request {
	if clientaddr.From(req.Context()).Client != "" {
		return req
	}
	addr := clientAddress(req, g.o.ClientAddressHeader)
	if addr == "" {
		return req
	}
	a := clientaddr.Address{Client: addr, Network: network(addr, g.o.IPv4Prefix, g.o.IPv6Prefix)}
	return req.WithContext(clientaddr.With(req.Context(), a))
}

// clientAddress returns the host of req's RemoteAddr; or, if header is not
// "", the last address in that header, which the proxy in front appended.
// A request without the header has no address.
func clientAddress(req *http.Request, header string) string {
	if header == "" {
		if host, _, err := net.SplitHostPort(req.RemoteAddr); err == nil {
			return host
		}
		return req.RemoteAddr
	}
	values := req.Header.Values(header)
	if len(values) == 0 {
		return ""
	}
	last := values[len(values)-1]
	return strings.TrimSpace(last[strings.LastIndexByte(last, ',')+1:])
}

// network returns the network of addr: its first bits4 bits if it is an
// IPv4 address (an IPv4-mapped IPv6 address counts as one), its first
// bits6 if IPv6, as a prefix such as "192.0.2.0/24". Anything else is its
// own network.
func network(addr string, bits4, bits6 int) string {
	ip, err := netip.ParseAddr(strings.Trim(addr, "[]"))
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	bits := bits6
	if ip.Is4() {
		bits = bits4
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return addr
	}
	return p.String()
}
