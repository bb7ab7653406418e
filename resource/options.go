package resource

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/internal/uri"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultPageSize is the number of entries a resources/list or
// resources/templates/list page holds when [Options.PageSize] is zero.
const DefaultPageSize = 100

// MaxPageSize is the largest [Options.PageSize] NewRegistry accepts.
const MaxPageSize = 10_000

// DefaultScanBudget is the fewest entries one list page may look at,
// allowed or not, when [Options.ScanBudget] is zero: with an Authorizer, a
// page passes over the entries the caller may not see, up to this many
// (or ten pages' worth, if that is more).
const DefaultScanBudget = 10_000

// DefaultMaxReadBytes is the most bytes of content one resources/read may
// return when [Options.MaxReadBytes] is zero: 16 MiB.
const DefaultMaxReadBytes = 16 << 20

// DefaultMaxURILength is the longest URI, in bytes, that resources/read
// accepts when [Options.MaxURILength] is zero. Longer URIs are answered with
// -32602 before any lookup.
const DefaultMaxURILength = uri.DefaultMaxLength

// DefaultListChangedDelay is how long a Registry gathers changes before it
// asks mounted servers to send notifications/resources/list_changed, when
// [Options.ListChangedDelay] is zero.
const DefaultListChangedDelay = 50 * time.Millisecond

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
	// milliseconds. Zero means the result is stale at once; negative is
	// refused.
	TTL time.Duration
	// Scope is who may reuse it; empty means Public. Any other value than
	// "", Public and Private is refused.
	Scope CacheScope
}

// validate returns an error if c has a negative TTL or an unknown scope.
func (c Cache) validate() error {
	if c.TTL < 0 {
		return fmt.Errorf("negative cache TTL %v", c.TTL)
	}
	if c.Scope != "" && c.Scope != Public && c.Scope != Private {
		return fmt.Errorf("unknown cache scope %q", c.Scope)
	}
	return nil
}

func (c Cache) apply(dst *mcp.Cacheable) {
	dst.TTLMs = int(c.TTL / time.Millisecond)
	dst.CacheScope = string(cmp.Or(c.Scope, Public))
}

// NotFoundCode chooses the JSON-RPC error code for an unknown resource
// sent to a client before protocol 2026-07-28. A client on 2026-07-28 or
// later gets -32602 (SEP-2164) whatever it says: that version forbids
// -32002 (see CodeLegacyResourceNotFound). A request that carries no
// protocol version (a direct handler call without a session) counts as
// older. Per value:
//
//	                       before 2026-07-28   2026-07-28
//	NotFoundByVersion      -32002              -32602
//	NotFoundInvalidParams  -32602              -32602
type NotFoundCode int

const (
	// NotFoundByVersion, the default, answers -32002 to clients before
	// 2026-07-28, whose specification recommends it, and -32602 to later
	// ones.
	NotFoundByVersion NotFoundCode = iota
	// NotFoundInvalidParams answers -32602 to every client.
	NotFoundInvalidParams
)

// Options configures a Registry. The zero value is ready to use: every
// zero field means the default its comment names. NewRegistry refuses
// negative sizes and durations and unknown enumeration values rather than
// guess what was meant.
type Options struct {
	// Logger receives read-function failures and panics, with the session
	// ID and URI. Give it the logger your server logs to. Nil means
	// slog.Default().
	Logger *slog.Logger
	// PageSize is the most entries one list page holds, from 1 to
	// MaxPageSize. Zero means DefaultPageSize. Clients cannot raise it.
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
	// ScanBudget bounds the entries one list page looks at, listed or
	// not, when some are left out: those an Authorizer refuses (see
	// ListResources for what a caller can observe of them), and in
	// resources/list the resources of providers the registry would not
	// read (see ListFunc). It must be more than PageSize. Zero means
	// DefaultScanBudget, or ten pages' worth if that is more.
	ScanBudget int
	// Identity names the caller of a request, for Access.Identity, the
	// access log, rate limits of sessionless requests, and the binding of
	// list cursors (a cursor issued to one identity is refused for
	// another). It is not called for a direct handler call without a
	// request, whose caller is "". Nil means DefaultIdentity: the user
	// go-sdk's bearer-token middleware verified.
	Identity func(ctx context.Context, req mcp.Request) string
	// RateLimits caps reads and subscriptions per caller; the zero value
	// sets none.
	RateLimits RateLimits
	// RateKey names whose budget a request spends: requests with the same
	// key share one. identity is the caller's (see Identity); req is nil
	// for a direct call without a request. Nil means DefaultRateKey.
	RateKey func(ctx context.Context, req mcp.Request, identity string) string
	// AccessLog configures the access log of reads, subscriptions and
	// denials. The zero value logs them to Logger at Debug level.
	AccessLog AccessLogOptions
	// Observer, if not nil, is told of every call the registry answers
	// and of what it does outside them (notifications, subscriptions,
	// changes from other replicas), for telemetry: see Observer. Nil
	// observes nothing, at no cost.
	Observer Observer
	// MaxReadBytes caps the content one read returns: the bytes of its
	// texts and blobs, before blobs are base64-encoded for the wire. A
	// larger result is refused, before it is checked or encoded, with
	// -32603 naming the cap. WithMaxReadBytes sets another cap for one
	// entry. Zero means DefaultMaxReadBytes; negative is refused.
	MaxReadBytes int64
	// MaxURILength caps the URIs the registry accepts, in bytes. Zero
	// means DefaultMaxURILength.
	MaxURILength int
	// NotFound chooses the error code for unknown resources sent to
	// clients before 2026-07-28; later clients always get -32602. The
	// zero value, NotFoundByVersion, sends the older ones -32002.
	NotFound NotFoundCode
	// Cache is the caching hint of every result unless an entry or a read
	// function sets its own. NewRegistry refuses it as WithCache does.
	Cache Cache
	// MIME says what to do with read content that does not match its MIME
	// type; the zero value is MIMEStrict.
	MIME MIMEPolicy
	// Subscriptions configures resources/subscribe (see Registry.Subscribe).
	Subscriptions SubscriptionOptions
	// ListChangedDelay is how long changes are gathered before mounted
	// servers send notifications/resources/list_changed: a burst of any
	// number of changes within it yields one notification. Zero means
	// DefaultListChangedDelay.
	ListChangedDelay time.Duration
}

// withDefaults returns o checked, with every zero field that has a
// default set to it. Its error says which field is wrong and why.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	bad := func(field string, err error) { errs = append(errs, fmt.Errorf("Options.%s: %w", field, err)) }
	switch {
	case o.PageSize < 0 || o.PageSize > MaxPageSize:
		bad("PageSize", fmt.Errorf("%d is outside 1 to %d (0 means %d)", o.PageSize, MaxPageSize, DefaultPageSize))
	case o.PageSize == 0:
		o.PageSize = DefaultPageSize
	}
	switch {
	case o.ScanBudget < 0 || o.ScanBudget > 0 && o.ScanBudget <= o.PageSize:
		bad("ScanBudget", fmt.Errorf("%d must be more than the page size, %d (0 means %d)", o.ScanBudget, o.PageSize, DefaultScanBudget))
	case o.ScanBudget == 0:
		o.ScanBudget = max(DefaultScanBudget, 10*o.PageSize)
	}
	switch {
	case o.MaxReadBytes < 0:
		bad("MaxReadBytes", fmt.Errorf("negative size %d", o.MaxReadBytes))
	case o.MaxReadBytes == 0:
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	switch {
	case o.MaxURILength < 0:
		bad("MaxURILength", fmt.Errorf("negative length %d", o.MaxURILength))
	case o.MaxURILength == 0:
		o.MaxURILength = DefaultMaxURILength
	}
	switch {
	case o.ListChangedDelay < 0:
		bad("ListChangedDelay", fmt.Errorf("negative delay %v", o.ListChangedDelay))
	case o.ListChangedDelay == 0:
		o.ListChangedDelay = DefaultListChangedDelay
	}
	if o.NotFound < NotFoundByVersion || o.NotFound > NotFoundInvalidParams {
		bad("NotFound", fmt.Errorf("unknown NotFoundCode %d", o.NotFound))
	}
	if o.MIME < MIMEStrict || o.MIME > MIMEOff {
		bad("MIME", fmt.Errorf("unknown MIMEPolicy %d", o.MIME))
	}
	if err := o.Cache.validate(); err != nil {
		bad("Cache", err)
	}
	if err := o.RateLimits.Read.validate(); err != nil {
		bad("RateLimits.Read", err)
	}
	if err := o.RateLimits.Subscribe.validate(); err != nil {
		bad("RateLimits.Subscribe", err)
	}
	o.capsWithDefaults(bad)
	if err := errors.Join(errs...); err != nil {
		return Options{}, err
	}
	o.Logger = cmp.Or(o.Logger, slog.Default())
	if o.Identity == nil {
		o.Identity = DefaultIdentity
	}
	if o.RateKey == nil {
		o.RateKey = DefaultRateKey
	}
	o.AccessLog.Logger = cmp.Or(o.AccessLog.Logger, o.Logger)
	if o.AccessLog.Level == nil {
		o.AccessLog.Level = slog.LevelDebug
	}
	if o.AccessLog.DeniedLevel == nil {
		o.AccessLog.DeniedLevel = o.AccessLog.Level
	}
	return o, nil
}
