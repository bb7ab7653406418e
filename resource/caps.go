package resource

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpres/mcpres/internal/burst"
	"github.com/mcpres/mcpres/resource/internal/delivery"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The caps below bound what callers can make the registry hold, so that
// no client gets round the cap per session by opening more sessions or
// listen streams. A caller is who Options.RateKey names, as for rate
// limits. A caller named "" (a stdio or in-memory client, the only one
// on its connection) is held only by the total. Each cap is set in
// SubscriptionOptions; subscribe.NoLimit lifts it, and a negative one is
// refused. The HTTP edge (package serve) caps sessions and listen
// streams.
//
// Caps by count bound what each subscription costs whatever its URI;
// caps by bytes bound its URI, counted as len(uri) for each subscription
// (a URI watched by many is stored once, but each listen request holds
// its own copy while it lasts). A URI may be Options.MaxURILength long,
// so that without them 10,000 subscriptions of one caller could name
// 40 MB.
const (
	// DefaultMaxSubscriptionsPerCaller is SubscriptionOptions.MaxPerCaller's
	// default: the subscriptions one caller holds across all its sessions
	// and 2026-07-28 listen streams.
	DefaultMaxSubscriptionsPerCaller = 10_000
	// DefaultMaxSubscriptions is SubscriptionOptions.Max's default: the
	// subscriptions a registry holds in all.
	DefaultMaxSubscriptions = 100_000
	// DefaultMaxSubscriptionBytesPerCaller is
	// SubscriptionOptions.MaxBytesPerCaller's default: the bytes of the
	// URIs one caller's subscriptions name, 1 MiB. The count cap binds
	// first while they average under 104 bytes.
	DefaultMaxSubscriptionBytesPerCaller = 1 << 20
	// DefaultMaxSubscriptionBytes is SubscriptionOptions.MaxBytes's
	// default: the bytes of the URIs all subscriptions name, 8 MiB. The
	// count cap binds first while they average under 83 bytes. A server
	// holds about four bytes of heap for each of them, so that a full
	// budget of long URIs stays within 64 MiB.
	DefaultMaxSubscriptionBytes = 8 << 20
)

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
		{"Subscriptions.MaxBytesPerCaller", &o.Subscriptions.MaxBytesPerCaller, DefaultMaxSubscriptionBytesPerCaller},
		{"Subscriptions.MaxBytes", &o.Subscriptions.MaxBytes, DefaultMaxSubscriptionBytes},
	} {
		switch {
		case *c.value < 0:
			bad(c.field, fmt.Errorf("negative cap %d (subscribe.NoLimit sets none)", *c.value))
		case *c.value == 0:
			*c.value = c.def
		}
	}
}

// CallerOf names the caller of req, served in ctx, as the registry's rate
// limits and caps do: Options.RateKey of Options.Identity. The HTTP edge
// (package serve) names callers with it, so that its caps count a caller
// as the registry does.
func (r *Registry) CallerOf(ctx context.Context, req mcp.Request) string {
	return r.opts.RateKey(ctx, req, r.opts.Identity(ctx, req))
}

// capped logs, at Warn, that a request of caller was refused for the cap
// named kind, once per burst of such refusals (see package burst): a
// client hammering a cap writes a line a burst, not one a request.
func (r *Registry) capped(ctx context.Context, kind, caller string, max int) {
	logCapped(ctx, r.opts.Logger, &r.refusals, kind, caller, max)
}

// shed logs, at Warn, that the session or listen stream victim of
// victimCaller was ended at a total of subscriptions to make room for
// newcomer, once per burst: the client of victim sees it end, and the
// log says why.
func (r *Registry) shed(victim delivery.Key, victimCaller, newcomer string) {
	begins, unreported := r.refusals.Refused("shed subscriptions", time.Now())
	if !begins {
		return
	}
	r.opts.Logger.LogAttrs(context.Background(), slog.LevelWarn, "mcpres: ended a session's subscriptions to make room at a total",
		slog.String("session", victim.ID()), slog.String("caller", victimCaller), slog.String("for", newcomer),
		slog.Int("moreInPreviousBurst", unreported), slog.String("note", "one line per burst"))
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
