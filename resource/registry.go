// Package resource is the registry of MCP resources and the thin handlers
// that serve it: resources/list, resources/read, resources/templates/list,
// resources/subscribe and completion/complete for template variables.
//
// A Registry holds static resources (one URI, one read function), resource
// templates (an RFC 6570 URI template whose read function receives the
// matched variables, percent-decoded; the most specific template wins) and
// providers that list dynamic collections, such as database rows, a page
// at a time. [Mount] wires a Registry into a go-sdk [mcp.Server] with one
// call; the handler methods ([Registry.ReadResource],
// [Registry.ListResources], ...) are also plain functions over go-sdk
// request and result types, for servers that route requests themselves.
//
// Lists are keyset pages with signed cursors (package cursor); every read
// is checked against its MIME type (package mimetype, see [MIMEPolicy]);
// subscriptions are recorded, coalesced and cleaned up by package
// subscribe (see [Registry.Subscribe] and [Registry.Changed]).
//
// Errors follow the MCP specification in one place: an unknown URI is
// answered with -32602 and data {"uri": …} for clients on protocol
// 2026-07-28 or later and -32002 for older clients (see [NotFoundCode]); a
// malformed URI or cursor with -32602 saying why; a failing or panicking
// read function with -32603 that reveals nothing, the detail going to the
// registry's logger.
package resource

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/internal/uri"
	"github.com/mcpres/mcpres/mimetype"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultPageSize is the number of entries a resources/list or
// resources/templates/list page holds when [Options.PageSize] is zero.
const DefaultPageSize = 100

// MaxPageSize caps Options.PageSize.
const MaxPageSize = 10_000

// DefaultMaxURILength is the longest URI, in bytes, that resources/read
// accepts when [Options.MaxURILength] is zero. Longer URIs are answered with
// -32602 before any lookup.
const DefaultMaxURILength = uri.DefaultMaxLength

// DefaultListChangedDelay is how long a Registry gathers changes before it
// asks mounted servers to send notifications/resources/list_changed, when
// [Options.ListChangedDelay] is zero.
const DefaultListChangedDelay = 50 * time.Millisecond

// ErrNotFound is returned, or wrapped, by a read function for a resource
// that does not exist (a template match with no backing row or file, say).
// The registry answers it exactly like an unknown URI.
var ErrNotFound = errors.New("resource not found")

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
type TemplateReadFunc func(ctx context.Context, req *mcp.ReadResourceRequest, vars Vars) (*mcp.ReadResourceResult, error)

// Vars holds the values of a template's variables matched in a URI: Get
// for a single value, List for an exploded variable such as {/path*}.
type Vars = uritemplate.Values

// CacheScope says who may reuse a cached result (MCP 2026-07-28 cacheScope).
type CacheScope string

// The cache scopes of MCP 2026-07-28.
const (
	// Public results may be cached and served by any client or intermediary.
	Public CacheScope = "public"
	// Private results may be cached only by the requesting user's client.
	Private CacheScope = "private"
)

// Cache is the caching hint a result carries to 2026-07-28 clients: ttlMs
// and cacheScope. The zero value means "immediately stale, public", the
// protocol's default.
type Cache struct {
	// TTL is how long a client may reuse the result; it is sent in whole
	// milliseconds. Zero means the result is stale at once.
	TTL time.Duration
	// Scope is who may reuse it; empty means Public.
	Scope CacheScope
}

func (c Cache) apply(dst *mcp.Cacheable) {
	dst.TTLMs = int(c.TTL / time.Millisecond)
	dst.CacheScope = string(cmp.Or(c.Scope, Public))
}

// NotFoundCode chooses the JSON-RPC error code for an unknown resource.
type NotFoundCode int

const (
	// NotFoundByVersion, the default, answers -32602 to clients on protocol
	// 2026-07-28 or later (SEP-2164) and -32002 to older clients, whose
	// specification recommends that code. A request that carries no
	// protocol version (a direct handler call without a session) counts as
	// older.
	NotFoundByVersion NotFoundCode = iota
	// NotFoundInvalidParams always answers -32602.
	NotFoundInvalidParams
	// NotFoundLegacy always answers -32002.
	NotFoundLegacy
)

// Options configures a Registry. The zero value is ready to use.
type Options struct {
	// Logger receives read-function failures and panics, with the session
	// ID and URI. Give it the logger your server logs to. Nil means
	// slog.Default().
	Logger *slog.Logger
	// PageSize is the most entries one list page holds. Zero means
	// DefaultPageSize; more than MaxPageSize means MaxPageSize. Clients
	// cannot raise it.
	PageSize int
	// Cursors signs and checks list cursors. Nil means a codec with a
	// random key, whose cursors are valid for the life of the registry;
	// give one with fixed keys (cursor.NewCodec) when several replicas
	// serve the same clients, or cursors must survive a restart.
	Cursors *cursor.Codec
	// CursorScope, if set, binds each list cursor to what it returns for
	// the request, besides the caller's Identity, to which cursors are
	// always bound: a cursor issued under one scope is refused under
	// another.
	CursorScope func(ctx context.Context, req mcp.Request) string
	// Authorize, if set, decides who may list, read, subscribe to and
	// complete what, before any read function runs; see Authorizer. With
	// it set, every list and read result carries cacheScope "private",
	// since what a caller gets depends on who they are. Nil allows
	// everything.
	Authorize Authorizer
	// Identity names the caller of a request, for Access.Identity, the
	// audit log, rate limits of sessionless requests, and the binding of
	// list cursors (a cursor issued to one identity is refused for
	// another). It is not called for a direct handler call without a
	// request, whose caller is "". Nil means DefaultIdentity: the user
	// go-sdk's bearer-token middleware verified.
	Identity func(ctx context.Context, req mcp.Request) string
	// RateLimits caps reads and subscriptions per session; the zero value
	// sets none.
	RateLimits RateLimits
	// Audit configures the audit log of reads, subscriptions and denials;
	// the zero value logs them to Logger at Debug level.
	Audit AuditOptions
	// MaxURILength caps the URIs resources/read accepts, in bytes. Zero
	// means DefaultMaxURILength.
	MaxURILength int
	// NotFound chooses the error code for unknown resources; the default
	// follows the client's protocol version.
	NotFound NotFoundCode
	// Cache is the caching hint of every result unless an entry or a read
	// function sets its own.
	Cache Cache
	// MIME says what to do with read content that does not match its MIME
	// type; the default is MIMEStrict.
	MIME MIMEPolicy
	// Subscriptions configures resources/subscribe (see Registry.Subscribe).
	Subscriptions SubscriptionOptions
	// ListChangedDelay is how long changes are gathered before mounted
	// servers send notifications/resources/list_changed: a burst of any
	// number of changes within it yields one notification. Zero means
	// DefaultListChangedDelay.
	ListChangedDelay time.Duration
}

// A Registry holds static resources and resource templates and answers the
// MCP resource methods for them. It is safe for concurrent use; entries may
// be added and removed while it serves requests.
type Registry struct {
	opts Options

	static    cursor.Sorted[*staticEntry]   // by URI: the list order
	templates cursor.Sorted[*templateEntry] // by URI template: the list order

	mu        sync.RWMutex
	router    uritemplate.Router[*templateEntry] // the match order
	providers map[string]ListFunc                // by source name
	sources   []cursor.Source[*mcp.Resource]     // static, then providers by name; replaced, never changed

	cursors *cursor.Codec
	notify  notifier
	// reads and subscribes are the rate limits; nil when unlimited.
	reads, subscribes *limiter
	subs              *subscribe.Manager[*mcp.ServerSession]
	// watching holds the sessions whose end is awaited, to drop their
	// subscriptions.
	watchMu  sync.Mutex
	watching map[*mcp.ServerSession]bool
}

type staticEntry struct {
	res   *mcp.Resource
	read  ReadFunc
	cache *Cache
}

type templateEntry struct {
	tmpl       *mcp.ResourceTemplate
	compiled   *uritemplate.Template
	read       TemplateReadFunc
	cache      *Cache
	completers map[string]CompleteFunc
	safePaths  bool
	// listsInstances is set when the template's instances are a source of
	// resources/list, named by its URI template.
	listsInstances bool
}

// NewRegistry returns an empty Registry configured by opts, which may be
// nil. Negative sizes and durations in opts are treated as zero.
func NewRegistry(opts *Options) *Registry {
	r := &Registry{providers: make(map[string]ListFunc)}
	if opts != nil {
		r.opts = *opts
	}
	r.cursors = r.opts.Cursors
	if r.cursors == nil {
		r.cursors, _ = cursor.NewCodec(nil) // cannot fail without options
	}
	r.sources = []cursor.Source[*mcp.Resource]{{Name: "", Provider: index[*staticEntry, *mcp.Resource]{&r.static, (*staticEntry).describe}}}
	if r.opts.Logger == nil {
		r.opts.Logger = slog.Default()
	}
	if r.opts.Identity == nil {
		r.opts.Identity = DefaultIdentity
	}
	if r.opts.Audit.Logger == nil {
		r.opts.Audit.Logger = r.opts.Logger
	}
	if r.opts.Audit.Level == nil {
		r.opts.Audit.Level = slog.LevelDebug
	}
	if r.opts.Audit.DeniedLevel == nil {
		r.opts.Audit.DeniedLevel = r.opts.Audit.Level
	}
	r.reads = newLimiter(r.opts.RateLimits.Read)
	r.subscribes = newLimiter(r.opts.RateLimits.Subscribe)
	if r.opts.PageSize <= 0 {
		r.opts.PageSize = DefaultPageSize
	}
	r.opts.PageSize = min(r.opts.PageSize, MaxPageSize)
	if r.opts.MaxURILength <= 0 {
		r.opts.MaxURILength = DefaultMaxURILength
	}
	if r.opts.ListChangedDelay <= 0 {
		r.opts.ListChangedDelay = DefaultListChangedDelay
	}
	r.notify.delay = r.opts.ListChangedDelay
	so := r.opts.Subscriptions
	r.subs = subscribe.New[*mcp.ServerSession](&subscribe.Options{
		MaxPerSession: so.MaxPerSession,
		Window:        so.Window,
		Deliver:       r.deliverUpdate,
		OnWatch:       so.OnWatch,
		OnUnwatch:     so.OnUnwatch,
	})
	r.watching = make(map[*mcp.ServerSession]bool)
	r.router.MaxURILength = r.opts.MaxURILength
	return r
}

// An EntryOption configures one resource or template as it is added.
type EntryOption func(*entryConfig) error

type entryConfig struct {
	cache      *Cache
	completers map[string]CompleteFunc
	safePaths  bool
	instances  ListFunc
}

// WithCache sets the caching hint of one resource's or template's results,
// overriding [Options.Cache]. A read function that sets ttlMs or cacheScope
// on its result overrides both.
func WithCache(c Cache) EntryOption {
	return func(e *entryConfig) error {
		if c.TTL < 0 {
			return fmt.Errorf("negative cache TTL %v", c.TTL)
		}
		if c.Scope != "" && c.Scope != Public && c.Scope != Private {
			return fmt.Errorf("unknown cache scope %q", c.Scope)
		}
		e.cache = &c
		return nil
	}
}

// WithSafePaths makes a template refuse, as not found and before its read
// function runs, any URI that binds a variable to an unsafe path: one with
// a ".." segment, a NUL byte, a backslash, or a leading '/' (see
// uritemplate.CheckPath). Use it for templates whose variables become file
// paths, such as file:///{+path}. Add refuses it for static resources.
func WithSafePaths() EntryOption {
	return func(e *entryConfig) error {
		e.safePaths = true
		return nil
	}
}

// Add registers a static resource read by read, replacing any resource with
// the same URI. The registry keeps a copy of *res, so later changes to res
// have no effect; Add it again to change its metadata. A resource without
// a MIME type gets the one its URI's extension names, if any
// (mimetype.ByExtension).
//
// Add returns an error, and changes nothing, if res or read is nil, if
// res.URI is not an absolute RFC 3986 URI (see Options.MaxURILength), if
// res.Name is empty, or if an option is invalid.
func (r *Registry) Add(res *mcp.Resource, read ReadFunc, opts ...EntryOption) error {
	if res == nil || read == nil {
		return errors.New("resource: Add needs a resource and a read function")
	}
	if err := uri.Check(res.URI, r.opts.MaxURILength); err != nil {
		return fmt.Errorf("resource: Add %q: %w", res.URI, err)
	}
	if res.Name == "" {
		return fmt.Errorf("resource: Add %q: the resource has no name", res.URI)
	}
	cfg, err := applyOptions(opts)
	if err != nil {
		return fmt.Errorf("resource: Add %q: %w", res.URI, err)
	}
	if len(cfg.completers) > 0 || cfg.safePaths || cfg.instances != nil {
		return fmt.Errorf("resource: Add %q: completers, safe paths and instance lists belong to templates", res.URI)
	}
	copied := *res
	if copied.MIMEType == "" {
		copied.MIMEType = mimetype.ByExtension(copied.URI)
	}
	e := &staticEntry{res: &copied, read: read, cache: cfg.cache}

	r.static.Set(res.URI, e)
	r.notify.changed()
	return nil
}

// AddTemplate registers a resource template whose matches are read by read,
// replacing any template with the same URI template. A URI that no static
// resource has goes to the most specific template that matches it (see
// uritemplate.Router for the precedence). The registry keeps a copy of *t.
//
// AddTemplate returns an error, and changes nothing, if t or read is nil, if
// t.URITemplate does not parse as an RFC 6570 template starting with a
// literal scheme, if it would match exactly the URIs of another template
// (test://{a} and test://{b}), if t.Name is empty, or if an option is
// invalid (a completer for a variable the template does not have, say).
func (r *Registry) AddTemplate(t *mcp.ResourceTemplate, read TemplateReadFunc, opts ...EntryOption) error {
	if t == nil || read == nil {
		return errors.New("resource: AddTemplate needs a template and a read function")
	}
	compiled, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		return fmt.Errorf("resource: AddTemplate: %w", err)
	}
	// The literal start must itself begin a URI: a scheme such as "file:",
	// and no credentials.
	if err := uri.Check(compiled.Prefix(), r.opts.MaxURILength); err != nil {
		return fmt.Errorf("resource: AddTemplate %q: the template must start with a literal scheme such as \"file:\": %w", t.URITemplate, err)
	}
	if t.Name == "" {
		return fmt.Errorf("resource: AddTemplate %q: the template has no name", t.URITemplate)
	}
	cfg, err := applyOptions(opts)
	if err != nil {
		return fmt.Errorf("resource: AddTemplate %q: %w", t.URITemplate, err)
	}
	for name := range cfg.completers {
		if !slices.Contains(compiled.Varnames(), name) {
			return fmt.Errorf("resource: AddTemplate %q: completer for unknown variable %q", t.URITemplate, name)
		}
	}
	copied := *t
	if copied.MIMEType == "" {
		copied.MIMEType = mimetype.ByExtension(t.URITemplate) // file:///{name}.md
	}
	e := &templateEntry{tmpl: &copied, compiled: compiled, read: read, cache: cfg.cache,
		completers: cfg.completers, safePaths: cfg.safePaths, listsInstances: cfg.instances != nil}

	r.mu.Lock()
	old, _ := r.templates.Get(t.URITemplate)
	oldLists := old != nil && old.listsInstances
	if cfg.instances != nil && r.providers[t.URITemplate] != nil && !oldLists {
		r.mu.Unlock()
		return fmt.Errorf("resource: AddTemplate %q: a provider has that name", t.URITemplate)
	}
	if err := r.router.Add(compiled, e); err != nil {
		r.mu.Unlock()
		return fmt.Errorf("resource: AddTemplate: %w", err)
	}
	r.templates.Set(t.URITemplate, e)
	switch {
	case cfg.instances != nil:
		r.setSource(t.URITemplate, cfg.instances)
	case oldLists:
		r.setSource(t.URITemplate, nil)
	}
	r.mu.Unlock()
	r.notify.changed()
	return nil
}

func applyOptions(opts []EntryOption) (entryConfig, error) {
	var cfg entryConfig
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return entryConfig{}, err
		}
	}
	return cfg, nil
}

// Remove removes the static resources with the given URIs and reports how
// many there were. Unknown URIs are ignored.
func (r *Registry) Remove(uris ...string) int {
	n := 0
	for _, u := range uris {
		if r.static.Delete(u) {
			n++
		}
	}
	if n > 0 {
		r.notify.changed()
	}
	return n
}

// RemoveTemplates removes the templates with the given URI templates and
// reports how many there were. Unknown templates are ignored.
func (r *Registry) RemoveTemplates(uriTemplates ...string) int {
	n := 0
	r.mu.Lock()
	for _, t := range uriTemplates {
		e, ok := r.templates.Get(t)
		if !ok {
			continue
		}
		r.templates.Delete(t)
		r.router.Remove(t)
		if e.listsInstances {
			r.setSource(t, nil)
		}
		n++
	}
	r.mu.Unlock()
	if n > 0 {
		r.notify.changed()
	}
	return n
}

// Text returns a read function that serves the fixed string text, for
// r.Add(&mcp.Resource{…}, resource.Text("…")). The registry fills in the URI
// and the resource's MIME type. An empty text is sent as an empty blob,
// the one empty content go-sdk puts on the wire.
func Text(text string) ReadFunc {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
	}
}

// Bytes returns a read function that serves the fixed bytes data as a blob
// (base64 on the wire). The registry fills in the URI and the resource's
// MIME type. data must not be modified afterwards.
func Bytes(data []byte) ReadFunc {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Blob: data}}}, nil
	}
}
