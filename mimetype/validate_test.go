package mimetype

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func text(s string) *mcp.ResourceContents { return &mcp.ResourceContents{URI: "test://r", Text: s} }
func blob(s string) *mcp.ResourceContents {
	return &mcp.ResourceContents{URI: "test://r", Blob: []byte(s)}
}
func emptyBlob() *mcp.ResourceContents       { return &mcp.ResourceContents{URI: "test://r", Blob: []byte{}} }
func both(t, b string) *mcp.ResourceContents { return &mcp.ResourceContents{Text: t, Blob: []byte(b)} }

func manyAttrs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, ` a%d="%d"`, i, i)
	}
	return b.String()
}

type validateCase struct {
	desc     string
	declared string
	c        *mcp.ResourceContents
	rule     Rule   // "" if c passes
	detail   string // in the error's Detail, if set
}

var validateCases = []validateCase{
	// RuleOneOf.
	{"text", "text/plain", text("hi"), "", ""},
	{"blob", "image/png", blob(pngHeader), "", ""},
	{"nil content", "text/plain", nil, RuleOneOf, "no content"},
	{"both", "text/plain", both("hi", "hi"), RuleOneOf, "both"},
	{"text and an empty blob", "text/plain", both("hi", ""), RuleOneOf, "both"},
	{"neither", "text/plain", &mcp.ResourceContents{URI: "test://r"}, RuleOneOf, "neither"},
	{"neither, binary", "image/png", &mcp.ResourceContents{}, RuleOneOf, "neither"},

	// RuleSyntax.
	{"empty type", "", text("hi"), RuleSyntax, "no media type"},
	{"no subtype", "text", text("hi"), RuleSyntax, "no subtype"},
	{"empty subtype", "text/", text("hi"), RuleSyntax, ""},
	{"two slashes", "text/plain/x", text("hi"), RuleSyntax, ""},
	{"space in type", "text/pl ain", text("hi"), RuleSyntax, ""},
	{"parameter without value", "image/png; q", blob(pngHeader), RuleSyntax, "invalid media parameter"},
	{"duplicate parameter", "text/plain; charset=utf-8; charset=latin1", text("hi"), RuleSyntax, "duplicate"},
	{"upper case", "Text/Plain; Charset=UTF-8", text("hi"), "", ""},
	{"quoted parameter", `text/plain; charset="utf-8"`, text("hi"), "", ""},
	{"spaces", " text/plain ; format=flowed", text("hi"), "", ""},
	{"unknown type, text", "application/x-custom", text("anything"), "", ""},
	{"unknown type, blob", "application/x-custom", blob("\x00\x01"), "", ""},
	{"unknown type, empty blob", "model/x-thing", emptyBlob(), "", ""},

	// RuleTextual.
	{"text as a blob", "text/plain", blob("hello"), RuleTextual, "blob of 5 bytes"},
	{"markdown as a blob", "text/markdown", blob("# hi"), RuleTextual, ""},
	{"json as a blob", "application/json", blob(`{}`), RuleTextual, ""},
	{"svg as a blob", "image/svg+xml", blob(`<svg/>`), RuleTextual, ""},
	{"go as a blob", "text/x-go", blob("package main"), RuleTextual, ""},
	{"utf-8 charset as a blob", "text/plain; charset=utf-8", blob("hello"), RuleTextual, ""},
	{"empty blob for text", "text/plain", emptyBlob(), "", ""},
	{"empty blob for utf-8 text", "text/plain; charset=UTF-8", emptyBlob(), "", ""},
	{"empty blob for us-ascii text", "text/csv; charset=us-ascii", emptyBlob(), "", ""},
	{"empty blob for markdown", "text/markdown", emptyBlob(), "", ""},
	{"empty blob for yaml", "application/yaml", emptyBlob(), "", ""},
	{"empty blob for json", "application/json", emptyBlob(), RuleJSON, ""}, // empty is not JSON
	{"empty blob for xml", "application/xml", emptyBlob(), RuleXML, "no root element"},
	{"latin-1 as text", "text/plain; charset=iso-8859-1", text("café"), RuleTextual, "charset iso-8859-1"},
	{"utf-16 as text", "text/plain; charset=UTF-16", text("hi"), RuleTextual, ""},
	{"latin-1 as a blob", "text/plain; charset=iso-8859-1", blob("caf\xe9"), "", ""},
	{"utf-16 as a blob", "text/csv; charset=utf-16le", blob("\xff\xfea\x00,\x00b\x00"), "", ""},
	{"empty blob in latin-1", "text/plain; charset=iso-8859-1", emptyBlob(), "", ""},
	{"json in utf-16 as a blob", "application/json; charset=utf-16", blob("\xff\xfe{\x00}\x00"), "", ""},
	{"utf8 alias", "text/plain; charset=utf8", text("hi"), "", ""},
	{"ascii alias", "text/plain; charset=ANSI_X3.4-1968", text("hi"), "", ""},

	// RuleUTF8.
	{"utf-8 text", "text/plain", text("héllo, 世界"), "", ""},
	{"latin-1 in a text", "text/plain", text("caf\xe9"), RuleUTF8, "byte 3"},
	{"invalid utf-8 in json", "application/json", text(`{"a":"` + "\xff" + `"}`), RuleUTF8, "byte 6"},
	{"surrogate", "text/markdown", text("a\xed\xa0\x80"), RuleUTF8, "byte 1"},
	{"control characters are text", "text/plain", text("bell\a nul\x00"), "", ""},

	// RuleJSON.
	{"json", "application/json", text(`{"a": [1, 2.5, "x", null, true]}`), "", ""},
	{"json scalar", "application/json", text(`42`), "", ""},
	{"json with charset", "application/json; charset=utf-8", text(`[]`), "", ""},
	{"truncated json", "application/json", text(`{"a":`), RuleJSON, "unexpected end"},
	{"trailing garbage", "application/json", text(`{} x`), RuleJSON, "after top-level value"},
	{"json with a bom", "application/json", text("\ufeff{}"), RuleJSON, ""},
	{"+json", "application/ld+json", text(`{"@context": "x"}`), "", ""},
	{"+json invalid", "application/vnd.api+json", text(`{data: 1}`), RuleJSON, "invalid character"},
	{"json-like text/plain", "text/plain", text(`{"a":`), "", ""},
	{"ndjson is not one value", "application/x-ndjson", text("{}\n{}\n"), "", ""},

	// RuleXML.
	{"xml", "application/xml", text(`<?xml version="1.0" encoding="UTF-8"?><a x="1"><b>t</b><c/></a>`), "", ""},
	{"xml with comments and pi outside", "text/xml", text("<!-- c --><?pi x?>\n<a/>\n<!-- end -->\n"), "", ""},
	{"xml with namespaces", "application/xml", text(`<r xmlns:p="urn:p"><p:a/></r>`), "", ""},
	{"xml with cdata", "application/xml", text(`<a><![CDATA[<not a tag>]]></a>`), "", ""},
	{"xml with entities", "application/xml", text(`<a>&lt;&amp;&#233;&#x263A;</a>`), "", ""},
	{"internal dtd entity", "application/xml", text(`<!DOCTYPE a [<!ENTITY who "world">]><a>hello &who;</a>`), "", ""},
	{"xhtml entity from the external dtd", "application/xhtml+xml",
		text(`<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd"><html><body>a&nbsp;b</body></html>`), "", ""},
	{"undeclared entity", "application/xml", text(`<a>&nbsp;</a>`), RuleXML, "entity"},
	{"parameter entity is not general", "application/xml", text(`<!DOCTYPE a [<!ENTITY % p "x">]><a>&p;</a>`), RuleXML, "entity"},
	{"repeated attribute", "application/xml", text(`<a><b x="1" y="2" x="3"/></a>`), RuleXML, "attribute x repeated in <b>"},
	{"many attributes, one repeated", "application/xml", text("<a" + manyAttrs(40) + ` a7="x"/>`), RuleXML, "attribute a7 repeated"},
	{"many attributes", "application/xml", text("<a" + manyAttrs(40) + "/>"), "", ""},
	{"same local name, other namespaces", "application/xml", text(`<a xmlns:p="urn:p" xmlns:q="urn:q" p:x="1" q:x="2" x="3"/>`), "", ""},
	{"two doctypes", "application/xml", text(`<!DOCTYPE a><!DOCTYPE a><a/>`), RuleXML, "out of place"},
	{"doctype after the root", "application/xml", text(`<a/><!DOCTYPE a>`), RuleXML, "out of place"},
	{"doctype in the root", "application/xml", text(`<a><!DOCTYPE a></a>`), RuleXML, "out of place"},
	{"unknown declaration", "application/xml", text(`<a><!FOO bar></a>`), RuleXML, "out of place"},
	{"mismatched tags", "application/xml", text(`<a><b></a></b>`), RuleXML, ""},
	{"wrong end tag", "text/xml", text(`<a></b>`), RuleXML, ""},
	{"unclosed element", "application/xml", text(`<a><b></b>`), RuleXML, ""},
	{"stray end tag", "application/xml", text(`<a/></a>`), RuleXML, ""},
	{"multiple roots", "application/xml", text(`<a/><b/>`), RuleXML, "second root element <b>"},
	{"text after the root", "application/xml", text(`<a/>junk`), RuleXML, "text outside the root"},
	{"text before the root", "application/xml", text(`junk<a/>`), RuleXML, "text outside the root"},
	{"no root", "application/xml", text(`<?xml version="1.0"?>`), RuleXML, "no root element"},
	{"only text", "application/xml", text(`hello`), RuleXML, "text outside the root"},
	{"not utf-8 encoding declared", "application/xml", text(`<?xml version="1.0" encoding="ISO-8859-1"?><a/>`), RuleXML, "encoding"},
	{"us-ascii encoding declared", "application/xml", text(`<?xml version="1.0" encoding="US-ASCII"?><a/>`), "", ""},
	{"illegal character", "application/xml", text("<a>\x01</a>"), RuleXML, "illegal character"},
	{"unquoted attribute", "application/xml", text(`<a x=1/>`), RuleXML, ""},
	{"svg as text", "image/svg+xml", text(`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`), "", ""},
	{"svg broken", "image/svg+xml", text(`<svg><g></svg>`), RuleXML, ""},
	{"+xml", "application/atom+xml", text(`<feed xmlns="http://www.w3.org/2005/Atom"></feed>`), "", ""},
	{"+xml two roots", "application/rss+xml", text(`<rss/><rss/>`), RuleXML, "second root"},
	{"html is not xml", "text/html", text(`<p>unclosed<br>`), "", ""},

	// RuleBinary.
	{"png as text", "image/png", text("not a picture"), RuleBinary, "13 bytes of text"},
	{"pdf as text", "application/pdf", text("%PDF-1.4"), RuleBinary, ""},
	{"octet-stream as text", "application/octet-stream", text("x"), RuleBinary, ""},
	{"font as text", "font/woff2", text("x"), RuleBinary, ""},
	{"docx as text", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", text("x"), RuleBinary, ""},
	{"directory as text", Directory, text("a\nb\n"), RuleBinary, ""},
	{"octet-stream", "application/octet-stream", blob("\x00\x01anything"), "", ""},
	{"empty octet-stream", "application/octet-stream", emptyBlob(), "", ""},

	// RuleSignature.
	{"png", "image/png", blob(pngHeader), "", ""},
	{"png with parameters", "image/png; name=logo", blob(pngHeader), "", ""},
	{"png upper case", "IMAGE/PNG", blob(pngHeader), "", ""},
	{"png that is a jpeg", "image/png", blob(jpegHeader), RuleSignature, "the blob is image/jpeg"},
	{"png of nothing", "image/png", blob("hello"), RuleSignature, "does not start with the signature of image/png"},
	{"empty png", "image/png", emptyBlob(), RuleSignature, ""},
	{"jpeg", "image/jpeg", blob(jpegHeader), "", ""},
	{"image/jpg alias", "image/jpg", blob(jpegHeader), "", ""},
	{"image/jpg alias, png bytes", "image/jpg", blob(pngHeader), RuleSignature, "image/png"},
	{"gif", "image/gif", blob(gifHeader), "", ""},
	{"webp", "image/webp", blob(webpHeader), "", ""},
	{"webp that is a wav", "image/webp", blob(wavHeader), RuleSignature, "audio/wav"},
	{"icon alias", "image/x-icon", blob("\x00\x00\x01\x00\x01\x00\x10\x10"), "", ""},
	{"apng", "image/apng", blob(pngHeader), "", ""},
	{"apng that is a gif", "image/apng", blob(gifHeader), RuleSignature, "image/gif"},
	{"avif", "image/avif", blob(avifHeader), "", ""},
	{"avif that is a heic", "image/avif", blob(heicHeader), RuleSignature, "image/heic"},
	{"heif holding an avif", "image/heif", blob(avifHeader), "", ""},
	{"wav", "audio/wav", blob(wavHeader), "", ""},
	{"audio/x-wav alias", "audio/x-wav", blob(wavHeader), "", ""},
	{"audio/wave alias", "audio/wave", blob(wavHeader), "", ""},
	{"wav that is a webp", "audio/x-wav", blob(webpHeader), RuleSignature, "image/webp"},
	{"mp3 with id3", "audio/mpeg", blob(mp3ID3), "", ""},
	{"mp3 frame", "audio/mpeg", blob(mp3Frame), "", ""},
	{"audio/mp3 alias", "audio/mp3", blob(mp3Frame), "", ""},
	{"mp3 that is aac", "audio/mpeg", blob(aacADTS), RuleSignature, "does not start"},
	{"mp3 that is an ogg", "audio/mpeg", blob(oggHeader), RuleSignature, "audio/ogg"},
	{"aac in adts", "audio/aac", blob(aacADTS), "", ""},            // no signature: no check
	{"aac of anything", "audio/aac", blob("\x00\x01\x02"), "", ""}, // no signature: no check
	{"aac in mp4", "audio/aac", blob(m4aHeader), "", ""},           // no signature: no check
	{"ogg", "audio/ogg", blob(oggHeader), "", ""},
	{"video/ogg alias", "video/ogg", blob(oggHeader), "", ""},
	{"mp4", "video/mp4", blob(mp4Header), "", ""},
	{"m4a", "audio/mp4", blob(m4aHeader), "", ""},
	{"m4a holding isom", "audio/mp4", blob(mp4Header), "", ""},
	{"mp4 that is a webm", "video/mp4", blob("\x1a\x45\xdf\xa3\x9f\x42\x86\x81"), RuleSignature, "video/webm"},
	{"matroska is webm", "video/x-matroska", blob("\x1a\x45\xdf\xa3\x9f\x42\x86\x81"), "", ""},
	{"pdf", "application/pdf", blob(pdfHeader), "", ""},
	{"pdf that is a zip", "application/pdf", blob(zipHeader), RuleSignature, "application/zip"},
	{"zip", "application/zip", blob(zipHeader), "", ""},
	{"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", blob(zipHeader), "", ""},
	{"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", blob(zipHeader), "", ""},
	{"odt", "application/vnd.oasis.opendocument.text", blob(zipHeader), "", ""},
	{"epub", "application/epub+zip", blob(zipHeader), "", ""},
	{"jar", "application/java-archive", blob(zipHeader), "", ""},
	{"docx that is a pdf", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", blob(pdfHeader), RuleSignature, "application/pdf"},
	{"epub of nothing", "application/epub+zip", blob("\x00\x00\x00\x00"), RuleSignature, "does not start with the signature of application/zip"},
	{"zip that is a docx is fine, not the reverse", "application/zip", blob(zipHeader), "", ""},
	{"gzip", "application/gzip", blob(gzipHeader), "", ""},
	{"x-gzip alias", "application/x-gzip", blob(gzipHeader), "", ""},
	{"tar.gz", "application/x-compressed-tar", blob(gzipHeader), "", ""},
	{"wasm", "application/wasm", blob(wasmHeader), "", ""},
	{"wasm that is text", "application/wasm", blob("(module)"), RuleSignature, ""},
	{"tar, no signature here", "application/x-tar", blob("anything"), "", ""},
}

func TestValidate(t *testing.T) {
	for _, tc := range validateCases {
		err := Validate(tc.declared, tc.c)
		if tc.rule == "" {
			if err != nil {
				t.Errorf("%s: Validate(%q) = %v, want nil", tc.desc, tc.declared, err)
			}
			continue
		}
		var mm *MismatchError
		switch {
		case err == nil:
			t.Errorf("%s: Validate(%q) = nil, want %s", tc.desc, tc.declared, tc.rule)
		case !errors.As(err, &mm):
			t.Errorf("%s: Validate(%q) = %T %v, want a *MismatchError", tc.desc, tc.declared, err, err)
		case mm.Rule != tc.rule:
			t.Errorf("%s: Validate(%q) broke %q (%v), want %q", tc.desc, tc.declared, mm.Rule, err, tc.rule)
		case !errors.Is(err, ErrMismatch):
			t.Errorf("%s: errors.Is(%v, ErrMismatch) = false", tc.desc, err)
		case mm.Declared != tc.declared:
			t.Errorf("%s: Declared = %q, want %q", tc.desc, mm.Declared, tc.declared)
		case !strings.Contains(mm.Detail, tc.detail):
			t.Errorf("%s: Detail %q does not say %q", tc.desc, mm.Detail, tc.detail)
		case !strings.Contains(err.Error(), string(tc.rule)) || !strings.Contains(err.Error(), ErrMismatch.Error()):
			t.Errorf("%s: Error() = %q: want the rule and ErrMismatch's text", tc.desc, err)
		}
	}
}

// TestValidateEveryRule checks that validateCases has a passing and a
// failing case for every rule.
func TestValidateEveryRule(t *testing.T) {
	fails := map[Rule]int{}
	for _, tc := range validateCases {
		fails[tc.rule]++
	}
	for _, r := range []Rule{RuleOneOf, RuleSyntax, RuleTextual, RuleUTF8, RuleJSON, RuleXML, RuleBinary, RuleSignature} {
		if fails[r] == 0 {
			t.Errorf("no failing case for %s", r)
		}
	}
	if fails[""] == 0 {
		t.Error("no passing case")
	}
}

// TestValidateSignatures checks every signature against its own type, and
// against every other signed type it is not compatible with.
func TestValidateSignatures(t *testing.T) {
	for _, tc := range signatureCases {
		if err := Validate(tc.want, blob(tc.content)); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if err := Validate(tc.want, text(tc.content)); !isRule(err, RuleBinary) {
			t.Errorf("%s as text: %v, want %s", tc.name, err, RuleBinary)
		}
		for other := range signed {
			if Compatible(other, tc.want) {
				continue
			}
			if err := Validate(other, blob(tc.content)); !isRule(err, RuleSignature) {
				t.Errorf("%s declared %s: %v, want %s", tc.name, other, err, RuleSignature)
			}
		}
	}
}

func isRule(err error, r Rule) bool {
	var mm *MismatchError
	return errors.As(err, &mm) && mm.Rule == r
}

func TestMismatchError(t *testing.T) {
	err := Validate("image/png", blob(jpegHeader))
	const want = `content does not match its declared type: "image/png": blob signature matches the declared type: the blob is image/jpeg`
	if err == nil || err.Error() != want {
		t.Fatalf("Error() = %v, want %s", err, want)
	}
	if errors.Is(err, errors.New(ErrMismatch.Error())) {
		t.Error("errors.Is matches an unrelated error")
	}
}

// TestDetectThenValidate checks Detect's promise: content delivered as
// Detect says (a text or a blob) passes Validate for the type Detect
// names, but for the JSON and XML syntax.
func TestDetectThenValidate(t *testing.T) {
	var contents []string
	for _, tc := range signatureCases {
		contents = append(contents, tc.content)
	}
	contents = append(contents, "hello", "<html>hi", `<?xml version="1.0"?><a/>`, `{"k":1}`, "\x00\x01", "\xff\xfeh\x00",
		"GIF89a is a format", "caf\xe9", "caf\xe9 crème", "日本"[:4], "\x00\x00\x01\x00\x00\x00", "%!PS-Adobe-3.0\n\x01", aacADTS, "hi\x01")
	names := []string{"", "x", "a.txt", "a.json", "a.png", "a.jpg", "a.mp3", "a.docx", "a.bin", "a.tar", "a.svg", "a.csv", "a.aac"}
	for _, name := range names {
		for _, content := range contents {
			checkDetectThenValidate(t, name, []byte(content))
		}
	}
}

// checkDetectThenValidate fails t if content, delivered as Detect(name,
// content) says, breaks a rule other than RuleJSON and RuleXML.
func checkDetectThenValidate(t testing.TB, name string, content []byte) {
	t.Helper()
	if len(content) == 0 {
		return // judged by the name alone
	}
	typ, isText := Detect(name, content)
	c := &mcp.ResourceContents{Blob: content}
	if isText {
		c = &mcp.ResourceContents{Text: string(trimCutRune(content))}
	}
	if err := Validate(typ, c); err != nil && !isRule(err, RuleJSON) && !isRule(err, RuleXML) {
		t.Errorf("Detect(%q, %q) = %q, %v; delivered so: %v", name, content, typ, isText, err)
	}
}

func TestValidateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	json := text(`{"a": [1, 2, 3], "b": {"c": "d"}}`)
	png := blob(pngHeader)
	plain := text("hello")
	for _, tc := range []struct {
		declared string
		c        *mcp.ResourceContents
	}{
		{"application/json", json}, {"application/json; charset=utf-8", json}, {"image/png", png},
		{"text/plain", plain}, {"text/plain; charset=UTF-8", plain}, {"text/plain", emptyBlob()},
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", blob(zipHeader)},
	} {
		if n := testing.AllocsPerRun(100, func() { _ = Validate(tc.declared, tc.c) }); n != 0 {
			t.Errorf("Validate(%q) allocates %v times, want 0", tc.declared, n)
		}
	}
}
