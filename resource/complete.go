package resource

import (
	"context"
	"fmt"
	"log/slog"
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
	e, ok := r.templates.Get(p.Ref.URI)
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
	var bound map[string]string
	if p.Context != nil {
		bound = p.Context.Arguments
	}
	values, err := callCompleter(ctx, fn, p.Argument.Value, bound)
	if err != nil {
		r.opts.Logger.LogAttrs(ctx, slog.LevelError, "resource completion failed",
			slog.String("template", p.Ref.URI), slog.String("variable", p.Argument.Name),
			slog.String("session_id", sessionID(req.Session)), slog.Any("error", err))
		return nil, errInternal
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
