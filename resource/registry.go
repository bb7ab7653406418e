// Package resource is the registry of MCP resources and the thin handlers
// that serve it: resources/list, resources/read, resources/templates/list,
// resources/subscribe and completion/complete for template variables.
//
// A Registry holds static resources (one URI, one read function), resource
// templates (an RFC 6570 URI template whose read function receives the
// matched variables, percent-decoded; the most specific template wins) and
// providers that list dynamic collections, such as database rows, a page
// at a time. [Registry.NewServer] makes a go-sdk [mcp.Server] that serves
// it, subscriptions included, in one call; [Mount] wires it into a server
// made elsewhere. The handler methods ([Registry.ReadResource],
// [Registry.ListResources], ...) are also plain functions over go-sdk
// request and result types, for servers that route requests themselves,
// and for adapters that serve a registry on another Go MCP framework:
// [WithCaller] names the caller of such a request, and [Registry.Attach]
// the server (the module github.com/mcpres/mcpres/mcpgo is one for
// mark3labs/mcp-go).
//
// Every handler runs the same steps in the same order: spend the caller's
// rate budget, check the URI, resolve it, ask the [Authorizer], call your
// function, finish the result (fill in defaults, check the MIME type, set
// caching hints) and write the access record. An [Observer]
// (Options.Observer) is told of each call at both ends, and of the
// notifications and subscriptions the registry handles: the one hook for
// telemetry (the module github.com/mcpres/mcpres/mcpotel is one for
// OpenTelemetry).
//
// Package serve serves such a server over streamable HTTP, behind the
// HTTP edge: this package speaks MCP, not HTTP. Every URI the registry
// lists is one it accepts in a read: build instance URIs with
// [Registry.Expand].
//
// Lists are keyset pages with encrypted cursors (package cursor); every read
// is checked against its MIME type (package mimetype, see [MIMEPolicy]);
// subscriptions are recorded, coalesced, delivered and cleaned up in one
// place, the internal package resource/internal/delivery, whose doc lists
// the steps from a change to a notification (see [Registry.Subscribe] and
// [Registry.Changed]).
//
// Errors follow the MCP specification in one place: an unknown URI is
// answered with -32602 and data {"uri": …} for clients on protocol
// 2026-07-28 or later and -32002 for older clients (see [NotFoundCode]); a
// malformed URI or cursor with -32602 saying why; a failing or panicking
// read function with -32603 that reveals nothing, the detail going to the
// registry's logger.
package resource

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/internal/burst"
	"github.com/mcpres/mcpres/resource/internal/delivery"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNotFound is returned, or wrapped, by a read function for a resource
// that does not exist (a template match with no backing row or file, say).
// The registry answers it exactly like an unknown URI.
var ErrNotFound = errors.New("resource not found")

// ErrInvalidURI is wrapped by the errors of the registry's methods that
// take a URI from the server's own code (Changed, ChangedPrefix, Expand)
// when it is not one a client could send: not an absolute RFC 3986 URI,
// a character that must be percent-encoded, a malformed escape. The error
// says what is wrong and, where it can, the URI a client would send.
var ErrInvalidURI = errors.New("invalid resource URI")

// ErrClosed is returned, or wrapped, by the methods of a Registry that
// change it, once it is closed. Requests to a closed registry are answered
// with -32603.
var ErrClosed = errors.New("resource: registry closed")

// A ReadFunc reads a static resource. It has the shape of go-sdk's
// [mcp.ResourceHandler], so existing handlers can be registered unchanged.
//
// Contents may leave URI and MIMEType empty: the registry fills in the
// requested URI and the resource's declared MIME type. A missing resource
// is reported by returning (or wrapping) [ErrNotFound]; any other error is
// logged and answered with -32603.
type ReadFunc = func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error)

// A TemplateReadFunc reads one resource matched by a template. vars holds
// the template's variables as matched in the request URI, percent-decoded
// once (vars.Get("id") for {id}); a variable the URI does not bind is
// absent.
//
// It reports results and errors as a [ReadFunc] does.
type TemplateReadFunc = func(ctx context.Context, req *mcp.ReadResourceRequest, vars Vars) (*mcp.ReadResourceResult, error)

// Vars holds the values of a template's variables matched in a URI: Get
// for a single value, List for an exploded variable such as {/path*}.
type Vars = uritemplate.Values

// A Registry holds static resources and resource templates and answers the
// MCP resource methods for them. It is safe for concurrent use; entries may
// be added and removed while it serves requests. Close stops what it runs
// in the background.
type Registry struct {
	opts Options

	static    cursor.Sorted[*staticEntry]   // by URI: the list order
	templates cursor.Sorted[*templateEntry] // by URI template: the list order

	mu        sync.RWMutex
	router    uritemplate.Router[*templateEntry] // the match order
	providers map[string]ListFunc                // by source name
	sources   []cursor.Source[*mcp.Resource]     // static, then providers by name; replaced, never changed

	cursors *cursor.Codec
	// reads and subscribes are the rate limits; nil when unlimited.
	reads, subscribes *limiter
	// delivery holds the subscriptions and takes changes to the sessions
	// that watch them (package delivery's doc lists the steps).
	delivery         *delivery.Delivery[Access]
	refusals         burst.Counter // refusals for a cap, logged once a burst
	resyncs          atomic.Uint64 // subscribe.Resync received
	resyncedURIs     atomic.Uint64 // URIs notified for them
	resyncLog        burst.Counter // resyncs, logged once an episode
	resyncMu         sync.Mutex
	resyncAt         time.Time     // of the last resync made; zero before the first
	resyncTimer      *time.Timer   // a resync put off to the end of resyncEvery; nil if none
	resyncWhy        string        // the reason of the latest resync put off
	listed           listedReports // what providers listed that lists leave out, reported
	unknownTemplates reportedOnce  // templates other replicas reported and this one lacks
	stopListening    func()        // stops taking the bus's changes; nil without a bus
	closed           atomic.Bool
	made             sync.Map // *mcp.Server → struct{}: the servers NewServer made (Subscribes)
}

// NewRegistry returns an empty Registry configured by opts, which may be
// nil for the defaults. It returns an error naming every field of opts
// that is out of range (a negative size or duration, a page size above
// MaxPageSize, an unknown NotFoundCode, MIMEPolicy or cache scope, a rate
// limit that would allow nothing).
func NewRegistry(opts *Options) (*Registry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("resource: NewRegistry: %w", err)
	}
	r := &Registry{opts: o, providers: make(map[string]ListFunc), cursors: o.Cursors}
	r.delivery, err = delivery.New(r.deliveryOptions())
	if err != nil {
		return nil, fmt.Errorf("resource: NewRegistry: Options.Subscriptions: %w", err)
	}
	if r.cursors == nil {
		r.cursors, _ = cursor.NewCodec(nil) // cannot fail without options
	}
	r.sources = []cursor.Source[*mcp.Resource]{{Name: "", Provider: index[*staticEntry, *mcp.Resource]{&r.static, (*staticEntry).describe}}}
	r.reads = newLimiter(o.RateLimits.Read)
	r.subscribes = newLimiter(o.RateLimits.Subscribe)
	r.router.MaxURILength = o.MaxURILength
	if err := r.listen(); err != nil {
		r.delivery.Close()
		return nil, fmt.Errorf("resource: NewRegistry: Options.Subscriptions.Bus: %w", err)
	}
	return r, nil
}

// Close stops everything the registry runs in the background: listening
// to SubscriptionOptions.Bus (which it does not close), the
// list_changed timer, the subscription manager's delivery, and its own
// context, which notifications in flight are sent with. It waits for a
// delivery under way to return. After Close the registry changes no more:
// Add, AddTemplate, AddProvider and NewServer return ErrClosed, Changed
// and its kin do nothing, requests are answered with -32603, and
// subscriptions are forgotten. A subscribed session of a server the
// registry is not mounted on is awaited by a goroutine until it ends
// (see Mount). A notification being sent to a session whose client has
// stopped reading stays under way until its transport fails, the session
// ends, or, on a transport that heeds its context, 10 s pass (as go-sdk
// bounds its own sends); those still waiting are dropped, and no later
// one is sent. What the server sends itself goes on as go-sdk sends it.
// Close is idempotent and always returns nil.
func (r *Registry) Close() error {
	if !r.closed.CompareAndSwap(false, true) {
		return nil
	}
	if r.stopListening != nil {
		r.stopListening()
	}
	r.delivery.Close()
	r.resyncMu.Lock()
	if r.resyncTimer != nil {
		r.resyncTimer.Stop()
	}
	r.resyncMu.Unlock()
	return nil
}
