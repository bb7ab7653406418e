package resource

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpres/mcpres/resource/internal/delivery"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the one place that knows JSON-RPC codes and messages: the
// steps of the pipeline return a *failure, and end turns it into the
// answer, the log record and the access record.

// Besides JSON-RPC's own codes (-32602 Invalid params and -32603 Internal
// error), the registry sends the two below. What each protocol version
// allows, quoted without markup:
//
//   - 2025-06-18 and 2025-11-25 have no section on error codes, and
//     JSON-RPC leaves -32000…-32099 to implementations. Both recommend
//     -32002 for a resource not found (see CodeLegacyResourceNotFound);
//     2025-11-25's schema adds -32042, under "Implementation-specific
//     JSON-RPC error codes [-32000, -32099]".
//   - 2026-07-28 (basic, "Error Codes") splits that range: "-32000 to
//     -32019 — legacy. […] New codes MUST NOT be allocated in this
//     sub-range, and new implementations SHOULD NOT use codes from this
//     sub-range at all." and "-32020 to -32099 — reserved for the MCP
//     specification. […] Implementations MUST NOT emit any code from this
//     sub-range that is not defined by this specification". It defines
//     -32020, -32021 and -32022 there. Other codes go elsewhere: "New
//     error codes for purposes not defined by this specification SHOULD
//     be allocated outside the JSON-RPC reserved range (-32768 to
//     -32000); the remainder of the integer space is available for
//     application-defined errors."
//
// A *jsonrpc.Error that a user's function returns goes out as it is, its
// code the function's choice, except -32002, which is answered as not
// found (see userError). codes_test.go provokes every refusal of the
// registry in each version and checks its code against these rules.

// CodeLegacyResourceNotFound is -32002, "resource not found" before
// protocol 2026-07-28. The registry sends it only to older clients, as
// Options.NotFound says (see NotFoundCode).
//
// 2025-11-25 (server/resources, "Error Handling"): "Servers SHOULD return
// standard JSON-RPC errors for common failure cases: Resource not found:
// -32002".
//
// 2026-07-28 (basic, "Error Codes"): "Implementations of this protocol
// version MUST NOT emit these codes: -32002 — resource not found
// (2025-11-25 and earlier; replaced by -32602)."
const CodeLegacyResourceNotFound = -32002

// CodeRateLimited is the code of a request refused by Options.RateLimits,
// in every protocol version: 429, as HTTP's Too Many Requests. No version
// defines a code for this. 429 lies outside -32768…-32000, as 2026-07-28
// wants of a code it does not define. It was -32029, which 2026-07-28
// reserves: "-32020 to -32099 — reserved for the MCP specification. […]
// Implementations MUST NOT emit any code from this sub-range that is not
// defined by this specification".
const CodeRateLimited = 429

// A failure is why a step stopped a call. Its fields other than decision
// are set as the decision needs them.
type failure struct {
	decision Decision
	message  string         // DecisionInvalid: what the client is told; DecisionFailed: the log message
	cause    error          // DecisionDenied: the Authorizer's reason; DecisionFailed: the error logged; DecisionInvalid: why, logged at Debug
	wait     time.Duration  // DecisionLimited: until the budget allows another
	size     int64          // DecisionTooLarge: the result's size
	limit    int64          // DecisionTooLarge: the cap
	attrs    []slog.Attr    // DecisionFailed: more for the log record
	reply    *jsonrpc.Error // DecisionFailed: a protocol error the user's function chose, sent as is and not logged
}

func (f *failure) Error() string {
	msg := cmp.Or(f.message, string(f.decision))
	if f.cause != nil {
		return msg + ": " + f.cause.Error()
	}
	return msg
}

func (f *failure) Unwrap() error { return f.cause }

var (
	errNotFound = &failure{decision: DecisionNotFound}
	errClosed   = &failure{decision: DecisionClosed}
)

func invalid(format string, args ...any) *failure {
	return &failure{decision: DecisionInvalid, message: fmt.Sprintf(format, args...)}
}

func denied(reason error) *failure { return &failure{decision: DecisionDenied, cause: reason} }

func limited(wait time.Duration) *failure { return &failure{decision: DecisionLimited, wait: wait} }

func tooLarge(size, limit int64) *failure {
	return &failure{decision: DecisionTooLarge, size: size, limit: limit}
}

// failed is a failure of the server's own code (a read function, a
// provider, a completer), logged as msg with cause and attrs.
func failed(msg string, cause error, attrs ...slog.Attr) *failure {
	return &failure{decision: DecisionFailed, message: msg, cause: cause, attrs: attrs}
}

// end closes c, which err (nil, or a step's *failure) ended: it writes the
// access record, logs a failure, tells the Observer, and returns the error to answer with,
// nil if there is none. An err that is not a *failure is taken as a
// failure of the server's own code.
func (r *Registry) end(c *call, err error) error {
	o := DecisionAllowed
	f, isFailure := err.(*failure) // the steps return them unwrapped
	switch {
	case err == nil:
		if c.withheld > 0 {
			o = DecisionFiltered
		}
	case isFailure:
		o = f.decision
	default:
		f = failed("resource request failed", err)
		o = DecisionFailed
	}
	if !c.start.IsZero() && accessLogged(c.op, o) {
		r.logAccess(c, o, f)
	}
	if f == nil {
		if c.obs != nil {
			r.observeEnd(c, o, nil)
		}
		return nil
	}
	switch {
	case o == DecisionFailed && f.reply == nil:
		r.logFailure(c, f)
	case o == DecisionInvalid && f.cause != nil:
		r.opts.Logger.LogAttrs(c.ctx, slog.LevelDebug, "resource request refused: "+f.message,
			slog.String("method", c.method), slog.String("session_id", sessionID(c.session)),
			slog.String("identity", c.identity), slog.Any("reason", f.cause))
	case o == DecisionTooLarge:
		r.opts.Logger.LogAttrs(c.ctx, slog.LevelError, "resource read is larger than its cap",
			slog.String("uri", c.target), slog.String("session_id", sessionID(c.session)),
			slog.Int64("size", f.size), slog.Int64("cap", f.limit))
	}
	answer := r.reply(c, f)
	if c.obs != nil {
		r.observeEnd(c, o, answer)
	}
	return answer
}

// errorCode is the JSON-RPC code of err, if it is a *jsonrpc.Error.
func errorCode(err error) (int64, bool) {
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return jerr.Code, true
	}
	return 0, false
}

// reply is the JSON-RPC error a client is sent for f, which ended c.
func (r *Registry) reply(c *call, f *failure) error {
	switch f.decision {
	case DecisionNotFound, DecisionDenied: // alike, so that a client cannot tell them apart
		switch c.op {
		case OpRead:
			return r.notFoundError(c.protocolVersion(), c.target)
		case OpSubscribe:
			return invalidParams("cannot subscribe to %q: no such resource", c.target)
		default:
			return invalidParams("unknown resource template %q", c.target)
		}
	case DecisionInvalid:
		return invalidParams("%s", f.message)
	case DecisionLimited:
		return rateLimitedError(c.method, f.wait)
	case DecisionTooLarge:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("Resource too large: over the read cap of %d bytes", f.limit)}
	case DecisionClosed:
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Resource registry closed"}
	}
	if f.reply != nil {
		return f.reply
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
}

// notFoundError answers an unknown or missing resource: -32602, or -32002
// for a client before protocol 2026-07-28 unless Options.NotFound is
// NotFoundInvalidParams; message "Resource not found", data {"uri": …}.
// A 2026-07-28 client never gets -32002, which its version forbids.
func (r *Registry) notFoundError(version, u string) error {
	code := int64(jsonrpc.CodeInvalidParams)
	if r.opts.NotFound != NotFoundInvalidParams && !notFoundIsInvalidParams(version) {
		code = CodeLegacyResourceNotFound
	}
	data, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{u})
	return &jsonrpc.Error{Code: code, Message: "Resource not found", Data: data}
}

// protocolVersion is the protocol version of c's request: as the adapter
// that made it said (WithCaller), else as go-sdk says; "" if it has none.
func (c *call) protocolVersion() string {
	if c.caller != nil {
		return c.caller.ProtocolVersion
	}
	return protocolVersion(c.req)
}

// protocolVersion is the protocol version of req, "" if it has none.
func protocolVersion(req mcp.Request) string {
	if v, ok := req.(interface{ ProtocolVersion() string }); ok {
		return v.ProtocolVersion()
	}
	return ""
}

// rateLimitedError answers a request of method refused by a rate limit:
// CodeRateLimited, message "Rate limit exceeded", data {"method": …,
// "retryAfterMs": …}, wait rounded up to at least 1 ms.
func rateLimitedError(method string, wait time.Duration) error {
	data, _ := json.Marshal(struct {
		Method       string `json:"method"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	}{method, max(1, (wait + time.Millisecond - 1).Milliseconds())})
	return &jsonrpc.Error{Code: CodeRateLimited, Message: "Rate limit exceeded", Data: data}
}

// invalidParams answers a request the client got wrong, saying why.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// logFailure logs f, a failure of the server's own code, at Error, with
// what c was doing.
func (r *Registry) logFailure(c *call, f *failure) {
	attrs := make([]slog.Attr, 0, len(f.attrs)+4)
	attrs = append(attrs, slog.String("method", c.method), slog.String("uri", c.target),
		slog.String("session_id", sessionID(c.session)))
	if f.cause != nil {
		attrs = append(attrs, slog.Any("error", f.cause))
	}
	attrs = append(attrs, f.attrs...)
	r.opts.Logger.LogAttrs(c.ctx, slog.LevelError, f.message, attrs...)
}

// logAuthorizerFailure logs an Authorizer that failed (or panicked) rather
// than deny with ErrDenied.
func (r *Registry) logAuthorizerFailure(ctx context.Context, session delivery.Key, a Access, err error) {
	if errors.Is(err, ErrDenied) {
		return
	}
	r.opts.Logger.LogAttrs(ctx, slog.LevelError, "resource authorizer failed; access denied",
		slog.String("op", string(a.Op)), slog.String("uri", cmp.Or(a.URI, a.Template)),
		slog.String("identity", a.Identity), slog.String("session_id", sessionIDIn(ctx, session)),
		slog.Any("error", err))
}

// userError is the failure a user's function (a read function, a
// completer) reported with err: not found for ErrNotFound or go-sdk's own
// not-found error; a *jsonrpc.Error the function chose, sent as it is;
// anything else a failure logged as msg.
func userError(msg string, err error) *failure {
	if errors.Is(err, ErrNotFound) {
		return errNotFound
	}
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		if isSDKNotFound(jerr) {
			return errNotFound
		}
		return &failure{decision: DecisionFailed, reply: jerr}
	}
	return failed(msg, err)
}
