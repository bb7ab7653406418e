package audit

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rules of a read of what does not exist.
var (
	ruleNotFoundError = newRule("notfound.error", Must,
		`resources, error handling: "Resource not found" is an error, in every version; 2026-07-28 (SEP-2164): "Servers MUST NOT return an empty contents array for a non-existent resource"`)
	ruleNotFoundCode = newRule("notfound.code", Should,
		`resources, error handling: "Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found: -32002" (2025-06-18, 2025-11-25); from 2026-07-28 (SEP-2164) a resource not found is -32602 (Invalid params)`)
	ruleNotFoundData = newRule("notfound.data", Should,
		`resources, error handling: the not-found error names the URI in its "data", as the specification's example does: "data": {"uri": "file:///nonexistent.txt"}`)
	ruleMalformedURI = newRule("notfound.malformed-uri", Should,
		`JSON-RPC: a request whose params are not valid is answered with -32602 (Invalid params); a string that is not a URI is not a valid resource URI`)
)

// protocolNotFoundInvalidParams is the first protocol version that answers
// a resource not found with -32602.
const protocolNotFoundInvalidParams = protocol.NotFoundInvalidParamsSince

// codeResourceNotFound is the not-found code of the versions before it.
const codeResourceNotFound = -32002

// checkNotFound reads a URI that cannot exist, in the scheme of a listed
// resource or template, and a few strings that are not URIs.
func checkNotFound(c *checker) error {
	uri, ok := c.missingURI()
	if !ok {
		c.report.Skipped = append(c.report.Skipped, "not found: no listed resource or template to take a scheme from")
		return nil
	}
	want := int64(codeResourceNotFound)
	if c.protocolAtLeast(protocolNotFoundInvalidParams) {
		want = codeInvalidParams
	}
	res, err := c.cs.ReadResource(c.ctx, &mcp.ReadResourceParams{URI: uri})
	e, isRPC := rpcError(err)
	switch {
	case err == nil:
		c.fail(ruleNotFoundError, uri, "answered with %d contents, not an error", contentCount(res))
	case !isRPC && c.sessionFailed(err):
		return err
	case !isRPC:
		c.fail(ruleNotFoundCode, uri, "answered with %v, not a JSON-RPC error", err)
	case e.Code != want:
		c.fail(ruleNotFoundCode, uri, "answered with error %d (%s), want %d at protocol %s", e.Code, e.Message, want, c.report.Protocol)
	case !namesURI(e.Data, uri):
		c.fail(ruleNotFoundData, uri, "the error's data is %s, not {\"uri\": %q}", dataText(e.Data), uri)
	}
	for _, bad := range []string{"not a uri", "%%%", "x://a b"} {
		res, err := c.cs.ReadResource(c.ctx, &mcp.ReadResourceParams{URI: bad})
		e, isRPC := rpcError(err)
		switch {
		case err == nil:
			c.fail(ruleNotFoundError, bad, "a string that is not a URI was answered with %d contents", contentCount(res))
		case !isRPC && c.sessionFailed(err):
			return err
		case isRPC && e.Code != codeInvalidParams && e.Code != want:
			c.fail(ruleMalformedURI, bad, "answered with error %d (%s), want -32602", e.Code, e.Message)
		}
	}
	return nil
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
