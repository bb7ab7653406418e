package audit

import (
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rules of resource templates and their completions.
var (
	ruleTemplateSyntax = newRule("template.syntax", Must,
		`resource templates: "Resource templates allow servers to expose parameterized resources using URI templates" (RFC 6570); a template that is not valid RFC 6570 cannot be expanded`)
	ruleCompleteMax = newRule("complete.max-values", Must,
		`completion: "values": "Array of completion values (max 100 items)"`)
	ruleCompleteTotal = newRule("complete.total", Must,
		`completion: "total": the total number of matching values, so never fewer than the values returned`)
	ruleCompleteHasMore = newRule("complete.has-more", Should,
		`completion: "hasMore": whether there are more results than those returned; set when total exceeds them`)
	ruleCompleteUnknown = newRule("complete.unknown-argument", Should,
		`completion, error handling: "Servers SHOULD return standard JSON-RPC errors for common failure cases: ... Invalid arguments: -32602"; a template has no such variable`)
)

// unknownVariable is a variable name no template has.
const unknownVariable = "mcpres-audit-no-such-variable"

// checkTemplates checks that each listed template is valid RFC 6570 and,
// if the server completes, that it completes each variable honestly.
func checkTemplates(c *checker) error {
	completes := c.cs.InitializeResult().Capabilities != nil && c.cs.InitializeResult().Capabilities.Completions != nil
	if !completes && len(c.templates) > 0 {
		c.report.Skipped = append(c.report.Skipped, "completion: the server does not advertise completions")
	}
	for _, t := range c.templates {
		tmpl, err := uritemplate.Parse(t.URITemplate)
		if err != nil {
			c.fail(ruleTemplateSyntax, t.URITemplate, "%v", err)
			continue
		}
		if !completes {
			continue
		}
		for _, name := range tmpl.Varnames() {
			if err := c.checkCompletion(t.URITemplate, name); err != nil {
				return err
			}
		}
		if err := c.checkUnknownArgument(t.URITemplate); err != nil {
			return err
		}
	}
	return nil
}

// complete asks the server to complete variable name of template.
func (c *checker) complete(template, name string) (*mcp.CompleteResult, error) {
	return c.cs.Complete(c.ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: template},
		Argument: mcp.CompleteParamsArgument{Name: name, Value: ""},
	})
}

// checkCompletion checks the completion of variable name of template.
func (c *checker) checkCompletion(template, name string) error {
	res, err := c.complete(template, name)
	if err != nil {
		if c.sessionFailed(err) {
			return err
		}
		return nil // a server may have nothing to complete a variable with
	}
	n := len(res.Completion.Values)
	target := template + " {" + name + "}"
	if n > 100 {
		c.fail(ruleCompleteMax, target, "%d values", n)
	}
	if total := res.Completion.Total; total != 0 && total < n {
		c.fail(ruleCompleteTotal, target, "total %d, with %d values", total, n)
	} else if total > n && !res.Completion.HasMore {
		c.fail(ruleCompleteHasMore, target, "total %d, %d values, and hasMore false", total, n)
	}
	return nil
}

// checkUnknownArgument asks to complete a variable template does not have.
func (c *checker) checkUnknownArgument(template string) error {
	res, err := c.complete(template, unknownVariable)
	switch e, ok := rpcError(err); {
	case err == nil:
		c.fail(ruleCompleteUnknown, template, "a variable it does not have (%s) was completed with %d values", unknownVariable, len(res.Completion.Values))
	case !ok && c.sessionFailed(err):
		return err
	case ok && e.Code != codeInvalidParams:
		c.fail(ruleCompleteUnknown, template, "a variable it does not have was answered with error %d, not -32602", e.Code)
	}
	return nil
}
