package mimetype_test

import (
	"errors"
	"fmt"

	"github.com/mcpres/mcpres/mimetype"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func ExampleDetect() {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, r := range []struct {
		name    string
		content []byte
	}{
		{"file:///src/main.go", []byte("package main\n")}, // the extension, confirmed
		{"photo.jpg", png}, // the signature wins
		{"report.docx", []byte("PK\x03\x04\x14\x00")}, // a docx is a zip
		{"any://thing", []byte("hello")},              // net/http's sniffer
		{"logo.svg", nil},                             // no content: the name
		{"file:///srv/data/", nil},                    // a directory
	} {
		typ, text := mimetype.Detect(r.name, r.content)
		fmt.Printf("%-20s %s text=%v\n", r.name, typ, text)
	}
	// Output:
	// file:///src/main.go  text/x-go text=true
	// photo.jpg            image/png text=false
	// report.docx          application/vnd.openxmlformats-officedocument.wordprocessingml.document text=false
	// any://thing          text/plain; charset=utf-8 text=true
	// logo.svg             image/svg+xml text=true
	// file:///srv/data/    inode/directory text=false
}

func ExampleValidate() {
	jpeg := []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	for _, r := range []struct {
		declared string
		c        *mcp.ResourceContents
	}{
		{"application/json", &mcp.ResourceContents{Text: `{"id": 1}`}},
		{"application/json", &mcp.ResourceContents{Text: `{"id": `}},
		{"image/png", &mcp.ResourceContents{Blob: jpeg}},
		{"image/png", &mcp.ResourceContents{Text: "not a picture"}},
		{"text/plain", &mcp.ResourceContents{Blob: []byte{}}}, // an empty text
		{"text/plain; charset=iso-8859-1", &mcp.ResourceContents{Text: "café"}},
	} {
		err := mimetype.Validate(r.declared, r.c)
		var mm *mimetype.MismatchError
		if errors.As(err, &mm) {
			fmt.Printf("%s: broken rule %q: %s\n", r.declared, mm.Rule, mm.Detail)
			continue
		}
		fmt.Printf("%s: ok\n", r.declared)
	}
	// Output:
	// application/json: ok
	// application/json: broken rule "JSON parses": unexpected end of JSON input
	// image/png: broken rule "blob signature matches the declared type": the blob is image/jpeg
	// image/png: broken rule "binary type delivered as blob": delivered as 13 bytes of text
	// text/plain: ok
	// text/plain; charset=iso-8859-1: broken rule "textual type delivered as text": charset iso-8859-1 declared, but a text is UTF-8: deliver a blob in that charset
}
