package resource

import (
	"net/http"

	"github.com/mcpres/mcpres/internal/origin"
	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewHTTPHandler returns an http.Handler that serves server over
// streamable HTTP to clients of every protocol version go-sdk speaks, on
// one URL, with notifications delivered to all of them:
//
//   - a request that names protocol 2026-07-28 or later in its
//     Mcp-Protocol-Version header goes to a stateless go-sdk handler: such
//     clients need no session, and receive resources/updated and
//     list_changed on their subscriptions/listen streams;
//   - every other request (initialize, and the requests of 2025-06-18 and
//     2025-11-25 sessions, which carry an Mcp-Session-Id) goes to a
//     stateful go-sdk handler, whose sessions receive notifications on
//     their GET streams.
//
// Both handlers serve the same server, so one registry's changes reach
// every subscriber whatever its protocol. Behind a load balancer, the
// stateful sessions of older clients need affinity (sticky sessions);
// 2026-07-28 requests can go to any replica.
//
// opts (nil for the defaults) configures both go-sdk handlers, as in
// mcp.NewStreamableHTTPHandler, except Stateless, which is ignored: the
// handler chooses per request. Set SessionTimeout, so that the sessions
// (and subscriptions) of clients that went away without a word are
// reclaimed; zero keeps them until the client ends them.
//
// A server served statelessly to clients before 2026-07-28 (go-sdk's own
// handler with Stateless set, say) has no way to reach them after a
// response: a registry's server then neither advertises subscribe nor
// listChanged to them, and refuses resources/subscribe with -32602 saying
// so, rather than accept a subscription it can never notify.
//
// A request from a web page of another origin is refused with 403, and a
// JSON-RPC error body without id, before either go-sdk handler sees it:
// the Origin header, if present, must name the request's own origin
// (that of its Host header). Clients that are not browsers send no
// Origin and pass. To allow a browser client served from elsewhere, wrap
// the handler with CheckOrigin. Refusals are logged to slog.Default() at
// Debug. A page that DNS rebinding brings to the server has the Host
// header's origin, so the check does not refuse it: go-sdk's check of
// the Host header on loopback addresses does (unless
// StreamableHTTPOptions.DisableLocalhostProtection is set); on another
// address, check the Host header in front (docs/security.md).
//
// A POST whose request-metadata headers do not match its body
// (2026-07-28, transports: Mcp-Protocol-Version, Mcp-Method, Mcp-Name)
// is refused with 400 and a JSON-RPC error -32020 HeaderMismatch, as the
// transport requires. go-sdk compares the headers of a request whose
// Mcp-Protocol-Version names 2026-07-28 or later with its body; the
// handler, in front of it, refuses what go-sdk lets pass: a body whose
// _meta names a protocol version that an older header (or none) does
// not, a mirrored header given twice or with a character other than
// visible ASCII, and an invalid Base64 Mcp-Name (go-sdk gets a valid one
// decoded). To find a _meta, the handler reads the body of a POST of an
// older protocol, up to opts.MaxRequestBodyBytes (go-sdk's 4 MiB by
// default), and leaves a longer one to go-sdk. Refusals are logged to
// slog.Default() at Debug; docs/security.md lists the rules.
//
// What callers open is capped across their sessions and streams (see
// SessionOptions and SubscriptionOptions, and docs/security.md): a POST
// that would open a stateful session past the caps of the registry
// mounted on server (the defaults if none is) gets 429 or 503 and opens
// nothing. To tell callers apart, the handler records each request's
// remote address (see ClientAddress) unless WithClientAddress, wrapped
// around it, recorded one: behind a proxy, wrap it so, naming the
// proxy's header.
//
// Every event stream it serves carries the header X-Accel-Buffering: no,
// so that a proxy such as nginx passes each event on at once, and gets an
// SSE comment (": keepalive") once it has been quiet for DefaultKeepAlive,
// so that a proxy or load balancer does not close a stream that waits
// for changes as idle; WithKeepAlive changes the period, or turns the
// comments off.
//
// NewHTTPHandler panics if server is nil.
func NewHTTPHandler(server *mcp.Server, opts *mcp.StreamableHTTPOptions) http.Handler {
	if server == nil {
		panic("resource.NewHTTPHandler: nil server")
	}
	var o mcp.StreamableHTTPOptions
	if opts != nil {
		o = *opts
	}
	get := func(*http.Request) *mcp.Server { return server }
	o.Stateless = false
	stateful := mcp.NewStreamableHTTPHandler(get, &o)
	o.Stateless = true
	stateless := mcp.NewStreamableHTTPHandler(get, &o)
	// go-sdk's own bound of a request's body.
	limit := o.MaxRequestBodyBytes
	if limit == 0 {
		limit = mcp.DefaultMaxRequestBodyBytes
	}
	return &originCheck{policy: &origin.Policy{}, next: &keepAlive{next: &eraHandler{stateful: stateful, stateless: stateless, limit: limit, sessions: newSessionGate(server)}}}
}

// An eraHandler sends each request to the go-sdk handler of its protocol
// era (behaviour 11 of gosdk.go), once the request-metadata headers of a
// POST pass the check of metadata.go, which is told the same era. It
// records each request's client address, for the caps, and holds the
// stateful handler's sessions under them (sessioncaps.go).
type eraHandler struct {
	stateful, stateless http.Handler
	limit               int64 // the most of a body checkMetadata reads; negative for no bound
	sessions            *sessionGate
}

func (h *eraHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	req = withClientAddress(req)
	modern := sessionless(req.Header.Get(protocol.HeaderProtocolVersion))
	if req.Method == http.MethodPost {
		var ok bool
		if req, ok = h.checkMetadata(w, req, modern); !ok {
			return
		}
	}
	if modern {
		h.stateless.ServeHTTP(w, req)
		return
	}
	id := req.Header.Get(protocol.HeaderSessionID)
	switch {
	case req.Method == http.MethodPost && id == "":
		h.sessions.open(w, req, h.stateful) // go-sdk opens a session
	case req.Method == http.MethodDelete && id != "":
		sw := &statusWriter{ResponseWriter: w}
		h.stateful.ServeHTTP(sw, req)
		if sw.status == http.StatusNoContent { // go-sdk closed it
			h.sessions.closed(id)
		}
	default:
		h.stateful.ServeHTTP(w, req)
	}
}

// A statusWriter remembers the status its handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
