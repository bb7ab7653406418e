package serve

// This file holds the handler that serves a go-sdk server to clients of
// every protocol era on one URL. It relies on go-sdk v1.8 doing what its
// documentation does not promise; the contract tests in gosdk_test.go,
// named after each, fail if an upgrade changes it:
//
//  1. httpEras: a stateful streamable HTTP handler refuses a request whose
//     Mcp-Protocol-Version header names 2026-07-28 or later; a stateless
//     one serves it. Older clients send no such header (behaviour 11 of
//     resource/gosdk.go, whose test pins it).
//  2. headerChecks: a stateless handler compares Mcp-Name with the body as
//     it is, not decoded, so the edge gives it a Base64 Mcp-Name decoded,
//     and decodes nothing twice.
//  3. sessions: a stateful handler names the session it opens in the
//     Mcp-Session-Id header of the answer to the POST without one, answers
//     404 for a session that ended, and Server.Sessions lists the open
//     ones; ServerSession.Close ends one, which the handler then answers
//     404 for. The session caps (sessions.go) count by them.
//  4. batchMeta: a stateful handler decodes each message of a batch, and
//     refuses the whole POST with 400 if a request or notification of it
//     names in its _meta a protocol version other than the
//     Mcp-Protocol-Version header's (older than 2025-06-18, or none), in
//     a session or without one: the edge's rule for a body of an older
//     version (internal/reqmeta's Body). So the edge leaves a batch to
//     go-sdk unscanned (metadata.go): go-sdk decodes it whole anyway.
//  5. sessionStream: a stateful handler accepts a session's GET stream
//     by writing its header, 200 with Content-Type text/event-stream, on
//     the ResponseWriter it was given, writes each message event on it
//     with one Write, and flushes it after through
//     http.NewResponseController, so through that writer's FlushError:
//     which the edge holds while the registry sends a run
//     (sessionstream.go). With no EventStore, an event has no ID, and a
//     resources/updated is "event: message", then "data: " and the
//     message as jsonrpc.EncodeMessage encodes it: the registry writes
//     those itself between go-sdk's events (TestSDKSessionStream,
//     TestSessionStreamAsGoSDK).

import (
	"iter"
	"net/http"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewGoSDKHandler returns a handler that serves server over streamable
// HTTP to clients of every protocol version go-sdk speaks. A request
// whose Mcp-Protocol-Version header names 2026-07-28 or later goes to a
// stateless go-sdk handler: such clients need no session, and get their
// notifications on their subscriptions/listen streams. Every other
// request goes to a stateful go-sdk handler, whose sessions get theirs on
// their GET streams. Behind a load balancer, the sessions of older
// clients need affinity; 2026-07-28 requests can go to any replica.
//
// opts (nil for the defaults) configures both go-sdk handlers, as in
// mcp.NewStreamableHTTPHandler, except Stateless, which is ignored. Set
// SessionTimeout, so that the sessions of clients that went away are
// closed.
//
// The handler has no edge of its own: serve it behind Guard, as Handler
// does. NewGoSDKHandler panics if server is nil.
func NewGoSDKHandler(server *mcp.Server, opts *mcp.StreamableHTTPOptions) http.Handler {
	if server == nil {
		panic("serve.NewGoSDKHandler: nil server")
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
	h := &goSDKHandler{server: server, stateful: stateful, stateless: stateless}
	if o.EventStore == nil { // go-sdk numbers no event: the registry may write its own
		h.updated, _ = updatedPrefix(nil) // nil, on an error: go-sdk writes them
	}
	return h
}

// A goSDKHandler sends each request to the go-sdk handler of its era.
type goSDKHandler struct {
	server              *mcp.Server
	stateful, stateless http.Handler
	reg                 *resource.Registry // made the server: its listens are served at the edge (listen.go), its sessions' GET streams attached to it (sessionstream.go); nil if none
	lists               *listChanged       // the listens at the edge that take list_changed
	// updated starts each notifications/resources/updated event a
	// registry writes on a session's stream itself; nil if it writes
	// none, as go-sdk numbers the stream's events (an EventStore)
	// (sessionstream.go).
	updated []byte
}

func (h *goSDKHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if modern(req) {
		if h.reg != nil && isListen(req) && h.serveListen(w, req) {
			return
		}
		h.stateless.ServeHTTP(w, req)
		return
	}
	if h.reg != nil && req.Method == http.MethodGet && req.Header.Get(protocol.HeaderSessionID) != "" {
		h.serveSessionStream(w, req)
		return
	}
	h.stateful.ServeHTTP(w, req)
}

// withRegistry returns h serving the listens of its server at the edge
// with reg, and attaching its sessions' GET streams to reg, if reg made
// the server; else h.
func (h *goSDKHandler) withRegistry(reg *resource.Registry) *goSDKHandler {
	if reg == nil || !reg.Subscribes(h.server) {
		return h
	}
	c := *h
	c.reg, c.lists = reg, &listChanged{reg: reg}
	return &c
}

// closeSession ends session id, to make room at a cap.
func (h *goSDKHandler) closeSession(id string) {
	for s := range h.server.Sessions() {
		if s.ID() == id {
			s.Close()
			return
		}
	}
}

// sessionIDs lists the sessions the server holds open, for the session
// caps of a Guard in front.
func (h *goSDKHandler) sessionIDs() iter.Seq[string] {
	return func(yield func(string) bool) {
		for s := range h.server.Sessions() {
			if !yield(s.ID()) {
				return
			}
		}
	}
}
