package audit

import (
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rules of resource templates and their completions.
var (
	ruleTemplateSyntax = newRule("template.syntax", Must,
		`resources, resource templates: "Resource templates allow servers to expose parameterized resources using URI templates" (RFC 6570); a template that does not parse cannot be expanded or completed`)
	ruleCompleteMax = newRule("complete.max-values", Must,
		`completion, CompleteResult: "values: Array of suggestions (max 100)"; "Maximum 100 items per response"; schema: "Must not exceed 100 items."`)
	ruleCompleteTotal = newRule("complete.total", Must,
		`completion, schema: "total": "The total number of completion options available. This can exceed the number of values actually sent in the response." (so it is never fewer)`)
	ruleCompleteHasMore = newRule("complete.has-more", Should,
		`completion, schema: "hasMore": "Indicates whether there are additional completion options beyond those provided in the current response"; a total above the values sent says there are`)
	ruleCompleteUnknown = newRule("complete.unknown-argument", Should,
		`completion, error handling: "Servers SHOULD return standard JSON-RPC errors for common failure cases: ... Invalid prompt name: -32602 (Invalid params)"; "Servers SHOULD: ... Validate all inputs"; a template has no variable of that name`)
)

// unknownVariable is a variable name no template has.
const unknownVariable = "mcpres-audit-no-such-variable"

// maxCompletionValues is the most values a completion answer may hold.
const maxCompletionValues = 100

// checkTemplates checks that each listed template is valid RFC 6570 and,
// if the server advertises completions, that it completes each variable
// within the specification's bounds and refuses a variable the template
// does not have.
func checkTemplates(c *checker) error {
	caps := c.cs.InitializeResult().Capabilities
	completes := caps != nil && caps.Completions != nil
	if !completes && len(c.templates) > 0 {
		c.report.Skipped = append(c.report.Skipped, "completion: the server does not advertise completions")
	}
	seen := make(map[string]bool)
	for _, t := range c.templates {
		if t.URITemplate == "" || seen[t.URITemplate] {
			continue // reported by the listing's rules
		}
		seen[t.URITemplate] = true
		tmpl, err := uritemplate.Parse(t.URITemplate)
		if err != nil {
			c.fail(ruleTemplateSyntax, t.URITemplate, "does not parse as an RFC 6570 URI template: %v", err)
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
		if err := c.checkUnknownVariable(t.URITemplate); err != nil {
			return err
		}
	}
	return nil
}

// complete asks the server to complete the variable name of template,
// from nothing typed.
func (c *checker) complete(template, name string) (*mcp.CompleteResult, error) {
	return c.cs.Complete(c.ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: template},
		Argument: mcp.CompleteParamsArgument{Name: name, Value: ""},
	})
}

// checkCompletion checks the answer to a completion of the variable name
// of template: at most 100 values, a total no smaller than them, and
// hasMore set when the total says more remain. An error answer breaks no
// rule: a server may have nothing to complete a variable with.
func (c *checker) checkCompletion(template, name string) error {
	res, err := c.complete(template, name)
	if err != nil {
		if c.sessionFailed(err) {
			return err
		}
		return nil
	}
	if res == nil {
		return nil
	}
	target := template + " {" + name + "}"
	n, total := len(res.Completion.Values), res.Completion.Total
	if n > maxCompletionValues {
		c.fail(ruleCompleteMax, target, "%d values", n)
	}
	// A total of 0 is indistinguishable from none given.
	switch {
	case total != 0 && total < n:
		c.fail(ruleCompleteTotal, target, "total %d, with %d values", total, n)
	case total > n && !res.Completion.HasMore:
		c.fail(ruleCompleteHasMore, target, "total %d, %d values, and hasMore false", total, n)
	}
	return nil
}

// checkUnknownVariable asks to complete a variable template does not
// have, which must be refused with invalid params.
func (c *checker) checkUnknownVariable(template string) error {
	res, err := c.complete(template, unknownVariable)
	e, isRPC := rpcError(err)
	switch {
	case err == nil:
		n := 0
		if res != nil {
			n = len(res.Completion.Values)
		}
		c.fail(ruleCompleteUnknown, template, "a variable it does not have (%s) was completed, with %d values", unknownVariable, n)
	case !isRPC && c.sessionFailed(err):
		return err
	case isRPC && e.Code != codeInvalidParams:
		c.fail(ruleCompleteUnknown, template, "a variable it does not have was answered with error %d (%s), want -32602", e.Code, e.Message)
	}
	return nil
}
