package resource

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SubscriptionOptions configures a registry's subscriptions. The zero
// value is ready to use.
type SubscriptionOptions struct {
	// MaxPerSession caps the URIs one session may watch; a subscription
	// beyond it is refused with -32602. Zero means
	// DefaultMaxPerSession of package subscribe (1,000); negative means no cap.
	MaxPerSession int
	// Window is how long changes are gathered before notifications go out:
	// any number of Changed calls for one URI within it yield one
	// notifications/resources/updated per subscriber. Zero means
	// its DefaultWindow (100 ms).
	Window time.Duration
	// OnWatch is called when a URI gains its first subscriber, and
	// OnUnwatch when it loses its last, so that the data source watches
	// (polls, LISTENs, fsnotify) only what someone watches. They are
	// called in order for any one URI, with no lock held (they may call
	// the registry), possibly just after the subscribing request returns.
	OnWatch, OnUnwatch func(uri string)
}

// Subscribe answers resources/subscribe, and the resource subscriptions of
// a 2026-07-28 subscriptions/listen: it returns nil, and records the
// subscription, if the URI is well formed, names a resource this registry
// can read (a static resource or a template match) that Options.Authorize,
// if set, lets the caller subscribe to, and the session holds fewer than
// SubscriptionOptions.MaxPerSession subscriptions; otherwise a -32602
// error saying why, the same for a denied resource as for an unknown one.
// A subscription beyond Options.RateLimits.Subscribe is refused with
// CodeRateLimited. Subscribing twice to one URI is not an error. Each
// subscription is written to the audit log (see AuditOptions).
//
// Its signature is that of mcp.ServerOptions.SubscribeHandler, which is how
// subscriptions are enabled:
//
//	server := mcp.NewServer(impl, &mcp.ServerOptions{
//		SubscribeHandler:   reg.Subscribe,
//		UnsubscribeHandler: reg.Unsubscribe,
//	})
//	resource.Mount(server, reg)
//
// go-sdk then advertises the subscribe capability and runs the protocol;
// the registry decides, records and notifies (see Changed). A session's
// subscriptions are forgotten when it ends (or, on 2026-07-28, when its
// listen stream does).
func (r *Registry) Subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	if req == nil || req.Params == nil {
		return invalidParams("resources/subscribe needs params with a uri")
	}
	req = withListenExtra(ctx, req)
	start, auditing := r.auditing(ctx)
	identity := r.identity(ctx, req)
	d, err := r.subscribe(ctx, req, identity)
	if auditing {
		r.audit(ctx, OpSubscribe, req.Params.URI, req.Session, identity, d, start)
	}
	return err
}

// subscribe answers resources/subscribe for Subscribe, and says what it
// decided.
func (r *Registry) subscribe(ctx context.Context, req *mcp.SubscribeRequest, identity string) (decision, error) {
	u := req.Params.URI
	if err := r.subscribes.spend("resources/subscribe", req.Session, identity); err != nil {
		return decision{what: decisionLimited}, err
	}
	if err := r.checkRequestURI(u); err != nil {
		return decision{what: decisionInvalid}, err
	}
	t, ok := r.resolve(u)
	if !ok {
		return decision{what: decisionNotFound}, errNoSuchSubscription(u)
	}
	if err := r.authorize(ctx, t.access(OpSubscribe, u, identity, req)); err != nil {
		return decision{what: decisionDenied, reason: err}, errNoSuchSubscription(u)
	}
	if req.Session == nil {
		return decision{what: decisionAllowed}, nil // a direct call: nothing to notify
	}
	if err := r.subs.Subscribe(req.Session, u); err != nil {
		return decision{what: decisionInvalid}, invalidParams("cannot subscribe to %q: %v", u, err) // the per-session limit
	}
	r.forgetOnEnd(req.Session)
	return decision{what: decisionAllowed}, nil
}

// Unsubscribe answers resources/unsubscribe (and the end of a 2026-07-28
// listen stream): it forgets the subscription. Unsubscribing from
// something not subscribed is not an error. Its signature is that of
// mcp.ServerOptions.UnsubscribeHandler.
func (r *Registry) Unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	if req == nil || req.Params == nil || req.Session == nil {
		return nil
	}
	r.subs.Unsubscribe(req.Session, req.Params.URI)
	return nil
}

// forgetOnEnd drops the session's subscriptions when it ends. One
// goroutine waits per session that subscribed; it ends with the session.
func (r *Registry) forgetOnEnd(s *mcp.ServerSession) {
	r.watchMu.Lock()
	defer r.watchMu.Unlock()
	if r.watching[s] {
		return
	}
	r.watching[s] = true
	go func() {
		s.Wait()
		r.subs.Drop(s)
		r.watchMu.Lock()
		delete(r.watching, s)
		r.watchMu.Unlock()
	}()
}

// Changed reports that the resource at uri changed. It returns at once:
// subscribers get notifications/resources/updated after
// SubscriptionOptions.Window, once however many times Changed is called
// for uri meanwhile, and only sessions subscribed to uri are notified.
func (r *Registry) Changed(uri string) { r.subs.Changed(uri) }

// ChangedPrefix reports that every subscribed resource whose URI starts
// with prefix changed, such as everything under log://prod/.
func (r *Registry) ChangedPrefix(prefix string) { r.subs.ChangedPrefix(prefix) }

// ChangedTemplate reports that every subscribed resource matched by the
// registered template uriTemplate changed, such as every row of
// db://users/{id}. An unknown template changes nothing.
func (r *Registry) ChangedTemplate(uriTemplate string) {
	e, ok := r.templates.Get(uriTemplate)
	if !ok {
		return
	}
	r.subs.ChangedWhere(func(u string) bool {
		_, ok := e.compiled.Match(u)
		return ok
	})
}

// SubscriptionStats counts the subscriptions the registry holds, the
// sessions holding them and the URIs they watch.
func (r *Registry) SubscriptionStats() (subscriptions, sessions, uris int) {
	return r.subs.Stats()
}

// deliverUpdate notifies the subscribers of uri on every mounted server:
// go-sdk sends notifications/resources/updated to exactly the sessions
// subscribed to uri, legacy and 2026-07-28 alike.
func (r *Registry) deliverUpdate(u string) {
	for _, s := range r.notify.mounted() {
		s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: u})
	}
}
