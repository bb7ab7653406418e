package resource

import (
	"context"
	"net"
	"net/http"
	"strings"
)

// clientAddressKey is the context key of the address WithClientAddress
// records.
type clientAddressKey struct{}

// WithClientAddress returns a handler that records each request's client
// address in its context and passes the request to h; wrap the streamable
// HTTP handler with it so that DefaultRateKey can tell anonymous callers
// apart. go-sdk hands the context on to the registry: on stateless HTTP
// every request's own, on stateful HTTP that of the request that opened
// the session.
//
// The address is the host of the request's RemoteAddr; or, if header is
// not "", the last address in that header, such as "X-Forwarded-For",
// which the proxy in front of the server appends. Give a header only
// behind such a proxy: clients can send any header they like, and only
// the last address, the one the proxy added, is its word. A request
// without the header has no address.
func WithClientAddress(h http.Handler, header string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if addr := clientAddress(req, header); addr != "" {
			req = req.WithContext(context.WithValue(req.Context(), clientAddressKey{}, addr))
		}
		h.ServeHTTP(w, req)
	})
}

// clientAddress is the address WithClientAddress records for req.
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

// ClientAddress returns the client address WithClientAddress recorded in
// ctx, or "" if there is none.
func ClientAddress(ctx context.Context) string {
	addr, _ := ctx.Value(clientAddressKey{}).(string)
	return addr
}
