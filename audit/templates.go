package audit

import (
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sections of the specification the rules of templates quote.
const secCompleteResult = "schema, CompleteResult: completion"

// The rules of resource templates and their completions.
var (
	ruleTemplateSyntax = newRule("template.syntax",
		`every listed template parses as an RFC 6570 URI template (by package uritemplate, which may be stricter than another parser). The schema says it is one, and requires nothing more`,
		clause(everyVersion, Advice, "schema, ResourceTemplate: uriTemplate", "A URI template (according to RFC 6570) that can be used to construct resource URIs."))
	ruleCompleteMax = newRule("complete.max-values",
		`completes each variable of each template, from nothing typed, if the server advertises completions: at most 100 values. The schema bounds the field`,
		clause(everyVersion, Must, secCompleteResult+": values", "An array of completion values. Must not exceed 100 items."))
	ruleCompleteTotal = newRule("complete.total",
		`a total, when given, is not below the number of values sent`,
		clause(everyVersion, Advice, secCompleteResult+": total", "The total number of completion options available. This can exceed the number of values actually sent in the response."))
	ruleCompleteHasMore = newRule("complete.has-more",
		`hasMore is true when the total says more values remain than were sent`,
		clause(everyVersion, Advice, secCompleteResult+": hasMore", "Indicates whether there are additional completion options beyond those provided in the current response, even if the exact total is unknown."))
	ruleCompleteUnknown = newRule("complete.unknown-argument",
		`asks to complete a variable the template does not have: suggestions for it are advice to look at. An error, or no values, is a fine answer (an empty completion is "no suggestions"); the specification names no code for an unknown argument`,
		clause(everyVersion, Advice, "server/resources, Resource Templates", "Resource templates allow servers to expose parameterized resources using URI templates. Arguments may be auto-completed through the completion API."))
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
	switch {
	case len(c.templates) == 0:
		c.skip("templates: none listed", ruleTemplateSyntax, ruleCompleteMax, ruleCompleteTotal, ruleCompleteHasMore, ruleCompleteUnknown)
	case !completes:
		c.skip("completion: the server does not advertise completions", ruleCompleteMax, ruleCompleteTotal, ruleCompleteHasMore, ruleCompleteUnknown)
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
		c.answer(err, protocol.MethodComplete, template)
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
// have: suggestions for it are advice; an error or no values are fine.
func (c *checker) checkUnknownVariable(template string) error {
	res, err := c.complete(template, unknownVariable)
	switch {
	case err == nil:
		if res != nil && len(res.Completion.Values) > 0 {
			c.fail(ruleCompleteUnknown, template, "a variable it does not have (%s) was completed, with %d values", unknownVariable, len(res.Completion.Values))
		}
	case c.sessionFailed(err):
		return err
	default:
		c.answer(err, protocol.MethodComplete, template)
	}
	return nil
}
