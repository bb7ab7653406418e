package audit

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpres/mcpres/mimetype"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The rules of resources/read, for listed resources.
var (
	ruleReadListed = newRule("read.listed", Must,
		`resources: "To retrieve resource contents, clients send a resources/read request"; a resource the server lists is one it serves`)
	ruleReadContents = newRule("read.contents", Must,
		`resources/read: the result's "contents" holds the resource's text or binary contents; a read of a resource that exists returns at least one`)
	ruleReadContentURI = newRule("read.content-uri", Must,
		`resource contents: "uri": "The URI of this resource." (required by the schema)`)
	ruleReadContentType = newRule("read.content-mime", Should,
		`resource contents: "mimeType": "The MIME type of this resource, if known"; without it a host must guess how to show the content`)
	ruleReadOneOf = newRule("read.text-or-blob", Must,
		`resource contents: "Resources can contain either text or binary data": "text", or "blob", "A base64-encoded string representing the binary data of the item", exactly one of them`)
	ruleReadTrueType = newRule("read.true-type", Must,
		`resource contents: the "mimeType" says what the content is; a host renders and parses it by that type (text that is UTF-8, JSON that parses, XML that is well formed, a signature that matches)`)
	ruleReadTextAsText = newRule("read.text-as-text", Should,
		`resource contents: text resources "contain UTF-8 encoded text data"; a textual type sent as a blob hides text from a host that shows text`)
	ruleReadAgrees = newRule("read.agrees-with-list", Should,
		`a resource read says what its listing said: the same "mimeType", and as many bytes as its "size", "The size of the raw resource content, in bytes (i.e., before base64 encoding or any tokenization), if known"`)
)

// checkReads reads the first Options.Reads listed resources and checks
// what each returns.
func checkReads(c *checker) error {
	for _, r := range c.resources[:min(len(c.resources), c.opts.Reads)] {
		if strings.IndexFunc(r.URI, unicode.IsControl) >= 0 {
			continue // list.uri reports it; go-sdk's client cannot even send it
		}
		res, err := c.cs.ReadResource(c.ctx, &mcp.ReadResourceParams{URI: r.URI})
		c.report.Reads++
		if err != nil {
			if c.sessionFailed(err) {
				return err
			}
			var corrupt base64.CorruptInputError
			if errors.As(err, &corrupt) {
				c.fail(ruleReadOneOf, r.URI, "a blob that is not valid base64: %v", corrupt)
			} else {
				c.fail(ruleReadListed, r.URI, "a listed resource cannot be read: %v", err)
			}
			continue
		}
		c.checkContents(r, res)
	}
	return nil
}

// checkContents checks the result of reading the listed resource r.
func (c *checker) checkContents(r *mcp.Resource, res *mcp.ReadResourceResult) {
	if res == nil || len(res.Contents) == 0 {
		c.fail(ruleReadContents, r.URI, "no contents")
		return
	}
	var size int64
	for _, content := range res.Contents {
		if content == nil {
			c.fail(ruleReadContents, r.URI, "a null content")
			continue
		}
		size += int64(len(content.Text) + len(content.Blob))
		if content.URI == "" {
			c.fail(ruleReadContentURI, r.URI, "a content without a uri")
		}
		declared := content.MIMEType
		if declared == "" {
			c.fail(ruleReadContentType, r.URI, "a content without a mimeType")
			declared = r.MIMEType
		} else if r.MIMEType != "" && !sameType(r.MIMEType, declared) {
			c.fail(ruleReadAgrees, r.URI, "listed as %q, read as %q", r.MIMEType, declared)
		}
		c.checkType(r.URI, declared, content)
	}
	if r.Size > 0 && len(res.Contents) == 1 && size != r.Size {
		c.fail(ruleReadAgrees, r.URI, "listed with size %d, read %d bytes", r.Size, size)
	}
}

// checkType checks that content is what declared says, by mimetype's
// rules; without a declared type, only that it holds text or blob.
func (c *checker) checkType(uri, declared string, content *mcp.ResourceContents) {
	if declared == "" {
		if (content.Text == "") == (content.Blob == nil) {
			c.fail(ruleReadOneOf, uri, "a content with neither or both of text and blob")
		}
		return
	}
	m := mismatch(declared, content)
	if m == nil {
		return
	}
	switch {
	case m.Rule == mimetype.RuleOneOf:
		c.fail(ruleReadOneOf, uri, "%s", m.Detail)
	case m.Rule == mimetype.RuleTextual && content.Blob == nil:
		// A charset other than UTF-8 declared for a text, which is UTF-8.
		c.fail(ruleReadTrueType, uri, "declared %q: %s", declared, m.Detail)
	case m.Rule == mimetype.RuleTextual && !utf8.Valid(content.Blob):
		c.fail(ruleReadTrueType, uri, "declared %q, UTF-8 text: a blob of %d bytes that is not UTF-8", declared, len(content.Blob))
	case m.Rule == mimetype.RuleTextual:
		c.fail(ruleReadTextAsText, uri, "declared %q, UTF-8 text: %s", declared, m.Detail)
		// Judge the blob as the text it should have been: JSON that
		// does not parse is no better for coming as a blob.
		if m := mismatch(declared, &mcp.ResourceContents{Text: string(content.Blob)}); m != nil {
			c.fail(ruleReadTrueType, uri, "declared %q: %s: %s", declared, m.Rule, m.Detail)
		}
	default:
		c.fail(ruleReadTrueType, uri, "declared %q: %s: %s", declared, m.Rule, m.Detail)
	}
}

// mismatch returns the rule of package mimetype that content breaks for
// the type declared, or nil.
func mismatch(declared string, content *mcp.ResourceContents) *mimetype.MismatchError {
	var m *mimetype.MismatchError
	if errors.As(mimetype.Validate(declared, content), &m) {
		return m
	}
	return nil
}

// sameType reports whether MIME types a and b name the same type,
// parameters and case aside.
func sameType(a, b string) bool {
	return mediaType(a) == mediaType(b)
}
