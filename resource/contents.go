package resource

import (
	"errors"
	"log/slog"
	"unicode/utf8"
	"unsafe"

	"github.com/mcpres/mcpres/mimetype"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MIMEPolicy says what a registry does with a read result whose content
// does not match its MIME type (see mimetype.Validate for the rules: JSON
// that does not parse, a PNG that is a JPEG, text where a blob belongs).
type MIMEPolicy int

const (
	// MIMEStrict, the default, answers such a read with -32603 and logs
	// the URI and the rule broken: a client never receives content that
	// lies about its type.
	MIMEStrict MIMEPolicy = iota
	// MIMEWarn logs the mismatch at Warn and sends the content anyway.
	MIMEWarn
	// MIMEOff checks nothing.
	MIMEOff
)

// fillContent returns c with its URI and MIME type filled in where empty:
// the URI read, and the declared type or, failing that, the type
// mimetype.Detect gives the URI and content. An empty content (neither
// text nor blob) becomes an empty blob: go-sdk does not send an empty
// text, and an empty blob is the form the protocol's schema accepts. c is
// copied, never modified.
func fillContent(c *mcp.ResourceContents, uri, declared string) *mcp.ResourceContents {
	if c.URI != "" && c.MIMEType != "" && (c.Text != "" || c.Blob != nil) {
		return c
	}
	filled := *c
	if filled.URI == "" {
		filled.URI = uri
	}
	if filled.Text == "" && filled.Blob == nil {
		filled.Blob = []byte{}
	}
	if filled.MIMEType == "" {
		filled.MIMEType = declared
	}
	if filled.MIMEType == "" {
		filled.MIMEType = detectContent(uri, &filled)
	}
	return &filled
}

// sniffLen is how much of a content Detect looks at.
const sniffLen = 512

// detectContent returns the MIME type of c, read as uri, by its name and
// its first bytes. Text is given a textual type: if the name says binary
// (an image, say), the content is plain text all the same.
func detectContent(uri string, c *mcp.ResourceContents) string {
	if c.Blob != nil {
		t, _ := mimetype.Detect(uri, c.Blob[:min(len(c.Blob), sniffLen)])
		return t
	}
	head := c.Text
	if len(head) > sniffLen {
		cut := sniffLen
		for cut > 0 && !utf8.RuneStart(head[cut]) {
			cut-- // do not split a character
		}
		head = head[:cut]
	}
	t, _ := mimetype.Detect(uri, unsafe.Slice(unsafe.StringData(head), len(head))) // read only
	if !mimetype.IsTextual(t) {
		return mimetype.PlainText
	}
	return t
}

// checkContent applies Options.MIME to one filled-in content of call c.
func (r *Registry) checkContent(c *call, content *mcp.ResourceContents) error {
	if r.opts.MIME == MIMEOff {
		c.mimeChecked("off")
		return nil
	}
	err := mimetype.Validate(content.MIMEType, content)
	if err == nil {
		c.mimeChecked("match")
		return nil
	}
	c.mimeChecked("mismatch")
	attrs := []slog.Attr{slog.String("mime_type", content.MIMEType)}
	var mm *mimetype.MismatchError
	if errors.As(err, &mm) {
		attrs = append(attrs, slog.String("rule", string(mm.Rule)))
	}
	if r.opts.MIME == MIMEWarn {
		attrs = append(attrs, slog.Any("error", err), slog.String("uri", c.target), slog.String("session_id", sessionID(c.session)))
		r.opts.Logger.LogAttrs(c.ctx, slog.LevelWarn, "resource content does not match its MIME type; sent anyway", attrs...)
		return nil
	}
	return failed("resource content does not match its MIME type", err, attrs...)
}
