package serve

// This file holds the client address the edge records for each request,
// so that the caps and the registry's rate limits tell anonymous
// callers apart.

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/mcpres/mcpres/internal/clientaddr"
)

// ClientAddress returns the client address the edge recorded in ctx, or
// "" if there is none. resource.DefaultRateKey names anonymous callers by
// it.
func ClientAddress(ctx context.Context) string { return clientaddr.From(ctx) }

// withClientAddress returns req with its client address recorded, unless
// an edge in front recorded one already. header is
// Options.ClientAddressHeader.
func withClientAddress(req *http.Request, header string) *http.Request {
	if clientaddr.From(req.Context()) != "" {
		return req
	}
	addr := clientAddress(req, header)
	if addr == "" {
		return req
	}
	return req.WithContext(clientaddr.With(req.Context(), addr))
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
