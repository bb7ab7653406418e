package resource

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AuditOptions configures a registry's audit log. The zero value logs to
// Options.Logger at Debug level, so that the records appear as soon as
// that logger shows Debug; to silence them, give a Logger with
// slog.DiscardHandler, or a Level above what the logger shows.
//
// The registry writes one record, with the message "resource access", for
// every resources/read and every subscription (resources/subscribe, or one
// URI of a 2026-07-28 subscriptions/listen), whatever came of it; for
// every completion an Authorizer denied; and for every list or completion
// from which it withheld entries. A record has these attributes:
//
//   - op: "read", "subscribe", "list" or "complete";
//   - uri: the URI read or subscribed to (for "list", the list method; for
//     "complete", the URI template);
//   - session_id and identity (Options.Identity), either possibly "";
//   - decision: "allowed"; "denied" by the Authorizer, with its error as
//     reason; "filtered", a list or completion with withheld entries,
//     counted as withheld; "not_found"; "invalid" (a malformed URI, or a
//     subscription over the session's limit); "limited" by RateLimits;
//     "failed", a read function's failure; or "closed", a request to a
//     closed registry;
//   - duration: how long the registry took to answer.
type AuditOptions struct {
	// Logger receives the records; nil means Options.Logger.
	Logger *slog.Logger
	// Level is the records' level; nil means slog.LevelDebug.
	Level slog.Leveler
	// DeniedLevel is the level of the records of refusals: decisions
	// "denied", "filtered" and "limited". Nil means Level. Set it to
	// slog.LevelInfo or higher to see refusals without every allowed read.
	DeniedLevel slog.Leveler
}

// audited reports whether a call of op that came to o gets an audit
// record: every read and subscription does; a list or completion only
// when the Authorizer denied or withheld something.
func audited(op Operation, o outcome) bool {
	switch op {
	case OpRead, OpSubscribe:
		return true
	}
	return o == outcomeDenied || o == outcomeFiltered
}

// auditStart returns the time to measure an audit record's duration from,
// or the zero time if no record could be written at the configured
// levels.
func (r *Registry) auditStart(ctx context.Context) time.Time {
	a := &r.opts.Audit
	level, denied := a.Level.Level(), a.DeniedLevel.Level()
	if !a.Logger.Enabled(ctx, level) && (denied == level || !a.Logger.Enabled(ctx, denied)) {
		return time.Time{}
	}
	return time.Now()
}

// audit writes the record of call c, which came to o (f says why, if it
// failed).
func (r *Registry) audit(c *call, o outcome, f *failure) {
	a := &r.opts.Audit
	level := a.Level.Level()
	switch o {
	case outcomeDenied, outcomeFiltered, outcomeLimited:
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
		slog.String("decision", o.String()),
		slog.Duration("duration", time.Since(c.start)))
	if o == outcomeDenied && f.cause != nil {
		attrs = append(attrs, slog.String("reason", f.cause.Error()))
	}
	if c.withheld > 0 {
		attrs = append(attrs, slog.Int("withheld", c.withheld))
	}
	a.Logger.LogAttrs(c.ctx, level, "resource access", attrs...)
}

func sessionID(s *mcp.ServerSession) string {
	if s == nil {
		return ""
	}
	return s.ID()
}
