package mimetype

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Rule is one thing a resource content must get right. Validate's errors
// name the rule broken.
type Rule string

// The rules Validate checks, in the order it checks them.
const (
	// RuleOneOf: a content carries exactly one of text and blob. An empty
	// text is not sent on the wire (go-sdk omits an empty "text"): deliver
	// an empty resource as an empty, non-nil blob (Blob: []byte{}), which
	// RuleTextual accepts for a textual type too.
	RuleOneOf Rule = "exactly one of text or blob"
	// RuleSyntax: the declared type is a valid media type, type/subtype
	// with optional parameters, as mime.ParseMediaType reads it (a lone
	// token such as "text", which it accepts, is not a media type).
	RuleSyntax Rule = "valid media type"
	// RuleTextual: a textual type (text/*, JSON, XML, YAML, ...; see
	// IsTextual) in UTF-8 (a charset parameter of utf-8 or us-ascii, or
	// none) is delivered as text. An empty blob is accepted as the form an
	// empty text takes, and the rules that follow judge it as an empty
	// text (so an empty application/json breaks RuleJSON). A textual type
	// whose charset names another encoding (charset=iso-8859-1, utf-16,
	// ...) is delivered as a blob of that encoding, which is not checked
	// further: a text, always Unicode, cannot carry it.
	RuleTextual Rule = "textual type delivered as text"
	// RuleUTF8: text is valid UTF-8 (JSON carries nothing else).
	RuleUTF8 Rule = "text is valid UTF-8"
	// RuleJSON: content declared JSON (application/json, *+json) parses.
	RuleJSON Rule = "JSON parses"
	// RuleXML: content declared XML (application/xml, text/xml, *+xml,
	// image/svg+xml among them) is well-formed: one root element, tags
	// that nest and match, no text outside the root, entities declared
	// (encoding/xml's strict reading). An XML declaration naming an
	// encoding other than UTF-8 (or US-ASCII) contradicts the text.
	RuleXML Rule = "XML is well-formed"
	// RuleBinary: a binary type (images, audio, video, PDF, archives, ...;
	// see IsBinary) is delivered as a blob.
	RuleBinary Rule = "binary type delivered as blob"
	// RuleSignature: a blob declared as a type with a known signature (PNG,
	// JPEG, PDF, ZIP, MP3, MP4, ...), or a format built on one (a docx is
	// a zip), starts with a compatible signature (see Compatible). A type
	// without one (audio/aac, application/octet-stream) is not checked.
	RuleSignature Rule = "blob signature matches the declared type"
)

// ErrMismatch is matched (errors.Is) by every error Validate returns.
var ErrMismatch = errors.New("content does not match its declared type")

// A MismatchError says which rule a content breaks, and how.
type MismatchError struct {
	Declared string // the declared type
	Rule     Rule
	Detail   string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s: %q: %s: %s", ErrMismatch, e.Declared, e.Rule, e.Detail)
}

// Is makes errors.Is(err, ErrMismatch) hold.
func (e *MismatchError) Is(target error) bool { return target == ErrMismatch }

// Validate checks that c delivers what declared says, and returns a
// *MismatchError naming the first rule it breaks (see the Rule constants),
// or nil. A nil c breaks RuleOneOf. A type neither textual nor binary (see
// IsTextual and IsBinary) is checked for RuleOneOf and RuleSyntax only.
//
// Validate reads only the first bytes of a blob, and all of a text only
// for JSON and XML, whose syntax is checked in full; it allocates nothing
// for a plain "type/subtype" that passes.
func Validate(declared string, c *mcp.ResourceContents) error {
	switch {
	case c == nil:
		return mismatch(declared, RuleOneOf, "no content")
	case c.Text != "" && c.Blob != nil:
		return mismatch(declared, RuleOneOf, "both text (%d bytes) and blob (%d bytes)", len(c.Text), len(c.Blob))
	case c.Text == "" && c.Blob == nil:
		return mismatch(declared, RuleOneOf, "neither text nor blob (an empty text is not sent: use an empty blob)")
	}
	pt := parsedType(declared)
	if !pt.ok {
		return syntaxError(declared)
	}
	base, charset := pt.base, pt.charset
	switch pt.kind {
	case kindText:
		if !isUTF8(charset) {
			if c.Blob == nil {
				return mismatch(declared, RuleTextual, "charset %s declared, but a text is UTF-8: deliver a blob in that charset", charset)
			}
			return nil // text in another charset: its bytes are the client's to decode
		}
		if len(c.Blob) > 0 {
			return mismatch(declared, RuleTextual, "delivered as a blob of %d bytes", len(c.Blob))
		}
		text := c.Text // "" for an empty blob
		if !utf8.ValidString(text) {
			return mismatch(declared, RuleUTF8, "invalid UTF-8 at byte %d", invalidAt(text))
		}
		switch {
		case isJSON(base):
			if !json.Valid(unsafe.Slice(unsafe.StringData(text), len(text))) { // read only
				return mismatch(declared, RuleJSON, "%v", jsonError(text))
			}
		case isXML(base):
			if err := wellFormed(text); err != nil {
				return mismatch(declared, RuleXML, "%v", err)
			}
		}
	case kindBinary:
		if c.Blob == nil {
			return mismatch(declared, RuleBinary, "delivered as %d bytes of text", len(c.Text))
		}
		if d := canonical(base); checked(d) {
			if ok, found := hasSignatureOf(d, c.Blob); !ok {
				if found != "" {
					return mismatch(declared, RuleSignature, "the blob is %s", found)
				}
				if on := builtOn(d); on != "" {
					d = on
				}
				return mismatch(declared, RuleSignature, "the blob does not start with the signature of %s", d)
			}
		}
	}
	return nil
}

// mismatch returns a *MismatchError; it is out of line so that Validate's
// passing path allocates nothing.
func mismatch(declared string, r Rule, format string, args ...any) error {
	return &MismatchError{Declared: declared, Rule: r, Detail: fmt.Sprintf(format, args...)}
}

// syntaxError returns the RuleSyntax error for a declared type that
// parseType rejects.
func syntaxError(declared string) error {
	base, _, err := mime.ParseMediaType(declared)
	if err == nil {
		return mismatch(declared, RuleSyntax, "%q has no subtype", base)
	}
	return mismatch(declared, RuleSyntax, "%v", err)
}

// utf8Charsets holds the charset names (lower case) of UTF-8 and of its
// subset US-ASCII, aliases included.
var utf8Charsets = map[string]bool{
	"utf-8": true, "utf8": true, "csutf8": true, "unicode-1-1-utf-8": true,
	"us-ascii": true, "ascii": true, "us": true, "iso646-us": true, "iso-ir-6": true, "ansi_x3.4-1968": true,
	"ansi_x3.4-1986": true, "iso_646.irv:1991": true, "cp367": true, "ibm367": true, "csascii": true,
}

// isUTF8 reports whether a charset parameter (absent: "") means UTF-8.
func isUTF8(charset string) bool {
	if charset == "" || utf8Charsets[charset] {
		return true
	}
	var lower [32]byte // charset names are ASCII, and short
	if len(charset) > len(lower) {
		return false
	}
	for i := range len(charset) {
		c := charset[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return utf8Charsets[string(lower[:len(charset)])] // no allocation
}

func isJSON(base string) bool { return base == "application/json" || strings.HasSuffix(base, "+json") }

func isXML(base string) bool {
	return base == "application/xml" || base == "text/xml" || strings.HasSuffix(base, "+xml")
}

func invalidAt(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return i
			}
		}
	}
	return len(s)
}

// jsonError says where JSON fails to parse.
func jsonError(s string) error {
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if err == nil {
		return errors.New("invalid JSON")
	}
	return err
}

// wellFormed reports whether s is a well-formed XML document, as
// encoding/xml's strict decoder reads one: one root element, tags that
// nest and match, no text outside the root, known entities; and, which
// encoding/xml does not check, attributes not repeated, one DOCTYPE at
// most, before the root, and no other <!...> declaration. The entities a DOCTYPE's internal subset
// declares are known; a DOCTYPE naming an external DTD (which a
// non-validating parser need not read) makes HTML's entities known too,
// as XHTML uses them.
func wellFormed(s string) error {
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	d.CharsetReader = func(charset string, input io.Reader) (io.Reader, error) {
		if isUTF8(charset) {
			return input, nil
		}
		return nil, errors.New("the XML declares an encoding other than UTF-8, but a text is UTF-8")
	}
	depth, roots, doctype := 0, 0, false
	for {
		tok, err := d.Token() // Token, unlike RawToken, checks that end tags match
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if a, ok := repeatedAttr(tok.Attr); ok {
				return fmt.Errorf("attribute %s repeated in <%s>", a.Local, tok.Name.Local)
			}
			if depth == 0 {
				if roots++; roots > 1 {
					return fmt.Errorf("a second root element <%s>", tok.Name.Local)
				}
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && !isXMLSpace(tok) {
				return errors.New("text outside the root element")
			}
		case xml.Directive: // encoding/xml accepts any <!...>, anywhere
			if doctype || roots > 0 || !bytes.HasPrefix(tok, []byte("DOCTYPE")) {
				return errors.New("a <!" + string(tok[:min(len(tok), 7)]) + "...> declaration out of place")
			}
			doctype = true
			declareEntities(d, tok)
		}
	}
	switch {
	case depth != 0:
		return errors.New("unclosed element") // encoding/xml reports it first
	case roots == 0:
		return errors.New("no root element")
	}
	return nil
}

// repeatedAttr returns an attribute name that attrs hold twice, if any.
func repeatedAttr(attrs []xml.Attr) (xml.Name, bool) {
	if len(attrs) <= 16 {
		for i := range attrs {
			for j := range i {
				if attrs[i].Name == attrs[j].Name {
					return attrs[i].Name, true
				}
			}
		}
		return xml.Name{}, false
	}
	seen := make(map[xml.Name]bool, len(attrs))
	for _, a := range attrs {
		if seen[a.Name] {
			return a.Name, true
		}
		seen[a.Name] = true
	}
	return xml.Name{}, false
}

// isXMLSpace reports whether b is only XML white space.
func isXMLSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}

// declareEntities makes the general entities a DOCTYPE directive declares
// known to d; and, if it names an external DTD, HTML's entities as well.
func declareEntities(d *xml.Decoder, dir xml.Directive) {
	name := func(b []byte) []byte { // the name b starts with after white space
		b = bytes.TrimLeft(b, " \t\r\n")
		if i := bytes.IndexAny(b, " \t\r\n"); i >= 0 {
			return b[:i]
		}
		return b
	}
	rest, ok := bytes.CutPrefix(dir, []byte("DOCTYPE"))
	if !ok {
		return
	}
	if d.Entity == nil {
		d.Entity = map[string]string{}
	}
	head, _, _ := bytes.Cut(rest, []byte("["))
	if after := bytes.TrimLeft(head, " \t\r\n"); len(after) > 0 {
		after = after[len(name(after)):] // the root element's name
		if kw := name(after); string(kw) == "SYSTEM" || string(kw) == "PUBLIC" {
			maps.Copy(d.Entity, xml.HTMLEntity)
		}
	}
	for {
		i := bytes.Index(rest, []byte("<!ENTITY"))
		if i < 0 {
			return
		}
		rest = rest[i+len("<!ENTITY"):]
		if n := name(rest); len(n) > 0 && n[0] != '%' { // not a parameter entity
			d.Entity[string(n)] = ""
		}
	}
}

// A typeInfo is what Validate reads of a declared type.
type typeInfo struct {
	base, charset string
	kind          kind
	ok            bool
}

// recentTypes remembers the last declared type parsed in each of a few
// slots: a server declares few types, and every read of a resource checks
// one of them again. A slot holds one type, so memory stays bounded
// whatever types are declared.
var recentTypes [16]atomic.Pointer[typeEntry]

type typeEntry struct {
	declared string
	info     typeInfo
}

// parsedType returns what parseType and kindOf give for t, from
// recentTypes when t is there.
func parsedType(t string) typeInfo {
	slot := &recentTypes[0]
	if t != "" {
		slot = &recentTypes[(len(t)+int(t[len(t)/2])+int(t[len(t)-1]))&(len(recentTypes)-1)]
	}
	if e := slot.Load(); e != nil && e.declared == t {
		return e.info
	}
	var info typeInfo
	info.base, info.charset, info.ok = parseType(t)
	if info.ok {
		info.kind = kindOf(info.base)
	}
	slot.Store(&typeEntry{declared: t, info: info})
	return info
}
