package resource

// This file holds the Origin check of the streamable HTTP endpoint:
// NewHTTPHandler refuses a request from a web page of another origin,
// and CheckOrigin allows the origins of a server's own browser clients.
// The rule itself is in internal/origin.

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/mcpres/mcpres/internal/origin"
)

// OriginOptions configures CheckOrigin. A nil *OriginOptions, like the
// zero value, allows no origin but the request's own, and logs to
// slog.Default().
type OriginOptions struct {
	// Allowed lists the origins allowed besides the request's own, each
	// "scheme://host" or "scheme://host:port" as a browser sends it in
	// the Origin header, such as "https://app.example.com". Case, and
	// the default port of http (80) or https (443), do not matter. Nil
	// means none.
	//
	// "*" turns the check off: every request passes, whatever its Origin
	// header. Any web page a user visits can then call the server from
	// the user's browser and network (localhost, an intranet). Allow "*"
	// only for a server that needs a bearer token on every request,
	// which a browser does not attach by itself; never for one that
	// trusts where a request comes from.
	Allowed []string
	// Logger receives each refusal, at Debug. Nil means slog.Default().
	Logger *slog.Logger
}

// CheckOrigin returns a handler that refuses a request whose Origin
// header is present but neither the request's own origin nor one of
// opts.Allowed, as NewHTTPHandler does, and passes the others to h. To a
// request it passes that has an Origin header it adds the CORS headers a
// browser needs to read the answer (Access-Control-Allow-Origin, and
// Mcp-Session-Id exposed), and it answers the browser's CORS preflight
// (OPTIONS) itself, allowing GET, POST and DELETE with the headers asked
// for.
// Wrap the handler of NewHTTPHandler with it (directly, or around other
// middleware) to allow the origins of browser clients: a request it
// passes is not checked again beneath it. opts may be nil.
//
// CheckOrigin returns an error for a nil h, or for each entry of
// opts.Allowed that is neither "*" nor an origin ("null" included).
func CheckOrigin(h http.Handler, opts *OriginOptions) (http.Handler, error) {
	if h == nil {
		return nil, errors.New("resource: CheckOrigin: nil handler")
	}
	var o OriginOptions
	if opts != nil {
		o = *opts
	}
	p, err := origin.NewPolicy(o.Allowed, "resource: OriginOptions.Allowed")
	if err != nil {
		return nil, err
	}
	return &originCheck{policy: p, log: o.Logger, next: h}, nil
}

// originCheckedKey is the context key of a request a CheckOrigin handler
// passed.
type originCheckedKey struct{}

// An originCheck refuses the requests its policy does not allow, and
// passes the others to next.
type originCheck struct {
	policy *origin.Policy
	log    *slog.Logger // nil for slog.Default()
	next   http.Handler
}

func (c *originCheck) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if _, ok := req.Header["Origin"]; !ok || req.Context().Value(originCheckedKey{}) != nil {
		c.next.ServeHTTP(w, req)
		return
	}
	// The specification, transports, Streamable HTTP: "Servers MUST
	// validate the Origin header on all incoming connections to prevent
	// DNS rebinding attacks" (2025-06-18, Security Warning); 2025-11-25
	// (Security Warning) and 2026-07-28 (Security & Endpoint) add: "If
	// the Origin header is present and invalid, servers MUST respond with
	// HTTP 403 Forbidden. The HTTP response body MAY comprise a JSON-RPC
	// error response that has no id." So for every method (POST, GET,
	// DELETE) of every era, before go-sdk sees the request: a refused
	// DELETE ends no session.
	if err := c.policy.Check(req); err != nil {
		log := c.log
		if log == nil {
			log = slog.Default()
		}
		log.LogAttrs(req.Context(), slog.LevelDebug, "refused a request for its Origin header",
			slog.String("origin", req.Header.Get("Origin")), slog.String("host", req.Host),
			slog.String("method", req.Method), slog.String("reason", err.Error()))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write(originRefusal)
		return
	}
	// A browser reads a cross-origin answer only if the server says it
	// may (CORS), and asks first, with OPTIONS, before a POST with a JSON
	// body or an MCP header: go-sdk answers neither, so an allowed
	// origin is answered here. (For the request's own origin the headers
	// change nothing.)
	allowCORS(w.Header(), req.Header.Get("Origin"))
	if req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != "" {
		h := w.Header()
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
		if asked := req.Header.Get("Access-Control-Request-Headers"); asked != "" {
			h.Set("Access-Control-Allow-Headers", asked)
		}
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	c.next.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), originCheckedKey{}, true)))
}

// allowCORS lets a page of origin, which the check allowed, read the
// answer and its session ID.
func allowCORS(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id")
}
