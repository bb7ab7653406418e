package audit

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mimetype"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sections of the schema the rules of reads quote.
const (
	secSchemaContents = "schema, ResourceContents"
	secSchemaResource = "schema, Resource"
)

// The rules of resources/read, for listed resources.
var (
	ruleReadListed = newRule("read.listed",
		`reads each listed resource (the first Options.Reads): a read answered with an error. The schema calls a listed resource one the server "is capable of reading", but requires nothing of it`,
		clause(everyVersion, Advice, secSchemaResource, "A known resource that the server is capable of reading."))
	ruleReadContents = newRule("read.contents",
		`no entry of a read's contents is null. (Empty contents break no rule: at 2026-07-28 "it could mean the resource exists but has no content")`,
		clause(everyVersion, Must, "schema, ReadResourceResult: contents, required", "contents: (TextResourceContents | BlobResourceContents)[]"))
	ruleReadContentURI = newRule("read.content-uri",
		`every content has a uri (go-sdk's client cannot tell a missing uri from an empty one: both are reported)`,
		clause(everyVersion, Must, secSchemaContents+": uri, required", "uri: string. The URI of this resource."))
	ruleReadSingleURI = newRule("read.single-uri",
		`a read answered with a single content names the URI read (a fragment aside). The schema allows "the contents of a specific resource or sub-resource", so another URI is not wrong, only surprising when it is the only one`,
		clause(everyVersion, Advice, secSchemaContents, "The contents of a specific resource or sub-resource."))
	ruleReadContentType = newRule("read.content-mime",
		`every content has a mimeType: it is optional ("if known"), but without it a host must guess how to show the content`,
		clause(everyVersion, Advice, secSchemaContents+": mimeType", "The MIME type of this resource, if known."))
	ruleReadBlobEncoding = newRule("read.blob-encoding",
		`every blob is valid base64`,
		clause(everyVersion, Must, secResourcesSecurity, "Binary data MUST be properly encoded"))
	ruleReadOneOf = newRule("read.text-or-blob",
		`every content holds text or a blob, not both, not neither. (go-sdk's client cannot tell an empty text from none: "neither" may be an empty text)`,
		clause(everyVersion, Advice, "server/resources, Data Types, Resource Contents", "Resources can contain either text or binary data"))
	ruleReadTrueType = newRule("read.true-type",
		`each content is what its mimeType says, by package mimetype's rules: text that is UTF-8, JSON that parses, XML that is well formed, an image whose signature matches`,
		clause(everyVersion, Advice, secSchemaContents+": mimeType", "The MIME type of this resource, if known."))
	ruleReadTextAsText = newRule("read.text-as-text",
		`a content of a textual type (text/*, JSON, XML...) comes as text, not as a blob, which is for binary data`,
		clause(everyVersion, Advice, "schema, BlobResourceContents: blob", "A base64-encoded string representing the binary data of the item."))
	ruleReadAgrees = newRule("read.agrees-with-list",
		`a read says what the listing said: the same mimeType, and, for a single content, as many bytes as the listed size`,
		clause(everyVersion, Advice, secSchemaResource+": size", "The size of the raw resource content, in bytes (i.e., before base64 encoding or any tokenization), if known."))
)

// checkReads reads the first Options.Reads listed resources and checks
// what each returns.
func checkReads(c *checker) error {
	for _, r := range c.resources[:min(len(c.resources), c.opts.Reads)] {
		if c.badURIs[r.URI] || strings.IndexFunc(r.URI, unicode.IsControl) >= 0 {
			continue // list.uri reports it; go-sdk's client cannot even send some
		}
		res, err := c.cs.ReadResource(c.ctx, &mcp.ReadResourceParams{URI: r.URI})
		c.report.Reads++
		if err != nil {
			if c.sessionFailed(err) {
				return err
			}
			c.answer(err, protocol.MethodRead, r.URI)
			var corrupt base64.CorruptInputError
			if errors.As(err, &corrupt) {
				c.fail(ruleReadBlobEncoding, r.URI, "a blob that is not valid base64: %v", corrupt)
			} else {
				c.fail(ruleReadListed, r.URI, "a listed resource cannot be read: %v", err)
			}
			continue
		}
		if res != nil {
			c.hints(protocol.MethodRead, r.URI, res.Cacheable)
		}
		c.checkContents(r, res)
	}
	return nil
}

// checkContents checks the result of reading the listed resource r.
func (c *checker) checkContents(r *mcp.Resource, res *mcp.ReadResourceResult) {
	if res == nil || len(res.Contents) == 0 {
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
	if len(res.Contents) == 1 && res.Contents[0] != nil {
		if got := res.Contents[0].URI; got != "" && !sameResource(got, r.URI) {
			c.fail(ruleReadSingleURI, r.URI, "the only content is labelled %q", got)
		}
	}
	if r.Size > 0 && len(res.Contents) == 1 && size != r.Size {
		c.fail(ruleReadAgrees, r.URI, "listed with size %d, read %d bytes", r.Size, size)
	}
}

// sameResource reports whether URIs a and b name the same resource: they
// are equal, but for a fragment.
func sameResource(a, b string) bool {
	a, _, _ = strings.Cut(a, "#")
	b, _, _ = strings.Cut(b, "#")
	return a == b
}

// checkType checks that content is what declared says, by mimetype's
// rules; without a declared type, only that it holds text or blob.
func (c *checker) checkType(uri, declared string, content *mcp.ResourceContents) {
	if declared == "" {
		switch {
		case content.Text != "" && content.Blob != nil:
			c.fail(ruleReadOneOf, uri, "a content with both text and a blob")
		case content.Text == "" && content.Blob == nil:
			c.fail(ruleReadOneOf, uri, "a content with neither text nor a blob (or an empty text)")
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
