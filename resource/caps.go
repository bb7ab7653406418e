package resource

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/burst"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The caps below bound what callers can make the server hold, so that no
// client gets round a per-session cap by opening more sessions or listen
// streams. A caller is who Options.RateKey names, as for rate limits: by
// default the caller's identity, else the client's address, which
// NewHTTPHandler records for every request (behind a proxy, wrap with
// WithClientAddress naming the proxy's header, or every client is the
// proxy). A caller named "" (a stdio or in-memory client, the only one
// on its connection) is held only by the totals. Each cap is set in
// Options; subscribe.NoLimit lifts it, and a negative one is refused.
const (
	// DefaultMaxSubscriptionsPerCaller is SubscriptionOptions.MaxPerCaller's
	// default: the subscriptions one caller holds across all its sessions
	// and 2026-07-28 listen streams.
	DefaultMaxSubscriptionsPerCaller = 10_000
	// DefaultMaxSubscriptions is SubscriptionOptions.Max's default: the
	// subscriptions a registry holds in all.
	DefaultMaxSubscriptions = 100_000
	// DefaultMaxListensPerCaller is SubscriptionOptions.MaxListensPerCaller's
	// default: the 2026-07-28 subscriptions/listen streams one caller
	// holds open at once.
	DefaultMaxListensPerCaller = 16
	// DefaultMaxSessionsPerCaller is SessionOptions.MaxPerCaller's default:
	// the stateful HTTP sessions (clients before 2026-07-28) one caller
	// holds open at once.
	DefaultMaxSessionsPerCaller = 100
	// DefaultMaxSessions is SessionOptions.Max's default: the stateful HTTP
	// sessions NewHTTPHandler holds open at once for a registry's server.
	DefaultMaxSessions = 10_000
)

// SessionOptions caps the stateful sessions that NewHTTPHandler opens for
// clients before protocol 2026-07-28 (2026-07-28 clients have none). A
// request that would open one more than a cap allows gets HTTP 429 (a
// caller's cap) or 503 (the total), with Retry-After and a JSON-RPC error
// of code CodeRateLimited, and opens nothing. A session counts from its
// initialize until it ends: the client deletes it, SessionTimeout passes,
// or the server closes it. The zero value means the defaults.
type SessionOptions struct {
	// MaxPerCaller caps one caller's open sessions. Zero means
	// DefaultMaxSessionsPerCaller.
	MaxPerCaller int
	// Max caps the open sessions of every caller together. Zero means
	// DefaultMaxSessions.
	Max int
}

// capsWithDefaults sets each cap of o left zero to its default, and
// reports a negative one to bad.
func (o *Options) capsWithDefaults(bad func(field string, err error)) {
	for _, c := range []struct {
		field string
		value *int
		def   int
	}{
		{"Subscriptions.MaxPerCaller", &o.Subscriptions.MaxPerCaller, DefaultMaxSubscriptionsPerCaller},
		{"Subscriptions.Max", &o.Subscriptions.Max, DefaultMaxSubscriptions},
		{"Subscriptions.MaxListensPerCaller", &o.Subscriptions.MaxListensPerCaller, DefaultMaxListensPerCaller},
		{"Sessions.MaxPerCaller", &o.Sessions.MaxPerCaller, DefaultMaxSessionsPerCaller},
		{"Sessions.Max", &o.Sessions.Max, DefaultMaxSessions},
	} {
		switch {
		case *c.value < 0:
			bad(c.field, fmt.Errorf("negative cap %d (subscribe.NoLimit sets none)", *c.value))
		case *c.value == 0:
			*c.value = c.def
		}
	}
}

// A callerCount counts what each caller holds of one kind (listen
// streams), for a cap per caller.
type callerCount struct {
	mu sync.Mutex
	n  map[string]int
}

// take counts one more for caller and returns true, unless caller holds
// max already; the caller "" is not counted.
func (c *callerCount) take(caller string, max int) bool {
	if caller == "" {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller] >= max {
		return false
	}
	if c.n == nil {
		c.n = make(map[string]int)
	}
	c.n[caller]++
	return true
}

// give counts one fewer for caller, which take counted.
func (c *callerCount) give(caller string) {
	if caller == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[caller]--; c.n[caller] <= 0 {
		delete(c.n, caller)
	}
}

// callerOf names the caller of req, as rate limits do.
func (r *Registry) callerOf(ctx context.Context, req mcp.Request) string {
	return r.opts.RateKey(ctx, req, r.opts.Identity(ctx, req))
}

// cappedListen runs a 2026-07-28 subscriptions/listen (next) under the cap of
// listen streams per caller: one over it is refused with -32602, and
// opens nothing.
func (r *Registry) cappedListen(ctx context.Context, method string, req *mcp.SubscriptionsListenRequest, next mcp.MethodHandler) (mcp.Result, error) {
	caller := r.callerOf(ctx, req)
	max := r.opts.Subscriptions.MaxListensPerCaller
	if !r.listens.take(caller, max) {
		r.capped(ctx, "listen streams per caller", caller, max)
		return nil, invalidParams("cannot listen: this caller holds %d subscriptions/listen streams open, the most it may; close one first", max)
	}
	defer r.listens.give(caller)
	return next(ctx, method, req)
}

// capped logs, at Warn, that a request of caller was refused for the cap
// named kind, once per burst of such refusals (see package burst): a
// client hammering a cap writes a line a burst, not one a request.
func (r *Registry) capped(ctx context.Context, kind, caller string, max int) {
	logCapped(ctx, r.opts.Logger, &r.refusals, kind, caller, max)
}

// logCapped is capped for a logger and counter of one's own.
func logCapped(ctx context.Context, logger *slog.Logger, refusals *burst.Counter, kind, caller string, max int) {
	begins, unreported := refusals.Refused(kind, time.Now())
	if !begins {
		return
	}
	logger.LogAttrs(ctx, slog.LevelWarn, "mcpres: refused over the cap of "+kind,
		slog.Int("cap", max), slog.String("caller", caller),
		slog.Int("moreInPreviousBurst", unreported),
		slog.String("note", "one line per burst of refusals of this cap"))
}
