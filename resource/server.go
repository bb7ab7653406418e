package resource

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewServer returns a go-sdk server that serves r: resources/list,
// resources/templates/list, resources/read, resources/subscribe and
// resources/unsubscribe (with the resource subscriptions of 2026-07-28
// listens), and completion/complete for "ref/resource" references. It
// advertises the resources capability with subscribe and listChanged, and
// the completions capability. It is mcp.NewServer(impl, opts) with the
// registry's SubscribeHandler and UnsubscribeHandler, and Mount; every
// other option of opts (which may be nil) is kept, CompletionHandler
// included, which answers completions of other references.
//
// Use NewServer for a server of your own; use Mount for a server made
// elsewhere. Serve it as any go-sdk server: server.Run(ctx,
// &mcp.StdioTransport{}) over stdio, or over streamable HTTP with package
// serve, which serves clients of every protocol version on one URL with
// their notifications.
//
// A sending middleware added to the server afterwards (go-sdk runs the
// last added first) sees two messages of a 2026-07-28 listen that names
// resources as go-sdk makes them, before the registry's own middleware
// finishes them: its acknowledgment names the registry's internal
// resource (mcpres:registry) in place of the client's, and each
// notifications/resources/updated on it is a notifications/progress that
// carries it. The client gets the finished messages. To watch what is
// sent, use Options.Observer (EventNotified), or add the middleware
// before Mount.
//
// NewServer returns an error if impl is nil, if opts sets
// SubscribeHandler or UnsubscribeHandler (they are the registry's), or if
// r is closed (ErrClosed).
func (r *Registry) NewServer(impl *mcp.Implementation, opts *mcp.ServerOptions) (*mcp.Server, error) {
	if impl == nil {
		return nil, errors.New("resource: NewServer needs an implementation")
	}
	var o mcp.ServerOptions
	if opts != nil {
		o = *opts
	}
	if o.SubscribeHandler != nil || o.UnsubscribeHandler != nil {
		return nil, errors.New("resource: NewServer: ServerOptions.SubscribeHandler and UnsubscribeHandler are the registry's; leave them nil")
	}
	if r.closed.Load() {
		return nil, fmt.Errorf("resource: NewServer: %w", ErrClosed)
	}
	o.SubscribeHandler, o.UnsubscribeHandler = r.Subscribe, r.Unsubscribe
	s := mcp.NewServer(impl, &o)
	mount(s, r)
	r.made.Store(s, struct{}{})
	return s, nil
}

// Mount makes r answer the resource methods of s, a server made elsewhere
// (Registry.NewServer makes one with everything wired): resources/list,
// resources/templates/list, resources/read, and completion/complete for
// "ref/resource" references (other completions go on to s's own
// CompletionHandler). s advertises the resources capability with
// listChanged, and the completions capability; adding or removing entries
// in r afterwards sends notifications/resources/list_changed to s's
// sessions, debounced by Options.ListChangedDelay, to legacy sessions
// directly and to 2026-07-28 sessions that listen for it.
//
// Reads pass through go-sdk's own resources/read, so s finishes their
// results as it does for its own resources: resultType for 2026-07-28
// clients, and ServerOptions.SetCacheable after the registry's caching
// hints.
//
// Mount installs a receiving middleware. Middleware added to s before Mount
// does not see the list and completion requests r answers, and sees reads
// addressed to an internal URI, so add your own (logging, auth) after
// Mount. Mount installs a sending middleware too: one added after it sees
// two messages of a 2026-07-28 listen as go-sdk makes them (see
// NewServer). Resources added to s directly with s.AddResource are hidden behind
// r: register everything in r. Mount one registry per server.
//
// Mount does not enable resources/subscribe, which go-sdk takes only from
// the options s was made with: make s with ServerOptions{SubscribeHandler:
// r.Subscribe, UnsubscribeHandler: r.Unsubscribe} (NewServer does), and
// report changes with r.Changed; see Registry.Subscribe.
//
// One registry may be mounted on several servers; each is notified of
// changes. Mount panics if s or r is nil.
//
// To serve r on another Go MCP framework than go-sdk, an adapter calls
// r's handler methods itself, naming the caller with WithCaller, and
// tells r of the server with Attach; the module
// github.com/mcpres/mcpres/mcpgo is one for mark3labs/mcp-go.
func Mount(s *mcp.Server, r *Registry) {
	if s == nil || r == nil {
		panic("resource.Mount: nil server or registry")
	}
	mount(s, r)
}

// A Session is a client's session on an MCP server other than go-sdk's,
// or one 2026-07-28 listen stream, as an adapter presents it to the
// registry (see WithCaller). It is compared with ==, so that one session
// is one subscriber: it must be a comparable value, such as a pointer.
type Session interface {
	// ID names the session in logs, the access log and the Observer's
	// Call.SessionID; "" if it has no ID.
	ID() string
	// Updated sends the client notifications/resources/updated with
	// params {"uri": uri} (and, for a listen stream, the listen's
	// subscription ID). The registry calls it from a goroutine of the
	// session's own, one notification at a time, with a context that
	// ends after 10 s or when the registry closes; an error is logged at
	// Warn.
	Updated(ctx context.Context, uri string) error
	// Done returns a channel that is closed when the session ends (or
	// the listen stream it stands for): its subscriptions are then
	// forgotten. A nil channel never closes: the subscriptions last
	// until they are unsubscribed or the registry closes.
	Done() <-chan struct{}
}

// A Caller is what an adapter tells the registry of the caller of a
// request that is not go-sdk's (see WithCaller).
type Caller struct {
	// ProtocolVersion is the protocol version of the request, such as
	// "2025-11-25" or "2026-07-28"; "" counts as older than 2026-07-28.
	ProtocolVersion string
	// Session is the session the request came on, or the listen stream
	// it subscribes for; nil if the client cannot be sent anything after
	// the response.
	Session Session
}

// callerKey is the context key of the Caller WithCaller records.
type callerKey struct{}

// WithCaller returns a copy of ctx that names c as the caller of a
// request whose Session is nil: the seam through which an adapter serves
// a registry on another MCP server than go-sdk's.
//
// The handler methods (ListResources, ListResourceTemplates,
// ReadResource, Subscribe, Unsubscribe, Complete) serve any request an
// adapter hands them. The adapter builds the go-sdk request a method
// takes from its framework's, with Params copied and Session nil (and
// Extra, where the framework has them, with the HTTP header and the
// verified token), and calls the method with a context made by
// WithCaller. What the registry needs of the caller reaches it this way:
//
//   - the protocol version, which chooses the not-found code (see
//     NotFoundCode): Caller.ProtocolVersion;
//   - the session, for which subscriptions are kept and notified, and
//     which logs, the access log and the Observer name by its ID:
//     Caller.Session; nil for a caller that can be sent nothing after
//     its responses, whose subscriptions are refused, as for go-sdk's
//     stateless HTTP before 2026-07-28;
//   - the identity, which the Authorizer, rate limits, caps and cursors
//     go by: Options.Identity and Options.RateKey, called with that
//     context and request as for go-sdk's (read what the framework puts
//     in the context; DefaultIdentity reads Extra.TokenInfo);
//   - where to deliver: Session.Updated sends a session's
//     resources/updated, from a sending goroutine, after
//     the coalescing window and the Authorizer's second look, as for
//     go-sdk's sessions, and Session.Done ends its subscriptions;
//     list_changed goes to the server through the function given to
//     Attach.
//
// A 2026-07-28 subscriptions/listen is opened with Registry.Listen (the
// cap of streams per caller, the Observer's call) and subscribed resource
// by resource, with a Session that stands for the listen's stream. A request whose
// Session is set is go-sdk's, served as it always is, whatever ctx
// carries; a go-sdk server needs none of this (see Mount).
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, &c)
}

// callerOf returns the Caller WithCaller recorded in ctx, nil if none.
func callerOf(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}

// Attach tells r of a server other than go-sdk's that serves it through
// an adapter: listChanged is called, from a goroutine of r's own, each
// time entries are added or removed, as a mounted go-sdk server is told
// (debounced by Options.ListChangedDelay, and not after Close); it sends
// notifications/resources/list_changed to the server's sessions that
// should have it. detach stops the calls. Attach panics if listChanged
// is nil.
func (r *Registry) Attach(listChanged func()) (detach func()) {
	if listChanged == nil {
		panic("resource.Registry.Attach: nil function")
	}
	return r.delivery.Attach(listChanged)
}

// Listen opens, for an adapter (see WithCaller), a 2026-07-28
// subscriptions/listen stream of the caller ctx names, as go-sdk's
// servers open theirs: with an Observer, it opens the listen's Call. It
// returns the context in which to subscribe the stream's resources
// (Subscribe, with the stream's Session), so that each is a call within
// the listen's, and end, to call when the stream ends. end may be called
// more than once; only the first counts. The HTTP edge (package serve)
// caps the listen streams a caller holds open. err is always nil; it is
// kept for a refusal the registry may make.
func (r *Registry) Listen(ctx context.Context, req *mcp.SubscriptionsListenRequest) (listenCtx context.Context, end func(), err error) {
	if req == nil {
		req = &mcp.SubscriptionsListenRequest{}
	}
	c := call{ctx: ctx, op: OpSubscribe, method: protocol.MethodListen, req: req}
	if r.opts.Observer != nil {
		if c.caller = callerOf(ctx); c.caller != nil {
			c.session.Other = c.caller.Session
		}
		c.identity = r.opts.Identity(ctx, req)
		r.observe(&c)
	}
	return c.ctx, sync.OnceFunc(func() {
		if c.obs != nil {
			r.observeEnd(&c, DecisionAllowed, nil)
		}
	}), nil
}
