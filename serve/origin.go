package serve

// This file holds the check of the Origin header, and the CORS answers
// a browser needs from an origin the check allows. The rule itself is in
// internal/origin.

import (
	"log/slog"
	"net/http"

	"github.com/mcpres/mcpres/internal/origin"
)

// checkOrigin refuses req if its Origin header is present but neither
// its own origin nor an allowed one, and answers a CORS preflight of an
// allowed origin. A request of DNS rebinding (origin.Rebinding) it
// passes on without CORS headers, for the handler to refuse. It returns
// false if it answered.
//
// "Servers MUST validate the Origin header on all incoming connections
// to prevent DNS rebinding attacks" (2025-06-18, transports); "If the
// Origin header is present and invalid, servers MUST respond with HTTP
// 403 Forbidden" (2025-11-25 and 2026-07-28). So for every method of
// every era, before the handler sees the request: a refused DELETE ends
// no session.
func (g *guard) checkOrigin(w http.ResponseWriter, req *http.Request) bool {
	if _, ok := req.Header["Origin"]; !ok {
		return true
	}
	if err := g.origins.Check(req); err != nil {
		g.refusals.debug(req, "refused a request for its Origin header",
			slog.String("origin", req.Header.Get("Origin")), slog.String("host", req.Host),
			slog.String("reason", err.Error()))
		refuseOrigin(w)
		return false
	}
	if origin.Rebinding(req) {
		// A page of a domain rebound to a loopback address: its Origin is
		// its Host's. The handler refuses it, as go-sdk and mcp-go do by
		// default; the edge says nothing that lets a browser read on.
		return true
	}
	// A browser reads a cross-origin answer only if the server says it
	// may, and asks first (OPTIONS) before a POST with a JSON body or an
	// MCP header. For the request's own origin the headers change nothing.
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", req.Header.Get("Origin"))
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id")
	if req.Method != http.MethodOptions || req.Header.Get("Access-Control-Request-Method") == "" {
		return true
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
	if asked := req.Header.Get("Access-Control-Request-Headers"); asked != "" {
		h.Set("Access-Control-Allow-Headers", asked)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return false
}
