package serve

// This file holds Guard, the edge in front of a streamable HTTP handler.
// A request crosses it in six steps, each in a file of its own:
//
//  1. origin.go: a page of another origin is refused (403); a CORS
//     preflight of an allowed one is answered.
//  2. clientaddr.go: the client's address, and its network, are recorded
//     in the context.
//  3. keepalive.go: event streams get X-Accel-Buffering: no, and a
//     comment once quiet.
//  4. metadata.go: a POST's body is read, bounded in size and time, and
//     checked against its request-metadata headers.
//  5. Options.Wrap, if set: authentication, say.
//  6. sessions.go and streams.go: a request that would open a session or
//     a stream past the caps makes room, or is refused.

import (
	"errors"
	"iter"
	"net/http"

	"github.com/mcpres/mcpres/internal/origin"
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/internal/reqmeta"
	"github.com/mcpres/mcpres/resource"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Guard returns a handler that puts the edge in front of h, any handler
// of the streamable HTTP transport: go-sdk's, mark3labs/mcp-go's
// StreamableHTTPServer, or one of a user's own. opts may be nil. Guard
// returns an error for a nil h, invalid options, or a Wrap that returns
// nil.
//
// Each rule needs something of h:
//
//   - Origin, CORS, the body limits, keep-alive and the client address
//     need nothing.
//   - The request-metadata check reads the body itself; h reads the same
//     bytes after it. A batch of a version that has batches the edge
//     leaves unread for go-sdk's handler (NewGoSDKHandler), which checks
//     each of its messages itself; for any other h it checks them.
//   - The session caps need h to name a new session in the
//     Mcp-Session-Id header of the answer to the POST that opened it, and
//     to answer 404 for a session that ended. A session idle for
//     SessionTimeout is taken as ended: give h the same timeout (go-sdk's
//     StreamableHTTPOptions.SessionTimeout, mcp-go's
//     server.WithSessionIdleTTL). To make room at a cap, the edge ends a
//     session with a DELETE naming it; h must then answer 404 for it
//     (mcp-go: server.WithStateful(true)). go-sdk's sessions it closes.
//   - The stream caps need h to hold a stream's request until the stream
//     ends, and to end the stream when the request's context is
//     cancelled: the edge cancels it to make room.
//
// Guard bounds a request's body, not its headers: serve the handler with
// an http.Server whose ReadHeaderTimeout and MaxHeaderBytes are set, as
// NewServer's are.
func Guard(h http.Handler, opts *Options) (http.Handler, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return o.guard(h)
}

// A guard is the edge in front of one handler.
type guard struct {
	o        Options
	origins  *origin.Policy
	inner    http.Handler // Wrap around the caps around the handler
	sessions *sessionGate
	streams  *streamGate
	refusals refusals
	// handlerChecksBatches: the handler is go-sdk's (NewGoSDKHandler),
	// which refuses a batch message whose _meta names a protocol version
	// itself (behaviour 4 of gosdk.go), so the edge does not scan batches.
	handlerChecksBatches bool
}

// guard is Guard, with o checked.
func (o *Options) guard(h http.Handler) (http.Handler, error) {
	if h == nil {
		return nil, errors.New("serve: nil handler")
	}
	policy, err := origin.NewPolicy(o.AllowedOrigins, "serve: Options.AllowedOrigins")
	if err != nil {
		return nil, err // withDefaults checked it
	}
	var live func() iter.Seq[string]
	end := deleteSession(h)
	sdk, isSDK := h.(*goSDKHandler)
	if isSDK {
		sdk = sdk.withRegistry(o.Registry)
		h, live, end = sdk, sdk.sessionIDs, sdk.closeSession
	}
	g := &guard{
		o:                    *o,
		origins:              policy,
		sessions:             newSessionGate(o, live, end),
		streams:              newStreamGate(o),
		refusals:             refusals{log: o.Logger},
		handlerChecksBatches: isSDK,
	}
	g.inner = &capped{g: g, next: h}
	if o.Wrap != nil {
		if g.inner = o.Wrap(g.inner); g.inner == nil {
			return nil, errors.New("serve: Options.Wrap returned a nil handler")
		}
	}
	return g, nil
}

func (g *guard) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if !g.checkOrigin(w, req) {
		return
	}
	req = g.withClientAddress(req)
	kw := &keepAliveWriter{w: w, period: g.o.KeepAlive}
	defer kw.stop()
	if req.Method == http.MethodPost {
		var ok bool
		if req, ok = g.checkBody(kw, req); !ok {
			return
		}
	} else if _, _, err := reqmeta.Headers(req.Header, false); err != nil {
		// A GET or DELETE carries Mcp-Protocol-Version too: none is
		// echoed at length, nor read twice.
		g.refuseMetadata(kw, req, jsonrpc.ID{}, err)
		return
	}
	g.inner.ServeHTTP(kw, req)
}

// capped is step 6: the caps, inside Wrap, so that they name a caller by
// the identity Wrap verified.
type capped struct {
	g    *guard
	next http.Handler
}

func (c *capped) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	g := c.g
	switch {
	case !modern(req):
		next := c.next
		if req.Method == http.MethodGet && req.Header.Get(protocol.HeaderSessionID) != "" {
			next = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				g.streams.serve(w, req, c.next, g.caller(req), false, &g.refusals)
			})
		}
		g.sessions.serve(w, req, next, func() string { return g.caller(req) }, &g.refusals)
	case isListen(req):
		g.streams.serve(w, req, c.next, g.caller(req), true, &g.refusals)
	default:
		c.next.ServeHTTP(w, req)
	}
}

// caller names the caller of req for the caps, as Options.Registry's rate
// limits would name it: by its verified token, else its address, unless
// the registry says otherwise. A naming function that panics names no
// caller.
func (g *guard) caller(req *http.Request) (caller string) {
	ctx := req.Context()
	probe := &mcp.ServerRequest[*mcp.InitializeParams]{Extra: &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(ctx), Header: req.Header}}
	defer func() {
		if recover() != nil {
			caller = ""
		}
	}()
	if r := g.o.Registry; r != nil {
		return r.CallerOf(ctx, probe)
	}
	return resource.DefaultRateKey(ctx, probe, resource.DefaultIdentity(ctx, probe))
}
