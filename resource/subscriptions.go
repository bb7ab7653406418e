package resource

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/internal/uri"
	"github.com/mcpres/mcpres/resource/internal/delivery"
	"github.com/mcpres/mcpres/subscribe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SubscriptionOptions configures a registry's subscriptions. The zero
// value is ready to use.
type SubscriptionOptions struct {
	// MaxPerSession caps the URIs one session may watch; a subscription
	// beyond it is refused with -32602. Zero means
	// subscribe.DefaultMaxPerSession (1,000); subscribe.NoLimit sets no
	// cap; negative is refused.
	MaxPerSession int
	// MaxPerCaller caps the subscriptions one caller holds across all its
	// sessions and listen streams (see the caps in caps.go); one beyond
	// it is refused with -32602. Zero means
	// DefaultMaxSubscriptionsPerCaller (10,000); subscribe.NoLimit sets no
	// cap; negative is refused.
	MaxPerCaller int
	// Max caps the subscriptions the registry holds in all; one beyond it
	// is refused with -32602. Zero means DefaultMaxSubscriptions
	// (100,000); subscribe.NoLimit sets no cap; negative is refused.
	Max int
	// MaxBytesPerCaller caps the bytes of the URIs one caller's
	// subscriptions name, counted as MaxPerCaller counts subscriptions
	// (len(uri) each, however many others watch it); one that would go
	// over it is refused with -32602. Zero means
	// DefaultMaxSubscriptionBytesPerCaller (1 MiB); subscribe.NoLimit
	// sets no cap; negative is refused.
	MaxBytesPerCaller int
	// MaxBytes caps the bytes of the URIs all the registry's
	// subscriptions name, counted the same way; one that would go over it
	// is refused with -32602. Zero means DefaultMaxSubscriptionBytes
	// (8 MiB); subscribe.NoLimit sets no cap; negative is refused.
	MaxBytes int
	// Window is the shortest time between two notifications of one URI
	// (see subscribe.Options.Window): a change to a URI after a quiet
	// spell is notified at once, and any number of Changed calls for it
	// within the window that follows yield one more
	// notifications/resources/updated per subscriber when it ends. Zero
	// means subscribe.DefaultWindow (100 ms); negative is refused.
	Window time.Duration
	// OnWatch is called when a URI gains its first subscriber, and
	// OnUnwatch when it loses its last, so that the data source watches
	// (polls, LISTENs, fsnotify) only what someone watches. They are
	// called in order for any one URI, with no lock held (they may call
	// the registry), possibly just after the subscribing request returns.
	OnWatch, OnUnwatch func(uri string)
	// Bus, if not nil, shares changes with the other replicas of this
	// server (see subscribe.Bus): Changed, ChangedPrefix, ChangedTemplate
	// and NotifyListChanged publish what they report on it, and what the
	// other replicas publish is delivered to this registry's own
	// subscribers and sessions, coalesced with its own changes. A change
	// is delivered at once on the replica that reports it, whatever the
	// bus does, and never twice there. Add, Remove and the other
	// registrations notify this replica's sessions only: each replica
	// makes its own. NewRegistry starts listening; Close stops. Nil means
	// this registry is the only replica.
	Bus subscribe.Bus
}

// deliveryOptions configures the registry's delivery: its subscription
// options, the Authorizer asked again before each notification, the
// marker announced for list_changed (go-sdk behaviour 3), and the
// Observer.
func (r *Registry) deliveryOptions() delivery.Options[Access] {
	so := r.opts.Subscriptions
	o := delivery.Options[Access]{
		MaxPerSession:     so.MaxPerSession,
		MaxPerCaller:      so.MaxPerCaller,
		Max:               so.Max,
		MaxBytesPerCaller: so.MaxBytesPerCaller,
		MaxBytes:          so.MaxBytes,
		Window:            so.Window,
		ListChangedDelay:  r.opts.ListChangedDelay,
		OnWatch:           so.OnWatch,
		OnUnwatch:         so.OnUnwatch,
		OnShed:            r.shed,
		Announce:          func(s *mcp.Server) { announce(s, r.readViaMarker) },
		Logger:            r.opts.Logger,
	}
	if r.opts.Authorize != nil {
		o.Allowed = r.stillAllowed
	}
	r.observeDelivery(&o)
	return o
}

// Subscribe answers resources/subscribe, and the resource subscriptions of
// a 2026-07-28 subscriptions/listen: it returns nil, and records the
// subscription, if the URI is well formed, names a resource this registry
// can read (a static resource, or a template match whose WithExists
// check, if it has one, says the instance exists) that Options.Authorize,
// if set, lets the caller subscribe to, and the session holds fewer than
// SubscriptionOptions.MaxPerSession subscriptions, its caller fewer than
// MaxPerCaller, and the registry fewer than Max, and the URI keeps its
// caller within MaxBytesPerCaller and the registry within MaxBytes;
// otherwise a -32602
// error saying why, the same for a denied resource as for an unknown one.
// Refusals for a cap are logged at Warn, once per burst.
// A template without WithExists accepts every URI it matches. A template
// instance must be named as the registry names it, the template's own
// expansion of the matched values (as Registry.Expand builds it, and as
// Changed reports it): another spelling of it, such as db://users/%34%32
// for db://users/42, is refused with -32602 naming the registry's form,
// since its subscriber would never be told of a change.
//
// A session that can be sent nothing after its responses (a client
// before 2026-07-28 served over streamable HTTP without a session, as by
// go-sdk's stateless handler) is refused with -32602 saying so, rather
// than subscribed and never told; such a session is not offered the
// subscribe capability either. Package serve serves every client with a
// way to be notified.
// A subscription beyond Options.RateLimits.Subscribe is refused with
// CodeRateLimited. Subscribing twice to one URI is not an error. Each
// subscription is written to the access log (see AccessLogOptions).
//
// Its signature is that of mcp.ServerOptions.SubscribeHandler, which is how
// go-sdk enables subscriptions: Registry.NewServer sets it, and a server
// made elsewhere sets it itself (see Mount). go-sdk then advertises the
// subscribe capability and runs the protocol; the registry decides,
// records and notifies (see Changed). With an Authorizer, it is asked
// again before each notification, and a subscriber it now denies hears
// no more of that URI (see Authorizer). A session's subscriptions are
// forgotten when it ends (or, on 2026-07-28, when its listen stream does).
func (r *Registry) Subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	if req == nil || req.Params == nil {
		c := r.begin(ctx, OpSubscribe, protocol.MethodSubscribe, "", nil, nil)
		return r.end(&c, invalid(protocol.MethodSubscribe+" needs params with a uri"))
	}
	if l, ok := subscribesListen(ctx, req); ok {
		return r.subscribeListen(ctx, l)
	}
	req = withListenExtra(ctx, req)
	c := r.begin(ctx, OpSubscribe, protocol.MethodSubscribe, req.Params.URI, req, req.Session)
	return r.end(&c, r.subscribe(&c))
}

// subscribe runs the steps of resources/subscribe.
func (r *Registry) subscribe(c *call) error {
	if err := r.open(); err != nil {
		return err
	}
	if c.unreachable() {
		return invalid("cannot subscribe: this connection cannot receive notifications " +
			"(streamable HTTP without a session, protocol before 2026-07-28); " +
			"connect with a session (stateful HTTP) or use protocol 2026-07-28")
	}
	if err := r.spend(c, r.subscribes); err != nil {
		return err
	}
	if err := r.checkURI(c.target); err != nil {
		return err
	}
	t, err := r.resolve(c.target)
	if err != nil {
		return err
	}
	c.matched(t)
	a := t.access(c, OpSubscribe, c.target)
	if err := r.authorize(c, a); err != nil {
		return err
	}
	if err := r.exists(c, t); err != nil {
		return err
	}
	// After exists: a missing instance is missing, whatever its spelling,
	// and the registry's spelling is named only for one that exists.
	if canon, ok := r.canonical(t, c.target); ok {
		return invalid("cannot subscribe to %q: the server names this resource %q; subscribe to that", c.target, canon)
	}
	if c.session.IsZero() {
		return nil // a direct call: nothing to notify
	}
	// With an Authorizer, the Access is kept as the subscription's grant,
	// asked again before each notification (stillAllowed). A subscription
	// that came through the registry's middleware is pending until go-sdk
	// holds it (behaviour 13); one of a listen stream the registry serves
	// (listen.go) is held at once.
	caller := r.opts.RateKey(c.ctx, c.req, c.identity)
	confirmed := c.session.SDK == nil || !confirmable(c.ctx)
	sub := delivery.Subscription[Access]{Grant: a, Granted: r.opts.Authorize != nil, Confirmed: confirmed, Caller: caller}
	if err := r.delivery.Subscribe(c.session, c.target, sub); err != nil {
		if capErr, ok := err.(*delivery.LimitError); ok {
			r.capped(c.ctx, capNames[capErr.Cap], caller, capErr.Limit)
		}
		return invalid("cannot subscribe to %q: %v", c.target, err) // a cap, or closed
	}
	return nil
}

// capNames names the delivery's caps in the log.
var capNames = [...]string{
	delivery.CapSession:     "subscriptions per session",
	delivery.CapCaller:      "subscriptions per caller",
	delivery.CapTotal:       "subscriptions in all",
	delivery.CapCallerBytes: "subscribed URI bytes per caller",
	delivery.CapTotalBytes:  "subscribed URI bytes in all",
}

// Unsubscribe answers resources/unsubscribe (and the end of a 2026-07-28
// listen stream): it forgets the subscription. Unsubscribing from
// something not subscribed is not an error. Its signature is that of
// mcp.ServerOptions.UnsubscribeHandler. A request without a go-sdk
// session is one of the session ctx names, if it names one (WithCaller).
func (r *Registry) Unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	if req == nil || req.Params == nil {
		return nil
	}
	s := delivery.Key{SDK: req.Session}
	if req.Session == nil {
		if c := callerOf(ctx); c != nil {
			s.Other = c.Session
		}
	}
	if !s.IsZero() {
		r.delivery.Unsubscribe(s, req.Params.URI)
	}
	return nil
}

// stillAllowed asks the Authorizer again, before a notification of a
// change to u goes to session s, about the subscription it allowed with
// a: a subscriber whose access is withdrawn hears no more, and the
// withheld notification is logged as denied. It is the delivery's
// Options.Allowed.
func (r *Registry) stillAllowed(ctx context.Context, s delivery.Key, u string, a Access) bool {
	reason := r.decide(ctx, s, a)
	if reason == nil {
		return true
	}
	if start := r.accessLogStart(ctx); !start.IsZero() {
		c := call{ctx: ctx, op: OpSubscribe, method: protocol.NotificationResourceUpdated, target: u, session: s, identity: a.Identity, start: start}
		r.logAccess(&c, DecisionDenied, denied(reason))
	}
	return false
}

// Changed reports that the resource at uri changed. It returns at once:
// subscribers get notifications/resources/updated right away unless uri's
// subscribers were notified within the last SubscriptionOptions.Window,
// and otherwise when that window ends, once however many times Changed is
// called for uri meanwhile; only sessions subscribed to uri are notified.
// With SubscriptionOptions.Bus, the change is also published to the other
// replicas, which notify their own subscribers the same way. Sessions are
// sent their notifications by a few sending goroutines, not by the
// caller: a client that stops reading keeps one of them and holds up no
// other session for more than 10 ms, and what waits for it is at most
// one notification per URI (go-sdk's own Server.ResourceUpdated, which
// sends to one session after another, would wait for it).
//
// uri must be the URI exactly as clients subscribe to it: as the registry
// lists it and a read names it, percent-encoded where RFC 3986 asks
// (build template instances with Registry.Expand). Changed returns nil if
// uri is watched, or could be: it is a URI the registry would let a
// client subscribe to. It returns an error wrapping ErrInvalidURI for a
// string no client could send (such as "notes://gamma ray", whose client
// form is "notes://gamma%20ray") or for another spelling of a template
// instance than the registry's own ("db://users/%34%32" for
// "db://users/42", see Subscribe), and one wrapping ErrNotFound for a URI
// that names no static resource and matches no template. Either way
// nothing is notified or published, and the error says what a client
// would have sent. Only a URI no one on this replica watches is checked,
// so reporting a watched URI costs no more than the lookup.
func (r *Registry) Changed(u string) error {
	if r.delivery.Changed(u) {
		r.publish(subscribe.Change{Kind: subscribe.Updated, Value: u})
		return nil
	}
	if err := uri.Check(u, r.opts.MaxURILength); err != nil {
		return fmt.Errorf("resource: Changed(%q): no client could subscribe to it: %w", u, invalidURI(u, err))
	}
	t, err := r.resolve(u)
	if err != nil {
		return fmt.Errorf("resource: Changed(%q): no static resource or template matches it: %w", u, ErrNotFound)
	}
	if canon, ok := r.canonical(t, u); ok {
		return fmt.Errorf("resource: Changed(%q): clients subscribe to this resource as %q (build URIs with Registry.Expand): %w", u, canon, ErrInvalidURI)
	}
	r.publish(subscribe.Change{Kind: subscribe.Updated, Value: u})
	return nil
}

// ChangedPrefix reports that every subscribed resource whose URI starts
// with prefix changed, such as everything under log://prod/; the empty
// prefix means every subscribed resource. With SubscriptionOptions.Bus it
// is published to the other replicas too. It returns an error wrapping
// ErrInvalidURI, and notifies nothing, if no URI a client could send
// starts with prefix (it holds a space, say, or a malformed escape).
func (r *Registry) ChangedPrefix(prefix string) error {
	if err := uri.CheckPrefix(prefix, r.opts.MaxURILength); err != nil {
		return fmt.Errorf("resource: ChangedPrefix(%q): no client URI starts with it: %w", prefix, invalidURI(prefix, err))
	}
	r.delivery.ChangedPrefix(prefix)
	r.publish(subscribe.Change{Kind: subscribe.UpdatedPrefix, Value: prefix})
	return nil
}

// ChangedTemplate reports that every subscribed resource matched by the
// registered template uriTemplate changed, such as every row of
// db://users/{id}. With SubscriptionOptions.Bus it is published to the
// other replicas too. It returns an error wrapping ErrNotFound, and
// notifies nothing, if no template uriTemplate is registered.
func (r *Registry) ChangedTemplate(uriTemplate string) error {
	if !r.changedTemplate(uriTemplate) {
		return fmt.Errorf("resource: ChangedTemplate(%q): no such template: %w", uriTemplate, ErrNotFound)
	}
	r.publish(subscribe.Change{Kind: subscribe.UpdatedTemplate, Value: uriTemplate})
	return nil
}

// changedTemplate queues the watched URIs the template uriTemplate
// matches for delivery, and reports whether the registry holds it.
func (r *Registry) changedTemplate(uriTemplate string) bool {
	e, ok := r.templates.Get(uriTemplate)
	if !ok {
		return false
	}
	r.delivery.ChangedWhere(func(u string) bool {
		_, ok := e.compiled.Match(u)
		return ok
	})
	return true
}

// SubscriptionStats counts the subscriptions the registry holds, the
// sessions holding them and the URIs they watch.
func (r *Registry) SubscriptionStats() (subscriptions, sessions, uris int) {
	return r.delivery.Stats()
}
