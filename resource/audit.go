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
//     or "failed", a read function's failure;
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

// The decisions an audit record reports.
const (
	decisionAllowed  = "allowed"
	decisionDenied   = "denied"
	decisionFiltered = "filtered"
	decisionNotFound = "not_found"
	decisionInvalid  = "invalid"
	decisionLimited  = "limited"
	decisionFailed   = "failed"
)

// A decision is what came of a request, for the audit log.
type decision struct {
	what     string
	reason   error // the Authorizer's, for a denial
	withheld int   // entries left out, for a filtered list
}

// auditing reports whether audit records may be written, and if so
// returns the time to measure their duration from.
func (r *Registry) auditing(ctx context.Context) (time.Time, bool) {
	a := &r.opts.Audit
	level, denied := a.Level.Level(), a.DeniedLevel.Level()
	if !a.Logger.Enabled(ctx, level) && (denied == level || !a.Logger.Enabled(ctx, denied)) {
		return time.Time{}, false
	}
	return time.Now(), true
}

// audit writes the record of one access to uri (or list method, or
// template) by op, decided d, which started at start.
func (r *Registry) audit(ctx context.Context, op Operation, uri string, session *mcp.ServerSession, identity string, d decision, start time.Time) {
	a := &r.opts.Audit
	level := a.Level.Level()
	switch d.what {
	case decisionDenied, decisionFiltered, decisionLimited:
		level = a.DeniedLevel.Level()
	}
	if !a.Logger.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs,
		slog.String("op", string(op)),
		slog.String("uri", uri),
		slog.String("session_id", sessionID(session)),
		slog.String("identity", identity),
		slog.String("decision", d.what),
		slog.Duration("duration", time.Since(start)))
	if d.reason != nil {
		attrs = append(attrs, slog.String("reason", d.reason.Error()))
	}
	if d.withheld > 0 {
		attrs = append(attrs, slog.Int("withheld", d.withheld))
	}
	a.Logger.LogAttrs(ctx, level, "resource access", attrs...)
}
