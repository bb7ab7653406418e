package audit_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listServer returns plainServer with a text resource at each of uris, so
// that it advertises resources and a read of them succeeds.
func listServer(uris ...string) *mcp.Server {
	s := plainServer()
	for _, uri := range uris {
		s.AddResource(&mcp.Resource{URI: uri, Name: "r", MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "x"}}}, nil
			})
	}
	return s
}

// listRes returns a text resource listing.
func listRes(uri, name string) *mcp.Resource {
	return &mcp.Resource{URI: uri, Name: name, MIMEType: "text/plain"}
}

// listTmpl returns a template listing.
func listTmpl(uriTemplate, name string) *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{URITemplate: uriTemplate, Name: name, MIMEType: "text/plain"}
}

// cursorOf returns the cursor of a list request.
func cursorOf(req mcp.Request) string {
	switch p := req.GetParams().(type) {
	case *mcp.ListResourcesParams:
		return p.Cursor
	case *mcp.ListResourceTemplatesParams:
		return p.Cursor
	}
	return ""
}

// errInvalidCursor is the answer the spec asks for to an invalid cursor.
var errInvalidCursor = &jsonrpc.Error{Code: -32602, Message: "invalid cursor"}

// forgePages makes s answer method (a list method) with the page of each
// cursor in pages, and any other cursor with -32602.
func forgePages[R mcp.Result](s *mcp.Server, method string, pages map[string]R) {
	forge(s, method, func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
		if p, ok := pages[cursorOf(req)]; ok {
			return p, nil
		}
		return nil, errInvalidCursor
	})
}

// resourcePages forges resources/list.
func resourcePages(s *mcp.Server, pages map[string]*mcp.ListResourcesResult) {
	forgePages(s, "resources/list", pages)
}

// templatePages forges resources/templates/list.
func templatePages(s *mcp.Server, pages map[string]*mcp.ListResourceTemplatesResult) {
	forgePages(s, "resources/templates/list", pages)
}

// walks forges resources/list to answer the first page of each walk with
// the resources walk(n) returns, n counting walks from 1, and any cursor
// with -32602.
func walks(s *mcp.Server, walk func(n int64) []*mcp.Resource) {
	var n atomic.Int64
	forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
		if cursorOf(req) != "" {
			return nil, errInvalidCursor
		}
		return &mcp.ListResourcesResult{Resources: walk(n.Add(1))}, nil
	})
}

// A registry that pages both lists breaks none of the listing's rules,
// and the audit keeps every resource and template, in list order.
func TestListsClean(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			reg, err := resource.NewRegistry(&resource.Options{Logger: quiet, PageSize: 10})
			require.NoError(t, err)
			t.Cleanup(func() { reg.Close() })
			for i := range 250 {
				uri := fmt.Sprintf("docs://notes/%03d.txt", i)
				require.NoError(t, reg.Add(listRes(uri, fmt.Sprintf("note %d", i)), resource.Text("note")))
			}
			for i := range 12 {
				require.NoError(t, reg.AddTemplate(listTmpl(fmt.Sprintf("items://t%02d/{id}", i), fmt.Sprintf("items %d", i)),
					func(_ context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
						return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item"}}}, nil
					}))
			}
			server, err := reg.NewServer(&mcp.Implementation{Name: "clean"}, &mcp.ServerOptions{Logger: quiet})
			require.NoError(t, err)
			r := run(t, connect(t, server, version, nil), nil)
			assert.Empty(t, ruleIDs(r), "%s", r)
			assert.Equal(t, 250, r.Resources)
			assert.Equal(t, 12, r.Templates)
		})
	}
}

// A server without resources is not audited, and says so.
func TestListsSkipped(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			r := run(t, connect(t, plainServer(), version, nil), nil)
			assert.Empty(t, rulesIn(r, "list.", "cursor."), "%s", r)
			assert.Contains(t, strings.Join(r.Skipped, "\n"), "does not advertise resources")
			assert.Zero(t, r.Resources)
		})
	}
}

// Each broken server breaks the listing rules its case names, and no
// other; seen, if set, is in what the finding of the first says.
func TestListRules(t *testing.T) {
	t.Parallel()
	b64 := base64.StdEncoding.EncodeToString
	cases := []struct {
		name   string
		uris   []string // resources the server has, besides test://a and test://b
		break_ func(s *mcp.Server)
		want   []string
		seen   string
	}{
		{name: "a cursor that comes back", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{
				"":   {Resources: []*mcp.Resource{listRes("test://a", "a")}, NextCursor: "k1"},
				"k1": {Resources: []*mcp.Resource{listRes("test://b", "b")}, NextCursor: "k1"},
			})
		}, want: []string{"list.ends"}, seen: "given again"},
		{name: "a page that fails", break_: func(s *mcp.Server) {
			forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
				switch cursorOf(req) {
				case "":
					return &mcp.ListResourcesResult{Resources: []*mcp.Resource{listRes("test://a", "a")}, NextCursor: "k1"}, nil
				case "k1":
					return nil, &jsonrpc.Error{Code: -32603, Message: "internal"}
				}
				return nil, errInvalidCursor
			})
		}, want: []string{"list.ends"}, seen: "page 2"},
		{name: "a URI on two pages", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{
				"":   {Resources: []*mcp.Resource{listRes("test://a", "a"), listRes("test://b", "b")}, NextCursor: "k1"},
				"k1": {Resources: []*mcp.Resource{listRes("test://a", "a")}},
			})
		}, want: []string{"list.no-repeats"}, seen: "test://a"},
		{name: "a URI template listed twice", break_: func(s *mcp.Server) {
			templatePages(s, map[string]*mcp.ListResourceTemplatesResult{
				"": {ResourceTemplates: []*mcp.ResourceTemplate{listTmpl("test://t/{id}", "t"), listTmpl("test://t/{id}", "t")}},
			})
		}, want: []string{"list.no-repeats"}, seen: "test://t/{id}"},
		{name: "a page skipped by the second walk", break_: func(s *mcp.Server) {
			walks(s, func(n int64) []*mcp.Resource {
				if n == 1 {
					return []*mcp.Resource{listRes("test://a", "a"), listRes("test://b", "b")}
				}
				return []*mcp.Resource{listRes("test://a", "a")}
			})
		}, want: []string{"list.stable"}, seen: `did not list "test://b"`},
		{name: "a list reordered by the second walk", break_: func(s *mcp.Server) {
			walks(s, func(n int64) []*mcp.Resource {
				if n == 1 {
					return []*mcp.Resource{listRes("test://a", "a"), listRes("test://b", "b")}
				}
				return []*mcp.Resource{listRes("test://b", "b"), listRes("test://a", "a")}
			})
		}, want: []string{"list.stable"}, seen: "another order"},
		{name: "any cursor accepted", break_: func(s *mcp.Server) {
			forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
				if cursorOf(req) == "" {
					return &mcp.ListResourcesResult{Resources: []*mcp.Resource{listRes("test://a", "a")}, NextCursor: "k1"}, nil
				}
				return &mcp.ListResourcesResult{Resources: []*mcp.Resource{listRes("test://b", "b")}}, nil
			})
		}, want: []string{"cursor.invalid"}, seen: "answered with a page"},
		{name: "an invalid cursor as an internal error", break_: func(s *mcp.Server) {
			forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
				if cursorOf(req) == "" {
					return &mcp.ListResourcesResult{Resources: []*mcp.Resource{listRes("test://a", "a")}}, nil
				}
				return nil, &jsonrpc.Error{Code: -32603, Message: "bad cursor"}
			})
		}, want: []string{"cursor.invalid"}, seen: "error -32603"},
		{name: "a cursor that is base64 of a URI", break_: func(s *mcp.Server) {
			c := b64([]byte("test://a"))
			resourcePages(s, map[string]*mcp.ListResourcesResult{
				"": {Resources: []*mcp.Resource{listRes("test://a", "a")}, NextCursor: c},
				c:  {Resources: []*mcp.Resource{listRes("test://b", "b")}},
			})
		}, want: []string{"cursor.opaque"}, seen: `"test://a"`},
		{name: "a cursor that is unpadded URL base64", break_: func(s *mcp.Server) {
			c := base64.RawURLEncoding.EncodeToString([]byte(`{"after":"test://a?x=1"}`))
			resourcePages(s, map[string]*mcp.ListResourcesResult{
				"": {Resources: []*mcp.Resource{listRes("test://a?x=1", "a")}, NextCursor: c},
				c:  {Resources: []*mcp.Resource{listRes("test://b", "b")}},
			})
		}, uris: []string{"test://a?x=1"}, want: []string{"cursor.opaque"}},
		{name: "a cursor that spells a name", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{
				"":            {Resources: []*mcp.Resource{listRes("test://a", "alpha")}, NextCursor: "after alpha"},
				"after alpha": {Resources: []*mcp.Resource{listRes("test://b", "b")}},
			})
		}, want: []string{"cursor.opaque"}, seen: `"alpha"`},
		{name: "a string that is not a URI", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{listRes("test://a", "a"), listRes("not a uri", "x")}}})
		}, want: []string{"list.uri"}, seen: "not a uri"},
		{name: "a relative URI", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{listRes("/notes/a.txt", "a")}}})
		}, want: []string{"list.uri"}, seen: "no scheme"},
		// Not a control character but a tab: a read of a URI holding
		// one, by a later step, ends go-sdk's session.
		{name: "a tab", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{listRes("test://a\tb", "a")}}})
		}, want: []string{"list.uri"}, seen: `"\t" at byte 8`},
		{name: "a bad escape", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{listRes("test://a/%zz", "a")}}})
		}, want: []string{"list.uri"}, seen: "does not parse"},
		{name: "an empty URI", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{listRes("test://a", "a"), listRes("", "empty")}}})
		}, want: []string{"list.uri"}, seen: "no URI"},
		{name: "a URI with credentials", uris: []string{"https://u:p@example.com/x"}, want: []string{"list.uri-credentials"}, seen: "https://***:***@example.com/x"},
		{name: "a resource without a name", break_: func(s *mcp.Server) {
			resourcePages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{listRes("test://a", "")}}})
		}, want: []string{"list.name"}},
		{name: "a template without a name", break_: func(s *mcp.Server) {
			templatePages(s, map[string]*mcp.ListResourceTemplatesResult{"": {ResourceTemplates: []*mcp.ResourceTemplate{listTmpl("test://t/{id}", "")}}})
		}, want: []string{"list.name"}},
		{name: "a template without a URI template", break_: func(s *mcp.Server) {
			templatePages(s, map[string]*mcp.ListResourceTemplatesResult{"": {ResourceTemplates: []*mcp.ResourceTemplate{listTmpl("", "t")}}})
		}, want: []string{"list.uri-template"}},
	}
	for _, tc := range cases {
		for _, version := range eras {
			t.Run(tc.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				s := listServer(append([]string{"test://a", "test://b"}, tc.uris...)...)
				if tc.break_ != nil {
					tc.break_(s)
				}
				r := run(t, connect(t, s, version, nil), nil)
				assert.Equal(t, tc.want, rulesIn(r, "list.", "cursor."), "%s", r)
				if seen := findingsOf(r, tc.want[0]); tc.seen != "" && assert.NotEmpty(t, seen) {
					assert.Contains(t, seen[0], tc.seen)
				}
			})
		}
	}
}

// Each forged cursor is sent, and one the server accepts is reported as
// what it is.
func TestListForgedCursors(t *testing.T) {
	t.Parallel()
	const real = "tok-12345678"
	cases := []struct {
		name   string
		accept func(cursor string) bool
		seen   string
	}{
		{"garbage", func(c string) bool { return c == "not-a-cursor" }, "a garbage cursor"},
		{"tampered", func(c string) bool { return len(c) == len(real) && c != "not-a-cursor" }, "its cursor tampered with"},
		{"truncated", func(c string) bool { return c != "" && strings.HasPrefix(real, c) }, "its cursor cut short"},
	}
	for _, tc := range cases {
		for _, version := range eras {
			t.Run(tc.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				s := listServer("test://a", "test://b")
				forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
					switch c := cursorOf(req); {
					case c == "":
						return &mcp.ListResourcesResult{Resources: []*mcp.Resource{listRes("test://a", "a")}, NextCursor: real}, nil
					case c == real || tc.accept(c):
						return &mcp.ListResourcesResult{Resources: []*mcp.Resource{listRes("test://b", "b")}}, nil
					}
					return nil, errInvalidCursor
				})
				r := run(t, connect(t, s, version, nil), nil)
				assert.Equal(t, []string{"cursor.invalid"}, rulesIn(r, "list.", "cursor."), "%s", r)
				seen := findingsOf(r, "cursor.invalid")
				if assert.Len(t, seen, 1) {
					assert.Contains(t, seen[0], tc.seen)
					assert.True(t, strings.HasPrefix(seen[0], "resources/list: "), seen[0])
				}
			})
		}
	}
}

// A cursor of one list method that the other takes as a position is
// reported, both ways, as forgeable (ADVICE).
func TestListCrossCursors(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			s := listServer("test://a", "test://b")
			resourcePages(s, map[string]*mcp.ListResourcesResult{
				"":   {Resources: []*mcp.Resource{listRes("test://a", "a")}, NextCursor: "r2"},
				"r2": {Resources: []*mcp.Resource{listRes("test://b", "b")}},
				"t2": {Resources: []*mcp.Resource{listRes("test://b", "b")}},
			})
			templatePages(s, map[string]*mcp.ListResourceTemplatesResult{
				"":   {ResourceTemplates: []*mcp.ResourceTemplate{listTmpl("test://t/{id}", "t")}, NextCursor: "t2"},
				"t2": {ResourceTemplates: []*mcp.ResourceTemplate{listTmpl("test://u/{id}", "u")}},
				"r2": {ResourceTemplates: []*mcp.ResourceTemplate{listTmpl("test://u/{id}", "u")}},
			})
			r := run(t, connect(t, s, version, nil), nil)
			assert.Equal(t, []string{"cursor.forgeable"}, rulesIn(r, "list.", "cursor."), "%s", r)
			seen := findingsOf(r, "cursor.forgeable")
			require.Len(t, seen, 2)
			assert.Contains(t, seen[0], `resources/list: a cursor of the other list method ("t2")`)
			assert.Contains(t, seen[1], `resources/templates/list: a cursor of the other list method ("r2")`)
			assert.Equal(t, 2, r.Resources)
			assert.Equal(t, 2, r.Templates)
		})
	}
}

// Cursors that are positions anyone can write, a number or a number in
// base64 (the specification's own example, {"page": 3}), are found by
// their neighbours; a server that checks them is not.
func TestListForgeableCursors(t *testing.T) {
	t.Parallel()
	items := []*mcp.Resource{listRes("test://a", "a"), listRes("test://b", "b"), listRes("test://c", "c")}
	// offsets serves pages of one item at cursors written by write; with
	// strict, only at the cursors it gave.
	offsets := func(write func(int) string, strict bool) func(*mcp.Server) {
		return func(s *mcp.Server) {
			forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
				from := -1
				for i := range 4 {
					if cursorOf(req) == write(i) || i == 0 && cursorOf(req) == "" {
						from = i
					}
				}
				if from < 0 || strict && from > 2 {
					return nil, errInvalidCursor
				}
				page := &mcp.ListResourcesResult{Resources: items[min(from, 3):min(from+1, 3)]}
				if from+1 < 3 {
					page.NextCursor = write(from + 1)
				}
				return page, nil
			})
		}
	}
	b64 := func(i int) string { return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, `{"page": %d}`, i)) }
	for _, tc := range []struct {
		name   string
		break_ func(*mcp.Server)
		want   []string
		seen   string
	}{
		{"plain offsets", offsets(strconv.Itoa, false), []string{"cursor.forgeable"}, `the neighbouring number of its cursor "2" ("3")`},
		{"base64 JSON", offsets(b64, false), []string{"cursor.forgeable"}, fmt.Sprintf("(%q)", b64(3))},
		{"offsets checked", offsets(strconv.Itoa, true), nil, ""},
	} {
		for _, version := range eras {
			t.Run(tc.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				s := listServer("test://a", "test://b", "test://c")
				tc.break_(s)
				r := run(t, connect(t, s, version, nil), nil)
				assert.Equal(t, tc.want, rulesIn(r, "list.", "cursor."), "%s", r)
				if seen := findingsOf(r, "cursor.forgeable"); tc.want != nil && assert.Len(t, seen, 1) {
					assert.Contains(t, seen[0], tc.seen)
				}
				for _, f := range r.Findings {
					if f.Rule.ID == "cursor.forgeable" {
						assert.Equal(t, audit.Advice, f.Severity)
					}
				}
			})
		}
	}
}

// The audit keeps every listed resource across pages, and leaves out a
// null entry.
func TestListsKeepOrder(t *testing.T) {
	t.Parallel()
	s := listServer("test://a", "test://b", "test://c")
	resourcePages(s, map[string]*mcp.ListResourcesResult{
		"":   {Resources: []*mcp.Resource{listRes("test://c", "c"), nil, listRes("test://a", "a")}, NextCursor: "k1"},
		"k1": {Resources: []*mcp.Resource{listRes("test://b", "b")}},
	})
	r := run(t, connect(t, s, eras[len(eras)-1], nil), nil)
	assert.Empty(t, rulesIn(r, "list.", "cursor."), "%s", r)
	assert.Equal(t, 3, r.Resources, "a null entry is not a resource")
}

// A waived listing rule is reported as waived, and fails nothing.
func TestListsWaive(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			s := listServer("test://a", "not a uri")
			cs := connect(t, s, version, nil)

			r := run(t, cs, nil)
			assert.True(t, r.Failed(), "%s", r)
			assert.Equal(t, []string{"list.uri"}, rulesIn(r, "list.", "cursor."))
			others := len(r.Violations(audit.Must)) - 1

			r = run(t, cs, &audit.Options{Waive: map[string]string{"list.uri": "a fixture"}})
			assert.Empty(t, rulesIn(r, "list.", "cursor."))
			assert.Len(t, r.Violations(audit.Must), others, "%s", r)
			found := false
			for _, f := range r.Findings {
				if f.Rule.ID == "list.uri" {
					found = true
					assert.Equal(t, "a fixture", f.Waived)
				}
			}
			assert.True(t, found, "the waived finding is still reported")
			assert.Contains(t, r.String(), "waived: a fixture")
		})
	}
}

// A list the server does not implement (-32601, Method not found) is no
// finding, but a skipped check that says why, at every version; except
// resources/list at 2026-07-28, which a server with the resources
// capability MUST answer (list.ends, quoting it).
func TestListNotImplemented(t *testing.T) {
	t.Parallel()
	notImplemented := func(s *mcp.Server, method string) {
		forge(s, method, func(context.Context, mcp.Request, mcp.MethodHandler) (mcp.Result, error) {
			return nil, &jsonrpc.Error{Code: -32601, Message: "Method not found"}
		})
	}
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run("templates/"+version, func(t *testing.T) {
			t.Parallel()
			s := listServer("x://a", "x://b")
			notImplemented(s, "resources/templates/list")
			r := run(t, connect(t, s, version, nil), nil)
			assert.Empty(t, rulesIn(r, "list.", "cursor."), "%s", r)
			assert.True(t, skipped(r, "resources/templates/list: the server does not implement it"), "%q", r.Skipped)
		})
		t.Run("resources/"+version, func(t *testing.T) {
			t.Parallel()
			s := listServer("x://a")
			notImplemented(s, "resources/list")
			r := run(t, connect(t, s, version, nil), nil)
			if version < "2026-07-28" {
				assert.Empty(t, rulesIn(r, "list."), "%s", r)
				assert.True(t, skipped(r, "resources/list: the server does not implement it"), "%q", r.Skipped)
				return
			}
			require.Len(t, findingsOf(r, "list.ends"), 1, "%s", r)
			assert.Contains(t, findingsOf(r, "list.ends")[0], "resources/list: the first page was answered with an error")
			f := r.Findings[slices.IndexFunc(r.Findings, func(f audit.Finding) bool { return f.Rule.ID == "list.ends" })]
			assert.Equal(t, audit.Must, f.Severity)
			assert.Contains(t, f.Clause.Text, "MUST respond to resources/list requests")
		})
	}
}
