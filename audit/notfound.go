package audit

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sections of the specification the rules of not-found answers quote.
const (
	secResourcesErrors   = "server/resources, Error Handling"
	secResourcesSecurity = "server/resources, Security Considerations"
)

// The rules of a read of what does not exist, or is not a URI.
var (
	ruleNotFoundError = newRule("notfound.error",
		`reads a URI that names nothing (a host under .invalid, in the scheme of a listed resource): it is answered with an error, not empty contents. (Contents that are not empty say the server serves that URI, which the audit cannot call wrong: it says so, and checks no more of it)`,
		clause(beforeListen, Should, secResourcesErrors, "Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found"),
		clause(sinceListen, Must, secResourcesErrors, "Servers MUST NOT return an empty contents array for a non-existent resource."))
	ruleNotFoundCode = newRule("notfound.code",
		`the error answering that read has the version's code: -32002 at 2025-11-25; -32602, and only -32602, at 2026-07-28 (where -32002 is error.reserved-code's to report, and -32603 breaks the MUST); at 2025-06-18 either, since its page says -32602 and 2026-07-28 says clients should accept -32002, "as earlier protocol versions used this code"`,
		clause(only20250618, Should, secResourcesErrors, "Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found: -32602"),
		clause(only20251125, Should, secResourcesErrors, "Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found: -32002"),
		clause(sinceListen, Must, secResourcesErrors, "If the requested resource does not exist, servers MUST return a JSON-RPC error with code -32602 (Invalid Params)."))
	ruleNotFoundData = newRule("notfound.data",
		`the not-found error names the URI in its data, {"uri": ...}: only the example of the page does so; nothing requires it`,
		clause(everyVersion, Advice, secResourcesErrors+" (the example error)", `"data": { "uri": "file:///nonexistent.txt" }`))
	ruleReadMalformed = newRule("read.malformed-uri",
		`reads three strings that are not URIs ("not a uri", "%%%", "x://a b"): a server that validates resource URIs answers each with an error, not contents. One finding for all three`,
		clause(everyVersion, Must, secResourcesSecurity, "Servers MUST validate all resource URIs"))
	ruleMalformedURI = newRule("notfound.malformed-uri",
		`the errors answering those reads are -32602 (or the version's not-found code): the params are invalid. MCP names no code for it; JSON-RPC describes -32602 without requiring it. One finding for all three`,
		clause(everyVersion, Advice, "JSON-RPC 2.0, 5.1 Error object", "-32602 | Invalid params | Invalid method parameter(s)."))
)

// protocolNotFoundInvalidParams is the first protocol version that answers
// a resource not found with -32602.
const protocolNotFoundInvalidParams = protocol.NotFoundInvalidParamsSince

// codeResourceNotFound is the not-found code of the versions before it.
const codeResourceNotFound = -32002

// malformed are strings that are not URIs, read to see them refused.
var malformed = []string{"not a uri", "%%%", "x://a b"}

// notFoundCodes returns the codes the report's version accepts for a
// resource not found.
func (c *checker) notFoundCodes() []int64 {
	switch {
	case c.protocolAtLeast(protocolNotFoundInvalidParams):
		return []int64{codeInvalidParams}
	case c.judgedAt(protocol.Version20250618):
		return []int64{codeResourceNotFound, codeInvalidParams}
	}
	return []int64{codeResourceNotFound}
}

// checkNotFound reads a URI that cannot exist, in the scheme of a listed
// resource or template, and a few strings that are not URIs.
func checkNotFound(c *checker) error {
	if err := c.checkMissing(); err != nil {
		return err
	}
	return c.checkMalformed()
}

// checkMissing reads a URI that cannot exist, in the scheme of a listed
// resource or template.
func (c *checker) checkMissing() error {
	uri, ok := c.missingURI()
	if !ok {
		c.skip("not found: no listed resource or template to take a scheme from", ruleNotFoundError, ruleNotFoundCode, ruleNotFoundData)
		return nil
	}
	want := c.notFoundCodes()
	res, err := c.cs.ReadResource(c.ctx, &mcp.ReadResourceParams{URI: uri})
	e, isRPC := c.answer(err, protocol.MethodRead, uri)
	switch {
	case err == nil && contentCount(res) > 0:
		c.skip(fmt.Sprintf("not found: the server served %s, which the audit made up (%d contents): it names something there", uri, contentCount(res)),
			ruleNotFoundError, ruleNotFoundCode, ruleNotFoundData)
	case err == nil:
		c.fail(ruleNotFoundError, uri, "answered with empty contents, not an error")
	case !isRPC && c.sessionFailed(err):
		return err
	case !isRPC:
		c.fail(ruleNotFoundCode, uri, "answered with %v, not a JSON-RPC error", err)
	case c.reservedHere(e.Code):
		// error.reserved-code reports it: one behaviour, one finding.
	case !slices.Contains(want, e.Code):
		c.fail(ruleNotFoundCode, uri, "answered with error %d (%s), want %s at protocol %s", e.Code, e.Message, codesText(want), c.report.Protocol)
	case !namesURI(e.Data, uri):
		c.fail(ruleNotFoundData, uri, "the error's data is %s, not {\"uri\": %q}", dataText(e.Data), uri)
	}
	return nil
}

// checkMalformed reads strings that are not URIs: each must be an error,
// and should be -32602 or the not-found code. It records at most one
// finding of each rule.
func (c *checker) checkMalformed() error {
	want := append(c.notFoundCodes(), codeInvalidParams)
	var served, wrong []string
	for _, bad := range malformed {
		res, err := c.cs.ReadResource(c.ctx, &mcp.ReadResourceParams{URI: bad})
		e, isRPC := c.answer(err, protocol.MethodRead, bad)
		switch {
		case err == nil:
			served = append(served, fmt.Sprintf("%q with %d contents", bad, contentCount(res)))
		case !isRPC && c.sessionFailed(err):
			return err
		case isRPC && c.reservedHere(e.Code):
			// error.reserved-code reports it.
		case isRPC && !slices.Contains(want, e.Code):
			wrong = append(wrong, fmt.Sprintf("%q with error %d (%s)", bad, e.Code, e.Message))
		}
	}
	if len(served) > 0 {
		c.fail(ruleReadMalformed, protocol.MethodRead, "strings that are not URIs were answered with contents: %s", strings.Join(served, ", "))
	}
	if len(wrong) > 0 {
		c.fail(ruleMalformedURI, protocol.MethodRead, "strings that are not URIs were answered %s; want -32602", strings.Join(wrong, ", "))
	}
	return nil
}

// codesText writes codes as "-32002 or -32602".
func codesText(codes []int64) string {
	var s []string
	for _, code := range slices.Compact(slices.Sorted(slices.Values(codes))) {
		s = append(s, strconv.FormatInt(code, 10))
	}
	return strings.Join(s, " or ")
}

// missingURI returns a URI that names nothing, in the scheme of the first
// listed resource (or, failing one, template) whose scheme it can tell.
func (c *checker) missingURI() (string, bool) {
	var schemes []string
	for _, r := range c.resources {
		schemes = append(schemes, r.URI)
	}
	for _, t := range c.templates {
		schemes = append(schemes, t.URITemplate)
	}
	b := make([]byte, 8)
	rand.Read(b)
	for _, s := range schemes {
		scheme, _, ok := strings.Cut(s, ":")
		if ok && validScheme(scheme) {
			u := &url.URL{Scheme: scheme, Host: "mcpres-audit.invalid", Path: "/does-not-exist-" + hex.EncodeToString(b)}
			return u.String(), true
		}
	}
	return "", false
}

// validScheme reports whether s is a URI scheme (RFC 3986, section 3.1):
// a letter, then letters, digits, "+", "-" and ".".
func validScheme(s string) bool {
	for i, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case i > 0 && ('0' <= r && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// namesURI reports whether data is a JSON object whose "uri" is uri.
func namesURI(data json.RawMessage, uri string) bool {
	var d struct {
		URI string `json:"uri"`
	}
	return json.Unmarshal(data, &d) == nil && d.URI == uri
}

// dataText returns data as text for a finding, or "absent".
func dataText(data json.RawMessage) string {
	if len(data) == 0 {
		return "absent"
	}
	return string(data)
}

// contentCount returns how many contents res holds.
func contentCount(res *mcp.ReadResourceResult) int {
	if res == nil {
		return 0
	}
	return len(res.Contents)
}
