package resource

import (
	"context"
	"errors"
	"strings"

	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Operation is what a request asks to do with a resource or template.
type Operation string

// The operations an Authorizer decides.
const (
	// OpList is showing a resource in resources/list, or a template in
	// resources/templates/list.
	OpList Operation = "list"
	// OpRead is resources/read.
	OpRead Operation = "read"
	// OpSubscribe is resources/subscribe, or one resource subscription of
	// a 2026-07-28 subscriptions/listen.
	OpSubscribe Operation = "subscribe"
	// OpComplete is completion/complete of a template variable.
	OpComplete Operation = "complete"
)

// An Access is one thing a request asks to do, for an Authorizer to
// decide.
type Access struct {
	// Op is what is asked.
	Op Operation
	// URI is the resource concerned: the one read, subscribed to or
	// listed. It is empty for a template (resources/templates/list and
	// completion/complete).
	URI string
	// Template is the URI template concerned: the registered template URI
	// resolves to (empty for a static resource, or a listed resource no
	// template matches), the listed template, or the completed one.
	Template string
	// Vars holds the variables Template matched in URI, percent-decoded,
	// as the read function gets them. It is zero for a static resource
	// and for completion.
	Vars Vars
	// Argument is, for completion, the name of the variable being
	// completed; "" otherwise.
	Argument string
	// Arguments holds, for completion, the variables the user has already
	// chosen (the request's context.arguments) and, when Proposed is set,
	// the proposed value under Argument. It is nil otherwise.
	Arguments map[string]string
	// Proposed is set when the registry asks about one value a completer
	// proposed, rather than about the completion request itself.
	Proposed bool
	// Identity is who is asking, as Options.Identity names them; "" for
	// an anonymous caller.
	Identity string
	// Request is the request being answered: it carries the session and,
	// behind go-sdk's bearer-token middleware, the token (see TokenInfo).
	// A subscription of a 2026-07-28 listen carries the listen's token.
	// It is nil in a direct handler call without a request.
	Request mcp.Request
}

// Var returns the variable name's value: as matched in URI, else as
// chosen or proposed in a completion; "" if neither binds it. One rule
// over Var covers every operation on a template, such as "collection
// must be one the caller may see".
//
// Var hides nothing the read function gets. A non-exploded variable such
// as {team} matches a single value only (package uritemplate refuses
// t://teams/red,blue/notes for t://teams/{team}/notes), so Var is exactly
// what vars.Get returns to the read function. An exploded variable, such
// as {/path*}, may match a list: Var then returns its items joined by
// commas, which no check written for one value mistakes for one of them;
// check each item with a.Vars.List(name).
func (a Access) Var(name string) string {
	if v, ok := a.Vars.Lookup(name); ok {
		if v.Kind == uritemplate.String {
			return v.Items[0]
		}
		return strings.Join(v.Items, ",")
	}
	return a.Arguments[name]
}

// TokenInfo returns the verified bearer token of the request, which
// go-sdk's auth.RequireBearerToken middleware attaches on streamable HTTP;
// nil if there is none.
func (a Access) TokenInfo() *auth.TokenInfo {
	return tokenInfo(a.Request)
}

// Session returns the go-sdk session of the request; nil if there is
// none, or if the request came through an adapter for another server
// (see WithCaller).
func (a Access) Session() *mcp.ServerSession {
	if a.Request == nil {
		return nil
	}
	s, _ := a.Request.GetSession().(*mcp.ServerSession)
	return s
}

// An Authorizer decides whether a request may do what a describes: nil
// allows it, an error denies it. Return ErrDenied, or wrap it, for an
// ordinary denial; any other error is taken as the Authorizer failing: it
// denies as well (the registry fails closed) and is logged at Error level.
// A panic is treated as a failure. The error never reaches the client.
//
// The registry asks before any read function or completer runs:
//
//   - resources/list asks, with OpList, about each resource it scans,
//     and passes over those denied, filling the page with allowed ones
//     within Options.ScanBudget (see ListResources).
//     resources/templates/list does the same for templates.
//   - resources/read and resources/subscribe ask with OpRead and
//     OpSubscribe; a denial is answered exactly as an unknown resource
//     is, so a client cannot tell what exists from what it may not see.
//   - completion/complete asks once with OpComplete and the chosen
//     arguments (a denial is answered exactly as an unknown template), and
//     once more for each proposed value, leaving out those denied; total
//     counts the values allowed.
//   - A read whose contents name other URIs asks with OpRead about each.
//   - Before each notifications/resources/updated, the Access a
//     subscription was allowed with (its identity and token included) is
//     asked about again: a subscriber the Authorizer now denies hears no
//     more of that URI, until it allows it again. Nothing is polled.
//
// An Authorizer must be safe for concurrent use, and fast: it runs for
// every entry of every list page.
type Authorizer = func(ctx context.Context, a Access) error

// ErrDenied is what an Authorizer returns, or wraps, to deny an access.
var ErrDenied = errors.New("access denied")

// DefaultIdentity names the caller of req as go-sdk's bearer-token
// middleware verified it: the UserID of the request's auth.TokenInfo, or ""
// if it has none (stdio, or HTTP without the middleware). A TokenVerifier
// that sets no UserID leaves every caller anonymous, so that list cursors
// would pass between them: set UserID, or give Options.Identity.
func DefaultIdentity(ctx context.Context, req mcp.Request) string {
	if ti := tokenInfo(req); ti != nil {
		return ti.UserID
	}
	return ""
}

func tokenInfo(req mcp.Request) *auth.TokenInfo {
	if req == nil {
		return nil
	}
	if extra := req.GetExtra(); extra != nil {
		return extra.TokenInfo
	}
	return nil
}
