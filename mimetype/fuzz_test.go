package mimetype

import (
	"encoding/json"
	"errors"
	"mime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzDetect checks that Detect never panics, always names a type that
// parses, decides text as IsTextContent does, and never names a type its
// content contradicts (see checkDetectThenValidate). The seed corpus is
// testdata/fuzz/FuzzDetect.
//
//	go test -run '^$' -fuzz '^FuzzDetect$' -fuzztime 60s ./mimetype/
func FuzzDetect(f *testing.F) {
	f.Add("main.go", []byte("package main\n"))
	f.Add("", []byte(pngHeader))
	f.Fuzz(func(t *testing.T, name string, content []byte) {
		typ, isText := Detect(name, content)
		if _, _, err := mime.ParseMediaType(typ); err != nil {
			t.Fatalf("Detect(%q, %q) = %q, which does not parse: %v", name, content, typ, err)
		}
		if isText && !IsTextual(typ) {
			t.Fatalf("Detect(%q, %q) = %q, text, but the type is not textual", name, content, typ)
		}
		if len(content) > 0 && isText && !IsTextContent(trimCutRune(content)) {
			t.Fatalf("Detect(%q, %q) = %q, text, but the content is not", name, content, typ)
		}
		if got, want := IsTextContent(content), isTextContentRef(content); got != want {
			t.Fatalf("IsTextContent(%q) = %v, want %v", content, got, want)
		}
		if byName := ByExtension(name); byName != "" {
			if _, _, err := mime.ParseMediaType(byName); err != nil {
				t.Fatalf("ByExtension(%q) = %q, which does not parse: %v", name, byName, err)
			}
		}
		if typ2, text2 := Detect(name, content); typ2 != typ || text2 != isText {
			t.Fatalf("Detect(%q, %q) is not deterministic", name, content)
		}
		checkDetectThenValidate(t, name, content)
	})
}

var allRules = map[Rule]bool{
	RuleOneOf: true, RuleSyntax: true, RuleTextual: true, RuleUTF8: true,
	RuleJSON: true, RuleXML: true, RuleBinary: true, RuleSignature: true,
}

// FuzzValidate checks that Validate never panics, that its errors are
// *MismatchErrors matching ErrMismatch and naming a known rule, and that
// what it accepts is consistent with the kind of the declared type. The
// seed corpus is testdata/fuzz/FuzzValidate.
//
//	go test -run '^$' -fuzz '^FuzzValidate$' -fuzztime 60s ./mimetype/
func FuzzValidate(f *testing.F) {
	f.Add("application/json", `{"a":1}`, []byte(nil), false)
	f.Add("image/png", "", []byte(pngHeader), true)
	f.Fuzz(func(t *testing.T, declared, text string, blob []byte, isBlob bool) {
		c := &mcp.ResourceContents{Text: text}
		if isBlob {
			if blob == nil {
				blob = []byte{}
			}
			c.Blob = blob
		}
		base, charset, ok := parseType(declared)
		if wbase, wcharset, wok := parseTypeRef(declared); base != wbase || charset != wcharset || ok != wok {
			t.Fatalf("parseType(%q) = %q, %q, %v; want %q, %q, %v", declared, base, charset, ok, wbase, wcharset, wok)
		}
		err := Validate(declared, c)
		if err != nil {
			var mm *MismatchError
			if !errors.Is(err, ErrMismatch) || !errors.As(err, &mm) {
				t.Fatalf("Validate(%q, %+v) = %T %v: not a *MismatchError matching ErrMismatch", declared, c, err, err)
			}
			if !allRules[mm.Rule] || mm.Declared != declared || !strings.Contains(err.Error(), string(mm.Rule)) {
				t.Fatalf("Validate(%q, %+v) = %+v", declared, c, mm)
			}
			if (mm.Rule == RuleOneOf) != (c.Text != "" && c.Blob != nil || c.Text == "" && c.Blob == nil) {
				t.Fatalf("Validate(%q, %+v) = %v, but RuleOneOf is kept or broken otherwise", declared, c, err)
			}
			return
		}
		// Accepted: the content is of the form its type asks for.
		if c.Text != "" && c.Blob != nil || c.Text == "" && c.Blob == nil {
			t.Fatalf("Validate(%q, %+v) accepts neither or both text and blob", declared, c)
		}
		if !ok {
			t.Fatalf("Validate accepts %q, which does not parse", declared)
		}
		switch {
		case IsBinary(declared) && c.Blob == nil:
			t.Fatalf("Validate(%q) accepts a text for a binary type", declared)
		case IsTextual(declared) && c.Blob != nil && len(c.Blob) > 0 && isUTF8(charset):
			t.Fatalf("Validate(%q) accepts a blob for a UTF-8 textual type", declared)
		case IsTextual(declared) && c.Blob == nil && !isUTF8(charset):
			t.Fatalf("Validate(%q) accepts a text for a non-UTF-8 charset", declared)
		case IsTextual(declared) && c.Blob == nil && isJSON(base) && !jsonValid(c.Text):
			t.Fatalf("Validate(%q) accepts JSON that does not parse: %q", declared, c.Text)
		case c.Blob != nil && checked(canonical(base)) && !Compatible(declared, sniffSignature(c.Blob)):
			t.Fatalf("Validate(%q) accepts a blob without its signature: %q", declared, c.Blob)
		}
		if Validate(declared, nil) == nil {
			t.Fatal("Validate accepts a nil content")
		}
	})
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }
