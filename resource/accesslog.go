package resource

import (
	"context"
	"log/slog"
	"time"

	"github.com/mcpres/mcpres/resource/internal/delivery"
)

// AccessLogOptions configures a registry's access log. The zero value
// logs to Options.Logger at Debug level, so the records appear as soon as
// that logger shows Debug. To silence them, give a Logger with
// slog.DiscardHandler, or a Level above what the logger shows.
//
// The registry writes one record, with the message "resource access", for
// every resources/read and every subscription (resources/subscribe, or one
// URI of a 2026-07-28 subscriptions/listen), whatever came of it. It also
// writes one for every completion an Authorizer denied, and for every list
// or completion from which it withheld entries. A record has these
// attributes:
//
//   - op: "read", "subscribe", "list" or "complete";
//   - uri: the URI read or subscribed to (for "list", the list method; for
//     "complete", the URI template);
//   - session_id and identity (Options.Identity), either possibly "";
//   - decision: a [Decision]; for DecisionDenied, the Authorizer's error
//     as reason; for DecisionFiltered, the count of entries withheld as
//     withheld;
//   - duration: how long the registry took to answer.
type AccessLogOptions struct {
	// Logger receives the records; nil means Options.Logger.
	Logger *slog.Logger
	// Level is the records' level; nil means slog.LevelDebug.
	Level slog.Leveler
	// DeniedLevel is the level of the records of refusals: decisions
	// "denied", "filtered" and "limited". Nil means Level. Set it to
	// slog.LevelInfo or higher to see refusals without every allowed read.
	DeniedLevel slog.Leveler
}

// accessLogged reports whether a call of op that came to d gets an access
// record: every read and subscription does; a list or completion only
// when the Authorizer denied or withheld something.
func accessLogged(op Operation, d Decision) bool {
	switch op {
	case OpRead, OpSubscribe:
		return true
	}
	return d == DecisionDenied || d == DecisionFiltered
}

// accessLogStart returns the time to measure an access record's duration
// from, or the zero time if no record could be written at the configured
// levels.
func (r *Registry) accessLogStart(ctx context.Context) time.Time {
	a := &r.opts.AccessLog
	level, denied := a.Level.Level(), a.DeniedLevel.Level()
	if !a.Logger.Enabled(ctx, level) && (denied == level || !a.Logger.Enabled(ctx, denied)) {
		return time.Time{}
	}
	return time.Now()
}

// logAccess writes the access record of call c, which came to d (f says
// why, if it failed).
func (r *Registry) logAccess(c *call, d Decision, f *failure) {
	a := &r.opts.AccessLog
	level := a.Level.Level()
	if d.refused() {
		level = a.DeniedLevel.Level()
	}
	if !a.Logger.Enabled(c.ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("op", string(c.op)),
		slog.String("uri", c.target),
		slog.String("session_id", sessionID(c.session)),
		slog.String("identity", c.identity),
		slog.String("decision", string(d)),
		slog.Duration("duration", time.Since(c.start)))
	if d == DecisionDenied && f.cause != nil {
		attrs = append(attrs, slog.String("reason", f.cause.Error()))
	}
	if c.withheld > 0 {
		attrs = append(attrs, slog.Int("withheld", c.withheld))
	}
	a.Logger.LogAttrs(c.ctx, level, "resource access", attrs...)
}

// sessionID is the ID of session s, for logs: "" for none.
func sessionID(s delivery.Key) string { return s.ID() }

// sessionIDIn is the ID of session s, or, if s is zero, of the session
// of the caller ctx names (WithCaller), for logs: "" for none.
func sessionIDIn(ctx context.Context, s delivery.Key) string {
	if s.IsZero() {
		if c := callerOf(ctx); c != nil && c.Session != nil {
			return c.Session.ID()
		}
	}
	return s.ID()
}
