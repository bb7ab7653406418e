package resource

import (
	"context"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource/internal/delivery"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Observer is told what a registry does, for telemetry: traces,
// metrics, or anything else that watches a server. Options.Observer sets
// one; the module github.com/mcpres/mcpres/mcpotel is one for
// OpenTelemetry.
//
// Every request the registry answers (resources/list,
// resources/templates/list, resources/read, resources/subscribe, each
// resource of a 2026-07-28 subscriptions/listen and the listen itself,
// completion/complete) is a Call: StartCall is called as the registry
// begins it, before any step of its pipeline, and EndCall once when it
// ends, whatever came of it, with the same *Call filled in. Work outside
// requests (notifications, coalescing, subscriptions opening and closing,
// changes from other replicas) is reported to Event.
//
// The registry calls an Observer on its own paths, from many goroutines
// at once: its methods must be safe for concurrent use and quick, and
// must not call the registry. A panic in one is not recovered.
type Observer interface {
	// StartCall is called as c begins, with the fields a request sets.
	// It returns the context the call goes on in: ctx, or a context
	// derived from it (one holding a span, say). The registry's steps
	// and the user's functions (read functions, providers, completers,
	// the Authorizer) see that context, and EndCall receives it.
	StartCall(ctx context.Context, c *Call) context.Context
	// EndCall is called once for each StartCall, when the call ends,
	// with the context StartCall returned and c filled in. c must not be
	// kept after EndCall returns.
	EndCall(ctx context.Context, c *Call)
	// Event is called for what the registry does outside requests.
	Event(e Event)
}

// A Call is one request as an Observer sees it. The fields above Start are
// set when StartCall is called; the others by the time EndCall is.
type Call struct {
	// Op is what the call does; a subscriptions/listen is OpSubscribe.
	Op Operation
	// Method is the JSON-RPC method: "resources/list",
	// "resources/templates/list", "resources/read",
	// "resources/subscribe", "subscriptions/listen" or
	// "completion/complete".
	Method string
	// URI is the URI the request names: the resource read or subscribed
	// to, the URI template whose variable is completed; "" for a list, a
	// listen, and a request without params.
	URI string
	// Request is the request; nil for a direct call without one.
	Request mcp.Request
	// SessionID is the session's ID: "" for none, or for a session
	// without an ID (stdio, stateless HTTP).
	SessionID string
	// ProtocolVersion is the MCP version the request was made in, ""
	// if unknown.
	ProtocolVersion string
	// Identity is Options.Identity's answer for the request, "" for none.
	Identity string
	// Start is when the registry began the call.
	Start time.Time

	// End is when the call ended.
	End time.Time
	// Template is the URI template that a read's or subscription's URI
	// matched, or the template completed; "" for a static resource, a
	// URI that named nothing, and a list.
	Template string
	// Decision is what came of the call, as the access record says it:
	// one of the Decision constants.
	Decision Decision
	// Code is the JSON-RPC error code the client was answered with, 0 if
	// the call succeeded.
	Code int64
	// Err is the error the client was answered with, nil if none.
	Err error
	// Entries counts what the answer holds: the resources or templates
	// of a list page, the values of a completion, the contents of a
	// read; 0 for a subscription and a failed call.
	Entries int
	// Withheld counts the entries the Authorizer left out of a list page
	// or completion.
	Withheld int
	// Unlistable counts the resources providers and instance lists
	// returned that a resources/list page left out because the registry
	// would not read them, or they have no name (see ListFunc); 0 for
	// other calls. An entry the page passed over before its look-ahead
	// may be counted again by the next page.
	Unlistable int
	// Bytes is the size of a read's contents: text bytes, plus blob
	// bytes before base64.
	Bytes int64
	// MIME is what the MIME check (Options.MIME) said of a read's
	// contents: "match", "mismatch" (refused, or sent anyway under
	// MIMEWarn), or "off" (MIMEOff); "" if the call checked nothing.
	MIME string
}

// An EventKind says what an Event reports.
type EventKind uint8

// The kinds of Event. The zero EventKind is none of them.
const (
	// EventNotified reports a notification sent to one session:
	// Method is notifications/resources/updated (with URI) or
	// notifications/resources/list_changed.
	EventNotified EventKind = iota + 1
	// EventCoalesced reports a change that costs no notification of its
	// own, folded into one that is due: a change to URI within its
	// subscription window that already saw one (once for all its
	// subscribers), or a notification to a session that already has the
	// same one waiting to be sent (once for that session).
	EventCoalesced
	// EventSubscriptions reports that the number of open subscriptions
	// changed: Count is the number now (see Registry.SubscriptionStats).
	EventSubscriptions
	// EventBusReceived reports a change another replica published,
	// received from the bus (SubscriptionOptions.Bus): Lag is how long
	// after it was sent it arrived here, by the two replicas' clocks, or
	// -1 if the publisher did not say when it sent it.
	EventBusReceived
	// EventResync reports that the bus said this replica may have missed
	// changes other replicas published (a subscribe.Resync), and every
	// session was told to read again what it watches: Count is how many
	// URIs were watched, each notified once (coalesced as usual), and
	// Reason is what the bus said.
	EventResync
)

// An Event is something a registry did outside a request.
type Event struct {
	Kind   EventKind
	Method string        // EventNotified: the notification's method
	URI    string        // EventNotified, EventCoalesced: the resource; "" for a list change
	Count  int           // EventSubscriptions: open subscriptions now; EventResync: URIs watched, each notified
	Lag    time.Duration // EventBusReceived: from sending to receipt; -1 if unknown
	Reason string        // EventResync: why the bus said changes may be lost
}

// observe starts c's Call, if the registry has an Observer: c.ctx becomes
// the context the Observer returns.
func (r *Registry) observe(c *call) {
	o := r.opts.Observer
	if o == nil {
		return
	}
	uri := c.target
	if c.op == OpList {
		uri = ""
	}
	start := c.start // the access record's, if it has one
	if start.IsZero() {
		start = time.Now()
	}
	c.obs = &Call{Op: c.op, Method: c.method, URI: uri, Request: c.req, SessionID: sessionID(c.session),
		ProtocolVersion: c.protocolVersion(), Identity: c.identity, Start: start}
	c.ctx = o.StartCall(c.ctx, c.obs)
}

// observeEnd ends c's Call, which came to d and was answered with err.
func (r *Registry) observeEnd(c *call, d Decision, err error) {
	oc := c.obs
	oc.End, oc.Decision, oc.Err, oc.Withheld, oc.Unlistable = time.Now(), d, err, c.withheld, c.unlistable
	if err != nil {
		oc.Code, _ = errorCode(err)
		oc.Entries, oc.Bytes = 0, 0
	}
	r.opts.Observer.EndCall(c.ctx, oc)
}

// observeDelivery sets o's Coalesced, Sent and Count to tell the
// Observer, if there is one, of the notifications and subscriptions the
// delivery handles.
func (r *Registry) observeDelivery(o *delivery.Options[Access]) {
	obs := r.opts.Observer
	if obs == nil {
		return
	}
	o.Coalesced = func(uri string) { obs.Event(Event{Kind: EventCoalesced, URI: uri}) }
	o.Sent = func(method, uri string) { obs.Event(Event{Kind: EventNotified, Method: method, URI: uri}) }
	o.Count = func(n int) { obs.Event(Event{Kind: EventSubscriptions, Count: n}) }
}

// observeListen passes q, a 2026-07-28 subscriptions/listen, on to
// go-sdk (next) as pass (see serveListen), as a Call of its own, which lasts
// as long as the listen's stream: the subscriptions made of it are calls
// within it.
// go-sdk decides what the listen's own error is; the subscription that
// caused one has said why in its own call.
func (r *Registry) observeListen(ctx context.Context, method string, q, pass *mcp.SubscriptionsListenRequest, next mcp.MethodHandler) (mcp.Result, error) {
	c := call{ctx: ctx, op: OpSubscribe, method: protocol.MethodListen, req: q, session: delivery.Key{SDK: q.Session}}
	c.identity = r.opts.Identity(ctx, q)
	r.observe(&c)
	res, err := next(c.ctx, method, pass)
	o := DecisionAllowed
	if err != nil {
		o = listenDecision(err)
	}
	r.observeEnd(&c, o, err)
	return res, err
}
