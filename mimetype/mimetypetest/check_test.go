package mimetypetest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/mimetype/mimetypetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is a testing.TB that records what Check reports instead of
// failing the test. Calling any method it does not override panics (the
// embedded TB is nil): Check must use no other.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

const png = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

func contents(cs ...*mcp.ResourceContents) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: cs}
}

func TestCheckPasses(t *testing.T) {
	for _, tc := range []struct {
		desc, declared string
		res            *mcp.ReadResourceResult
	}{
		{"json", "application/json", contents(&mcp.ResourceContents{URI: "db://u/1", Text: `{"id": 1}`})},
		{"png", "image/png", contents(&mcp.ResourceContents{Blob: []byte(png)})},
		{"empty text as an empty blob", "text/plain", contents(&mcp.ResourceContents{Blob: []byte{}})},
		{"the content's own type wins", "application/json",
			contents(&mcp.ResourceContents{MIMEType: "text/plain", Text: "not json"})},
		{"nothing declared, each content typed", "",
			contents(&mcp.ResourceContents{MIMEType: "text/markdown", Text: "# a"}, &mcp.ResourceContents{MIMEType: "image/png", Blob: []byte(png)})},
		{"several contents", "text/x-go",
			contents(&mcp.ResourceContents{Text: "package a"}, &mcp.ResourceContents{Text: "package b"})},
	} {
		r := &recorder{}
		if ok := mimetypetest.Check(r, tc.declared, tc.res); !ok || len(r.errors) != 0 {
			t.Errorf("%s: Check = %v, reported %q; want true and nothing", tc.desc, ok, r.errors)
		}
	}
}

func TestCheckFails(t *testing.T) {
	for _, tc := range []struct {
		desc, declared string
		res            *mcp.ReadResourceResult
		want           []string // one per report, each a substring
	}{
		{"nil result", "text/plain", nil, []string{"no contents"}},
		{"no contents", "text/plain", contents(), []string{"no contents"}},
		{"invalid json", "application/json", contents(&mcp.ResourceContents{URI: "db://u/1", Text: `{"id":`}),
			[]string{`content 0 (db://u/1)`, "JSON parses"}},
		{"jpeg declared png", "image/png", contents(&mcp.ResourceContents{Blob: []byte("\xff\xd8\xff\xe0\x00\x10JFIF")}),
			[]string{"content 0: ", "the blob is image/jpeg"}},
		{"picture as text", "image/png", contents(&mcp.ResourceContents{Text: "not a picture"}),
			[]string{"binary type delivered as blob"}},
		{"the content's own type is checked", "text/plain",
			contents(&mcp.ResourceContents{MIMEType: "application/json", Text: "not json"}), []string{"JSON parses"}},
		{"no type at all", "", contents(&mcp.ResourceContents{Text: "x"}), []string{"content 0 has no MIME type"}},
		{"nil content", "text/plain", contents(nil), []string{"exactly one of text or blob"}},
		{"empty content", "text/plain", contents(&mcp.ResourceContents{}), []string{"exactly one of text or blob"}},
		{"every bad content reported", "application/json",
			contents(&mcp.ResourceContents{Text: "{}"}, &mcp.ResourceContents{Text: "{"}, &mcp.ResourceContents{Blob: []byte("{}")}),
			[]string{"content 1: ", "content 2: "}},
	} {
		r := &recorder{}
		if mimetypetest.Check(r, tc.declared, tc.res) {
			t.Errorf("%s: Check = true, want false", tc.desc)
		}
		if len(r.errors) == 0 {
			t.Errorf("%s: nothing reported", tc.desc)
			continue
		}
		all := strings.Join(r.errors, "\n")
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: reports %q do not say %q", tc.desc, all, w)
			}
		}
		for _, e := range r.errors {
			if !strings.HasPrefix(e, "mimetypetest: ") {
				t.Errorf("%s: report %q lacks the package prefix", tc.desc, e)
			}
		}
	}
}

func TestCheckReportsEachContent(t *testing.T) {
	r := &recorder{}
	mimetypetest.Check(r, "application/json", contents(&mcp.ResourceContents{Text: "{"}, &mcp.ResourceContents{Text: "["}))
	if len(r.errors) != 2 {
		t.Errorf("reported %d errors (%q), want 2", len(r.errors), r.errors)
	}
}

// TestCheckWithRealT uses Check as a downstream test would.
func TestCheckWithRealT(t *testing.T) {
	read := func() *mcp.ReadResourceResult {
		return contents(&mcp.ResourceContents{URI: "file:///a.json", MIMEType: "application/json", Text: `{"ok":true}`})
	}
	if !mimetypetest.Check(t, "application/json", read()) {
		t.Fatal("Check failed a good read")
	}
}
