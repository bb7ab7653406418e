package resource

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource/internal/delivery"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file serves the resources of a 2026-07-28 subscriptions/listen on
// go-sdk. The registry keeps the listen stream's subscriptions itself, as
// an adapter's stream (a Session of its own, see WithCaller), and sends
// each notifications/resources/updated on the stream itself. go-sdk sees
// the listen with one resource, the marker, in place of the client's:
//
//  1. go-sdk asks the SubscribeHandler about the marker, with the listen's
//     context (behaviour 4); the registry subscribes the stream to the
//     client's resources then, each as a subscription of its own, and a
//     refusal fails the listen, as go-sdk fails it.
//  2. go-sdk acknowledges the marker; the sending middleware puts the
//     client's resources in its place (behaviour 14). A server without
//     subscriptions (no SubscribeHandler) acknowledges no resource, and
//     the stream holds none.
//  3. go-sdk holds the listen open until its stream ends, for the marker
//     and for the list_changed flags it keeps itself.
//  4. Each change goes out through ServerSession.NotifyProgress, which
//     the sending middleware turns into the resources/updated it carries,
//     with the listen's subscription ID (behaviour 15); not before the
//     acknowledgment has been sent.
//
// go-sdk's own table of subscriptions, one map entry per URI that every
// session's end walks in full under the server's lock, then holds the
// marker alone: a hundred streams of a thousand URIs ending at once cost
// a hundred walks of one entry, not of a hundred thousand.

// A listenStream is one 2026-07-28 listen stream whose resources the
// registry serves: the Session its subscriptions are kept for.
type listenStream struct {
	req    *mcp.SubscriptionsListenRequest // as the client sent it
	uris   []string                        // the resources it names; nil if the registry serves none
	done   <-chan struct{}                 // closed when the listen ends
	cancel context.CancelFunc              // ends the listen

	acked   chan struct{} // closed once the acknowledgment was sent, or failed
	ackOnce sync.Once
	id      any // the listen request's ID, the subscription ID; set before acked is closed
}

// errListenEnded is the error of a notification to a listen stream that
// has ended.
var errListenEnded = errors.New("resource: listen stream ended")

// ID is the ID of the listen's session, for logs.
func (l *listenStream) ID() string { return l.req.Session.ID() }

// Done is closed when the listen ends.
func (l *listenStream) Done() <-chan struct{} { return l.done }

// Close ends the listen: go-sdk returns from it, and its stream ends.
func (l *listenStream) Close() { l.cancel() }

// Updated sends notifications/resources/updated of uri on the stream,
// with the listen's subscription ID, once the acknowledgment has been
// sent (step 4), so that the acknowledgment stays the stream's first
// message, as go-sdk sends it. It is called only for a URI the client
// named in the listen: 2026-07-28 (basic/patterns/subscriptions) says
// "The server **MUST NOT** send notification types the client has not
// explicitly requested." It returns ctx's error if ctx ends first, and
// errListenEnded if the listen does.
func (l *listenStream) Updated(ctx context.Context, uri string) error {
	select {
	case <-l.acked:
	case <-l.done:
		return errListenEnded
	case <-ctx.Done():
		return ctx.Err()
	}
	s := l.req.Session
	carried := &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: s,
		Params: &mcp.ResourceUpdatedNotificationParams{URI: uri, Meta: mcp.Meta{mcp.MetaKeySubscriptionID: l.id}}}
	return s.NotifyProgress(context.WithValue(ctx, carriedKey{}, carried), &mcp.ProgressNotificationParams{})
}

// carriedKey is the context key under which Updated hands the sending
// middleware the notification a NotifyProgress call carries (behaviour
// 15).
type carriedKey struct{}

// listenOf returns the listen stream ctx is within (listenKey), nil if
// none.
func listenOf(ctx context.Context) *listenStream {
	l, _ := ctx.Value(listenKey{}).(*listenStream)
	return l
}

// serveListen serves a 2026-07-28 subscriptions/listen: one that names
// resources is passed on to go-sdk with the marker in their place (step
// 1), and the stream's subscriptions are dropped when it ends; any other
// is passed on as it is. With an Observer, the listen is a call of its
// own.
func (r *Registry) serveListen(ctx context.Context, method string, q *mcp.SubscriptionsListenRequest, next mcp.MethodHandler) (mcp.Result, error) {
	l := &listenStream{req: q}
	pass := q
	if q.Session != nil && q.Params != nil && q.Params.Notifications != nil && len(q.Params.Notifications.ResourceSubscriptions) > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		l.uris, l.done, l.cancel, l.acked = q.Params.Notifications.ResourceSubscriptions, ctx.Done(), cancel, make(chan struct{})
		defer r.delivery.Ended(delivery.Key{Other: l})
		defer l.ackOnce.Do(func() { close(l.acked) }) // for a listen refused before its acknowledgment
		notifications := *q.Params.Notifications
		notifications.ResourceSubscriptions = []string{marker.URI}
		params := *q.Params
		params.Notifications = &notifications
		copied := *q
		copied.Params = &params
		pass = &copied
	}
	ctx = context.WithValue(ctx, listenKey{}, l)
	if r.opts.Observer != nil {
		return r.observeListen(ctx, method, q, pass, next)
	}
	return next(ctx, method, pass)
}

// subscribesListen reports whether req, which go-sdk passes to the
// SubscribeHandler, is step 1's subscription to the marker for the
// listen l that ctx is within.
func subscribesListen(ctx context.Context, req *mcp.SubscribeRequest) (l *listenStream, ok bool) {
	l = listenOf(ctx)
	ok = l != nil && l.uris != nil && req.Session != nil && req.Session == l.req.Session &&
		req.Params != nil && req.Params.URI == marker.URI
	return l, ok
}

// subscribeListen subscribes l to each resource it names, as the
// adapter's stream it is (step 1), and returns the first refusal, having
// dropped those made before it.
func (r *Registry) subscribeListen(ctx context.Context, l *listenStream) error {
	ctx = WithCaller(ctx, Caller{ProtocolVersion: protocolVersion(l.req), Session: l})
	return r.subscribeEach(ctx, delivery.Key{Other: l}, l.uris, l.req.Params.Meta, l.req.Extra)
}

// acknowledge sends go-sdk's acknowledgment of the listen l with the
// client's resources in the marker's place (step 2), and then lets l's
// notifications go. If go-sdk acknowledged no marker, the server takes no
// subscriptions, and l holds none.
func (l *listenStream) acknowledge(ctx context.Context, r *Registry, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	defer l.ackOnce.Do(func() { close(l.acked) })
	p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams)
	if !ok || p == nil {
		return next(ctx, method, req)
	}
	acked := *p
	if slices.Contains(p.Notifications.ResourceSubscriptions, marker.URI) {
		acked.Notifications.ResourceSubscriptions = slices.Clone(l.uris)
	} else {
		r.delivery.Drop(delivery.Key{Other: l})
	}
	l.id = p.Meta[mcp.MetaKeySubscriptionID]
	return next(ctx, method, &mcp.ServerRequest[*mcp.SubscriptionsAcknowledgedParams]{Session: req.GetSession().(*mcp.ServerSession), Params: &acked})
}

// carried returns the notification a NotifyProgress call in ctx carries
// (Updated), if method is that of progress and one is.
func carried(ctx context.Context, method string) (mcp.Request, bool) {
	if method != protocol.NotificationProgress {
		return nil, false
	}
	c, ok := ctx.Value(carriedKey{}).(mcp.Request)
	return c, ok
}
