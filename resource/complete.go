package resource

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/mcpres/mcpres/internal/protocol"

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
type CompleteFunc = func(ctx context.Context, partial string, bound map[string]string) ([]string, error)

// WithCompleter registers fn to complete the template variable named
// variable. AddTemplate refuses a nil fn, and a variable the template
// lacks.
func WithCompleter(variable string, fn CompleteFunc) TemplateOption {
	return templateOption(func(e *entryConfig) error {
		if fn == nil {
			return fmt.Errorf("nil completer for %q", variable)
		}
		if e.completers == nil {
			e.completers = make(map[string]CompleteFunc)
		}
		e.completers[variable] = fn
		return nil
	})
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
		c := r.begin(ctx, OpComplete, protocol.MethodComplete, "", nil, nil)
		return nil, r.end(&c, invalid(protocol.MethodComplete+" needs a ref"))
	}
	c := r.begin(ctx, OpComplete, protocol.MethodComplete, req.Params.Ref.URI, req, req.Session)
	res, err := r.complete(&c, req.Params)
	return res, r.end(&c, err)
}

// complete runs the steps of completion/complete.
func (r *Registry) complete(c *call, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if err := r.open(); err != nil {
		return nil, err
	}
	if p.Ref.Type != "ref/resource" {
		return nil, invalid("completion for %q references is not served here", p.Ref.Type)
	}
	if p.Argument.Name == "" {
		return nil, invalid(protocol.MethodComplete + " needs argument.name")
	}
	var bound map[string]string
	if p.Context != nil {
		bound = p.Context.Arguments
	}
	e, ok := r.templates.Get(p.Ref.URI)
	if !ok {
		return nil, errNotFound
	}
	if c.obs != nil {
		c.obs.Template = p.Ref.URI
	}
	access := Access{Op: OpComplete, Template: p.Ref.URI, Argument: p.Argument.Name, Arguments: bound, Identity: c.identity, Request: c.req}
	if err := r.authorize(c, access); err != nil {
		return nil, err
	}
	if !slices.Contains(e.compiled.Varnames(), p.Argument.Name) {
		return nil, invalid("resource template %q has no variable %q", p.Ref.URI, p.Argument.Name)
	}
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	fn := e.completers[p.Argument.Name]
	if fn == nil {
		return res, nil
	}
	values, err := callUser("completer", func() ([]string, error) { return fn(c.ctx, p.Argument.Value, bound) })
	if err != nil {
		return nil, failed("resource completion failed", err, slog.String("variable", p.Argument.Name))
	}
	if r.opts.Authorize != nil {
		n := len(values)
		values = r.allowedValues(c, access, values)
		c.withheld = n - len(values)
	}
	res.Completion.Total = len(values)
	res.Completion.HasMore = len(values) > MaxCompletionValues
	if len(values) > MaxCompletionValues {
		values = values[:MaxCompletionValues]
	}
	if values != nil {
		res.Completion.Values = values
	}
	if c.obs != nil {
		c.obs.Entries = len(values)
	}
	return res, nil
}

// allowedValues returns the values of the variable access.Argument that
// the Authorizer allows, each asked about as access with the variable
// bound to it. It does not modify values, which the completer may share,
// nor the request's arguments.
func (r *Registry) allowedValues(c *call, access Access, values []string) []string {
	bound, name := access.Arguments, access.Argument
	var out []string
	for _, v := range values {
		// A map of its own for each question: the Authorizer may keep it.
		args := make(map[string]string, len(bound)+1)
		maps.Copy(args, bound)
		args[name] = v
		access.Arguments, access.Proposed = args, true
		if r.decide(c.ctx, c.session, access) == nil {
			out = append(out, v)
		}
	}
	return out
}
