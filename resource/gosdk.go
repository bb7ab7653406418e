package resource

import (
	"context"
	"encoding/json"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds everything that relies on go-sdk (v1.8) behaving in a
// way its documentation does not promise. Each behaviour is pinned by a
// contract test in gosdk_test.go, named after it, which fails saying which
// behaviour changed when an upgrade changes it:
//
//  1. marker: a server advertises the resources capability with
//     listChanged, sends notifications/resources/list_changed, and accepts
//     2026-07-28 listens for it, only if it holds a resource of its own; so
//     Mount adds one, the marker, that is never listed.
//  2. readThroughSDK: a receiving middleware may rewrite a resources/read
//     request's URI and pass it on; go-sdk then calls the handler of the
//     resource with that URI, and finishes its result as for any resource
//     it holds (resultType for 2026-07-28 clients, which nothing else can
//     set, and ServerOptions.SetCacheable). The request's context reaches
//     the handler.
//  3. reAddAnnounces: adding a resource again under the same URI sends
//     list_changed to legacy sessions and to 2026-07-28 listeners.
//  4. listenSubscribes: go-sdk turns each resource of a 2026-07-28
//     subscriptions/listen into a SubscribeRequest of its own, passed to
//     ServerOptions.SubscribeHandler without the transport's Extra (so
//     without the bearer token), with the listen request's context; the
//     receiving middleware sees the listen request first, and its handler
//     returns when the listen's stream ends (so an Observer's listen call
//     holds the subscriptions made of it, and lasts as long as it).
//  5. initializeResult: the receiving middleware sees the result of
//     initialize (and 2026-07-28 server/discover) before it is sent, and
//     may add to its capabilities.
//  6. resourceUpdated: Server.ResourceUpdated notifies exactly the sessions
//     whose subscription ServerOptions.SubscribeHandler accepted, in both
//     protocol eras, and forgets a session's subscriptions when it ends.
//  7. sessionEnd: ServerSession.Wait returns when the session ends, and
//     Server.Sessions lists a session from before its first request until
//     it ends; go-sdk has no other signal of it (no callback, no context).
//  8. notFoundError: mcp.ResourceNotFoundError is a *jsonrpc.Error whose
//     data is {"uri": …}, with code -32602 (or -32002 under
//     MCPGODEBUG=customresnotfounderrcode=1): a read function written for
//     go-sdk reports a missing resource that way. Nothing here reads an
//     error's message.
//  9. protocolVersion: the protocol version strings sort in time order, and
//     2026-07-28 is one go-sdk supports (go-sdk does not export its
//     constant for it).
// 10. updatesThroughMiddleware: Server.ResourceUpdated sends each
//     notifications/resources/updated through the server's sending
//     middleware, one request per session, legacy and 2026-07-28 alike,
//     with the session and *mcp.ResourceUpdatedNotificationParams in it;
//     a middleware that returns without calling on drops it for that
//     session.
// 12. laterSend: a sending middleware may instead keep such a
//     notification and call the rest of the chain with it later, from
//     another goroutine and with a context of its own: the notification
//     then reaches its session (see package delivery, step 4).
// 11. httpEras: over streamable HTTP, a stateful handler refuses requests
//     whose Mcp-Protocol-Version header names 2026-07-28 or later, and
//     older clients send no such header before initialize nor after (they
//     send the version they negotiated); a stateless handler serves both.
//     Every request over streamable HTTP carries RequestExtra.Header, and a
//     session no later request can address (a stateless handler's, or a
//     stateful one's whose GetSessionID returned "") has the ID "": for
//     a session before 2026-07-28 nothing sent after a response reaches
//     the client.
// 13. subscriptionHeld: go-sdk holds a subscription, and so notifies it,
//     only once ServerOptions.SubscribeHandler has returned; it holds it
//     by the time the receiving middleware's next returns for
//     resources/subscribe, and by the time a listen's
//     notifications/subscriptions/acknowledged has passed the sending
//     middleware (see package delivery, Confirm).
// 14. listenAcknowledgment: a receiving middleware may pass a listen on
//     with other resources than the client named; go-sdk's
//     notifications/subscriptions/acknowledged then passes the sending
//     middleware with the listen's context, its _meta naming the listen
//     request's ID as the subscription ID, and what the middleware passes
//     on is what the client is sent (listen.go, step 2).
// 15. notifyProgressCarries: a sending middleware may pass on another
//     notification go-sdk knows, with params of its own, in place of the
//     one ServerSession.NotifyProgress sends; the client is sent that one,
//     on the session's stream (listen.go, step 4).
//
// What the HTTP edge relies on go-sdk doing is listed in serve/gosdk.go.

// marker is the one go-sdk resource behind a mounted registry (behaviour 1).
var marker = &mcp.Resource{URI: "mcpres:registry", Name: "mcpres registry"}

// sessionless reports whether a client on protocol version needs no
// session: 2026-07-28 and later (behaviours 9, 11).
func sessionless(version string) bool { return version >= protocol.SessionlessSince }

// unreachable reports whether the caller of c cannot be sent anything
// after its responses: one an adapter named without a session
// (WithCaller), or a go-sdk one unreachable says is.
func (c *call) unreachable() bool {
	if c.caller != nil {
		return c.caller.Session == nil
	}
	return unreachable(c.req, protocolVersion(c.req))
}

// unreachable reports whether the session of req, a request on protocol
// version, cannot be sent anything after its responses: a session before
// 2026-07-28 served over HTTP without a session ID (behaviour 11).
func unreachable(req mcp.Request, version string) bool {
	if req == nil || sessionless(version) {
		return false // a direct call, or a client notified on its subscriptions/listen stream
	}
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return false // stdio, in memory: the connection stays
	}
	s, ok := req.GetSession().(*mcp.ServerSession)
	return ok && s != nil && s.ID() == ""
}

// withholdNotifications takes subscribe and listChanged out of the
// capabilities of an initialize result for a session that can receive
// no notification (behaviours 5, 11).
func withholdNotifications(res mcp.Result) {
	if init, ok := res.(*mcp.InitializeResult); ok && init.Capabilities != nil && init.Capabilities.Resources != nil {
		init.Capabilities.Resources.Subscribe = false
		init.Capabilities.Resources.ListChanged = false
	}
}

// notFoundIsInvalidParams reports whether a client on protocol version
// expects -32602 for an unknown resource (behaviour 9).
func notFoundIsInvalidParams(version string) bool {
	return version >= protocol.NotFoundInvalidParamsSince
}

// readKey is the context key under which the middleware passes a
// resources/read request to the marker's handler (behaviour 2).
type readKey struct{}

// subscribeKey is the context key under which the middleware marks a
// resources/subscribe whose end it sees, to confirm the subscription to
// the delivery (behaviour 13).
type subscribeKey struct{}

// confirmable reports whether the subscription a Subscribe call in ctx
// records will be confirmed once go-sdk holds it: it came through the
// registry's middleware, as a resources/subscribe or a listen
// (behaviour 13).
func confirmable(ctx context.Context) bool {
	return ctx.Value(subscribeKey{}) != nil || ctx.Value(listenKey{}) != nil
}

// listenKey is the context key under which the middleware passes a
// subscriptions/listen request on to the subscriptions go-sdk makes of it
// (behaviour 4).
type listenKey struct{}

// mount adds r's middleware and marker to s (behaviours 1, 2, 4, 5, 10),
// and s to the servers r's delivery notifies.
func mount(s *mcp.Server, r *Registry) {
	s.AddReceivingMiddleware(r.middleware)
	s.AddSendingMiddleware(r.sendingMiddleware)
	r.delivery.Mount(s)
	announce(s, r.readViaMarker)
}

// announce adds the marker to s again, read by read: go-sdk's public way
// to say "the resource list changed" (behaviour 3).
func announce(s *mcp.Server, read mcp.ResourceHandler) { s.AddResource(marker, read) }

// A markerRead is a resources/read request readdressed to the marker,
// with its params, in one allocation.
type markerRead struct {
	req    mcp.ReadResourceRequest
	params mcp.ReadResourceParams
}

// readViaMarker is the marker's read function: it reads the request the
// middleware set aside (behaviour 2).
func (r *Registry) readViaMarker(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if orig, ok := ctx.Value(readKey{}).(*mcp.ReadResourceRequest); ok {
		req = orig
	}
	return r.ReadResource(ctx, req)
}

// middleware answers the methods r serves and passes everything else on.
func (r *Registry) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch q := req.(type) {
		case *mcp.ListResourcesRequest:
			return result(r.ListResources(ctx, q))
		case *mcp.ListResourceTemplatesRequest:
			return result(r.ListResourceTemplates(ctx, q))
		case *mcp.ReadResourceRequest:
			if q.Params == nil {
				return result(r.ReadResource(ctx, q))
			}
			// Send the read on to go-sdk's own resources/read, addressed to
			// the marker, so go-sdk finishes the result as for any resource
			// it holds. The marker's read function reads the original.
			ctx = context.WithValue(ctx, readKey{}, q)
			via := &markerRead{req: *q, params: *q.Params}
			via.params.URI = marker.URI
			via.req.Params = &via.params
			return next(ctx, method, &via.req)
		case *mcp.SubscribeRequest:
			// go-sdk holds the subscription once next returns (behaviour 13).
			res, err := next(context.WithValue(ctx, subscribeKey{}, true), method, req)
			if err == nil && q.Params != nil {
				r.delivery.Confirm(q.Session, q.Params.URI)
			}
			return res, err
		case *mcp.SubscriptionsListenRequest:
			return r.serveListen(ctx, method, q, next)
		case *mcp.CompleteRequest:
			if q.Params != nil && q.Params.Ref != nil && q.Params.Ref.Type == "ref/resource" {
				return result(r.Complete(ctx, q))
			}
		}
		res, err := next(ctx, method, req)
		if err == nil {
			advertiseCompletions(res)
			if init, ok := res.(*mcp.InitializeResult); ok && unreachable(req, init.ProtocolVersion) {
				withholdNotifications(res)
			}
		}
		return res, err
	}
}

// sendingMiddleware hands each session's notifications/resources/updated
// and list_changed to the delivery's queue (step 4 of package delivery),
// which sends them later, from a sending goroutine that one stalled
// session cannot hold up for long, with the rest of the chain
// (behaviours 10, 12). Everything else, a notification
// without a session, and anything once the registry is closed (what the
// server sends itself then goes as go-sdk sends it), it passes on.
func (r *Registry) sendingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if c, ok := carried(ctx, method); ok {
			return next(ctx, protocol.NotificationResourceUpdated, c)
		}
		s, _ := req.GetSession().(*mcp.ServerSession)
		if s == nil {
			return next(ctx, method, req)
		}
		var uri string
		switch method {
		case protocol.NotificationResourceUpdated:
			p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
			if !ok || p == nil {
				return next(ctx, method, req)
			}
			uri = p.URI
		case protocol.NotificationListChanged:
		case protocol.NotificationSubscriptionsAcknowledged:
			if l := listenOf(ctx); l != nil && l.uris != nil {
				return l.acknowledge(ctx, r, method, req, next)
			}
			// go-sdk holds a listen's subscriptions once it acknowledges
			// them (behaviour 13): after the acknowledgment, confirm them.
			res, err := next(ctx, method, req)
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && p != nil && err == nil {
				for _, u := range p.Notifications.ResourceSubscriptions {
					r.delivery.Confirm(s, u)
				}
			}
			return res, err
		default:
			return next(ctx, method, req)
		}
		if !r.delivery.Queue(s, method, uri, req, next) {
			return next(ctx, method, req)
		}
		return nil, nil
	}
}

// result converts a handler's typed answer into the middleware's, so that
// a failed call returns a nil interface rather than a typed nil pointer.
func result[R mcp.Result](res R, err error) (mcp.Result, error) {
	if err != nil {
		return nil, err
	}
	return res, nil
}

// advertiseCompletions adds the completions capability to the server's
// answer to initialize (legacy) and server/discover (2026-07-28), since the
// registry answers completion/complete even when the server has no
// CompletionHandler (behaviour 5).
func advertiseCompletions(res mcp.Result) {
	var caps *mcp.ServerCapabilities
	switch res := res.(type) {
	case *mcp.InitializeResult:
		caps = res.Capabilities
	case *mcp.DiscoverResult:
		caps = res.Capabilities
	}
	if caps != nil && caps.Completions == nil {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
}

// withListenExtra returns req, or, if it lacks the transport's extra
// information (a subscription go-sdk made from a 2026-07-28 listen), a
// copy with that of the listen request (behaviour 4).
func withListenExtra(ctx context.Context, req *mcp.SubscribeRequest) *mcp.SubscribeRequest {
	if req.Extra != nil {
		return req
	}
	l := listenOf(ctx)
	if l == nil || l.req.Extra == nil {
		return req
	}
	copied := *req
	copied.Extra = l.req.Extra
	return &copied
}

// isSDKNotFound reports whether err, returned by a read function, is
// go-sdk's not-found error (behaviour 8): code -32002, or -32602 with a
// "uri" in its data. It does not read the message.
func isSDKNotFound(err *jsonrpc.Error) bool {
	switch err.Code {
	case CodeLegacyResourceNotFound:
		return true
	case jsonrpc.CodeInvalidParams:
		var data struct {
			URI *string `json:"uri"`
		}
		return json.Unmarshal(err.Data, &data) == nil && data.URI != nil
	}
	return false
}
