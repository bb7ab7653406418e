package resource

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxCompletionValues is the most values one completion/complete answer
// holds, as the MCP specification requires.
const MaxCompletionValues = 100

// A CompleteFunc proposes values for one template variable. partial is what
// the user has typed so far; bound holds the template's other variables
// already chosen (the request's context.arguments), possibly nil. It
// returns every candidate, best first: the registry sends the first
// MaxCompletionValues and reports the full count as total.
type CompleteFunc func(ctx context.Context, partial string, bound map[string]string) ([]string, error)

// WithCompleter registers fn to complete the template variable named
// variable. AddTemplate refuses it for a variable the template lacks, and
// Add refuses it outright.
func WithCompleter(variable string, fn CompleteFunc) EntryOption {
	return func(e *entryConfig) error {
		if fn == nil {
			return fmt.Errorf("nil completer for %q", variable)
		}
		if e.completers == nil {
			e.completers = make(map[string]CompleteFunc)
		}
		e.completers[variable] = fn
		return nil
	}
}

// Complete answers completion/complete for a "ref/resource" reference: the
// reference's uri names a registered URI template, argument.name one of its
// variables. A variable with no completer gets an empty answer. At most
// MaxCompletionValues values are sent, with total and hasMore set from the
// completer's full answer.
//
// With Options.Authorize set, the Authorizer is asked about the template
// and the arguments already chosen before the completer runs (a denial is
// answered exactly as an unknown template), then about each value the
// completer proposes: denied values are left out, and total counts only
// those allowed.
//
// A missing reference or argument name, another reference type, an unknown
// template or an unknown variable is answered with -32602; a failing or
// panicking completer with -32603, logged. Its signature is that of
// mcp.ServerOptions.CompletionHandler.
func (r *Registry) Complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req == nil || req.Params == nil || req.Params.Ref == nil {
		return nil, invalidParams("completion/complete needs a ref")
	}
	p := req.Params
	if p.Ref.Type != "ref/resource" {
		return nil, invalidParams("completion for %q references is not served here", p.Ref.Type)
	}
	if p.Argument.Name == "" {
		return nil, invalidParams("completion/complete needs argument.name")
	}
	var bound map[string]string
	if p.Context != nil {
		bound = p.Context.Arguments
	}
	start, auditing := r.auditing(ctx)
	identity := r.identity(ctx, req)
	access := Access{Op: OpComplete, Template: p.Ref.URI, Argument: p.Argument.Name, Arguments: bound, Identity: identity, Request: req}
	e, ok := r.templates.Get(p.Ref.URI)
	if ok {
		if err := r.authorize(ctx, access); err != nil {
			if auditing {
				r.audit(ctx, OpComplete, p.Ref.URI, req.Session, identity, decision{what: decisionDenied, reason: err}, start)
			}
			ok = false
		}
	}
	if !ok {
		return nil, invalidParams("unknown resource template %q", p.Ref.URI)
	}
	if !slices.Contains(e.compiled.Varnames(), p.Argument.Name) {
		return nil, invalidParams("resource template %q has no variable %q", p.Ref.URI, p.Argument.Name)
	}
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	fn := e.completers[p.Argument.Name]
	if fn == nil {
		return res, nil
	}
	values, err := callCompleter(ctx, fn, p.Argument.Value, bound)
	if err != nil {
		r.opts.Logger.LogAttrs(ctx, slog.LevelError, "resource completion failed",
			slog.String("template", p.Ref.URI), slog.String("variable", p.Argument.Name),
			slog.String("session_id", sessionID(req.Session)), slog.Any("error", err))
		return nil, errInternal
	}
	if r.opts.Authorize != nil {
		n := len(values)
		values = r.allowedValues(ctx, access, values)
		if auditing && len(values) < n {
			r.audit(ctx, OpComplete, p.Ref.URI, req.Session, identity, decision{what: decisionFiltered, withheld: n - len(values)}, start)
		}
	}
	res.Completion.Total = len(values)
	res.Completion.HasMore = len(values) > MaxCompletionValues
	if len(values) > MaxCompletionValues {
		values = values[:MaxCompletionValues]
	}
	if values != nil {
		res.Completion.Values = values
	}
	return res, nil
}

func callCompleter(ctx context.Context, fn CompleteFunc, partial string, bound map[string]string) (values []string, err error) {
	defer func() {
		if p := recover(); p != nil {
			values, err = nil, fmt.Errorf("completer panicked: %v", p)
		}
	}()
	return fn(ctx, partial, bound)
}

// allowedValues returns the values of the variable access.Argument that
// the Authorizer allows, each asked about as access with the variable
// bound to it. It
// does not modify values, which the completer may share, nor the
// request's arguments.
func (r *Registry) allowedValues(ctx context.Context, access Access, values []string) []string {
	bound, name := access.Arguments, access.Argument
	var out []string
	for _, v := range values {
		// A map of its own for each question: the Authorizer may keep it.
		args := make(map[string]string, len(bound)+1)
		maps.Copy(args, bound)
		args[name] = v
		access.Arguments, access.Proposed = args, true
		if r.authorize(ctx, access) == nil {
			out = append(out, v)
		}
	}
	return out
}
