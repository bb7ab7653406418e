package audit_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A registry-backed server breaks no rule, in either era, with the
// subscription delivery check made.
func TestCleanRegistry(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			reg, err := resource.NewRegistry(&resource.Options{Logger: quiet, PageSize: 7, Subscriptions: resource.SubscriptionOptions{Window: time.Millisecond}})
			require.NoError(t, err)
			t.Cleanup(func() { reg.Close() })
			for i := range 30 {
				require.NoError(t, reg.Add(&mcp.Resource{URI: fmt.Sprintf("docs://notes/%02d.txt", i), Name: fmt.Sprintf("note %d", i), MIMEType: "text/plain"}, resource.Text(fmt.Sprintf("note %d", i))))
			}
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://config.json", Name: "config", MIMEType: "application/json"}, resource.Text(`{"ok": true}`)))
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://logo.png", Name: "logo", MIMEType: "image/png"}, resource.Bytes([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"))))
			ids := []string{"1", "2", "3"}
			require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "items://{id}", Name: "item", MIMEType: "text/plain"},
				func(_ context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + vars.Get("id")}}}, nil
				},
				resource.WithCompleter("id", func(_ context.Context, partial string, _ map[string]string) ([]string, error) { return ids, nil }),
				resource.WithExists(func(_ context.Context, vars resource.Vars) (bool, error) {
					return slices.Contains(ids, vars.Get("id")), nil
				})))
			server, err := reg.NewServer(&mcp.Implementation{Name: "clean"}, &mcp.ServerOptions{Logger: quiet})
			require.NoError(t, err)
			u := &audit.Updates{}
			cs := connect(t, server, version, u)
			r := run(t, cs, &audit.Options{Updates: u, Wait: 3 * time.Second, Change: func(_ context.Context, uri string) error { return reg.Changed(uri) }})
			assert.Empty(t, ruleIDs(r), "%s", r)
			assert.Equal(t, 32, r.Resources)
			assert.Equal(t, 1, r.Templates)
			assert.Equal(t, 32, r.Reads)
			if version < "2026-07-28" {
				assert.Empty(t, r.Skipped, "every check was made")
			} else {
				assert.Len(t, r.Skipped, 1, "all but the refusal of a subscription to nothing: %q", r.Skipped)
			}
			assert.False(t, r.Failed())
		})
	}
}

// baseServer returns a plain go-sdk server that breaks no rule but the
// not-found code go-sdk gives legacy clients: a text resource, a template
// whose variable it completes, subscriptions to what exists only.
func baseServer() *mcp.Server {
	var s *mcp.Server
	s = mcp.NewServer(&mcp.Implementation{Name: "base", Version: "v0"}, &mcp.ServerOptions{
		Logger: quiet,
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			if strings.Contains(req.Params.URI, "does-not-exist") { // the audit's made-up URI
				return &jsonrpc.Error{Code: -32602, Message: "no such resource"}
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			if req.Params.Argument.Name != "id" {
				return nil, &jsonrpc.Error{Code: -32602, Message: "no such variable"}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"1", "2"}, Total: 2}}, nil
		},
	})
	s.AddResource(&mcp.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"}, textRead("hello"))
	s.AddResource(&mcp.Resource{URI: "test://b", Name: "b", MIMEType: "text/plain"}, textRead("world"))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t", MIMEType: "text/plain"}, textRead("t"))
	return s
}

func textRead(text string) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
	}
}

func res(uri, name string) *mcp.Resource {
	return &mcp.Resource{URI: uri, Name: name, MIMEType: "text/plain"}
}

// listPages forges resources/list: pages by cursor; any other cursor is
// -32602.
func listPages(s *mcp.Server, pages map[string]*mcp.ListResourcesResult) {
	forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
		if p, ok := pages[req.GetParams().(*mcp.ListResourcesParams).Cursor]; ok {
			return p, nil
		}
		return nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"}
	})
}

// readAs forges resources/read of uri.
func readAs(s *mcp.Server, uri string, contents ...*mcp.ResourceContents) {
	forge(s, "resources/read", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		if req.GetParams().(*mcp.ReadResourceParams).URI == uri {
			return &mcp.ReadResourceResult{Contents: contents}, nil
		}
		return next(ctx, "resources/read", req)
	})
}

// notFoundAs forges the answer to a read of anything but test://… names.
func notFoundAs(s *mcp.Server, answer func(version, uri string) (mcp.Result, error)) {
	forge(s, "resources/read", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		uri := req.GetParams().(*mcp.ReadResourceParams).URI
		if strings.HasPrefix(uri, "test://a") || strings.HasPrefix(uri, "test://b") || strings.HasPrefix(uri, "test://t/") {
			return next(ctx, "resources/read", req)
		}
		return answer(req.GetSession().(*mcp.ServerSession).InitializeParams().ProtocolVersion, uri)
	})
}

func completeAs(s *mcp.Server, values []string, total int, hasMore bool) {
	forge(s, "completion/complete", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		if req.GetParams().(*mcp.CompleteParams).Argument.Name != "id" {
			return next(ctx, "completion/complete", req)
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: total, HasMore: hasMore}}, nil
	})
}

// Each broken server breaks the rules its case names, and no other that
// the base server keeps.
func TestRulesFire(t *testing.T) {
	t.Parallel()
	var hundredOne []string
	for i := range 101 {
		hundredOne = append(hundredOne, fmt.Sprint(i))
	}
	cases := []struct {
		name   string
		eras   []string // nil: both
		break_ func(s *mcp.Server)
		change func(s *mcp.Server, u *audit.Updates) func(ctx context.Context, uri string) error
		want   []string
	}{
		{name: "a cursor that comes back", break_: func(s *mcp.Server) {
			listPages(s, map[string]*mcp.ListResourcesResult{
				"":   {Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: "k1"},
				"k1": {Resources: []*mcp.Resource{res("test://b", "b")}, NextCursor: "k1"},
			})
		}, want: []string{"list.ends"}},
		{name: "a URI on two pages", break_: func(s *mcp.Server) {
			listPages(s, map[string]*mcp.ListResourcesResult{
				"":   {Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: "k1"},
				"k1": {Resources: []*mcp.Resource{res("test://a", "a")}},
			})
		}, want: []string{"list.no-repeats"}},
		{name: "a list that changes between walks", break_: func(s *mcp.Server) {
			n := 0
			forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
				if req.GetParams().(*mcp.ListResourcesParams).Cursor != "" {
					return nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"}
				}
				n++
				return &mcp.ListResourcesResult{Resources: []*mcp.Resource{res([]string{"test://a", "test://b"}[n%2], "x")}}, nil
			})
		}, want: []string{"list.stable"}},
		{name: "any cursor accepted", break_: func(s *mcp.Server) {
			forge(s, "resources/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
				if req.GetParams().(*mcp.ListResourcesParams).Cursor == "" {
					return &mcp.ListResourcesResult{Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: "k1"}, nil
				}
				return &mcp.ListResourcesResult{Resources: []*mcp.Resource{res("test://b", "b")}}, nil
			})
		}, want: []string{"cursor.invalid"}},
		{name: "a cursor that spells a URI", break_: func(s *mcp.Server) {
			c := base64.StdEncoding.EncodeToString([]byte("after test://a"))
			listPages(s, map[string]*mcp.ListResourcesResult{
				"": {Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: c},
				c:  {Resources: []*mcp.Resource{res("test://b", "b")}},
			})
		}, want: []string{"cursor.opaque"}},
		{name: "a listed string that is not a URI", break_: func(s *mcp.Server) {
			listPages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{res("test://a", "a"), res("not a uri", "x")}}})
		}, want: []string{"list.uri", "read.listed"}},
		{name: "a URI with credentials", break_: func(s *mcp.Server) {
			s.AddResource(res("https://u:p@example.com/x", "x"), textRead("x"))
		}, want: []string{"list.uri-credentials"}},
		{name: "a resource without a name", break_: func(s *mcp.Server) {
			listPages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{res("test://a", "")}}})
		}, want: []string{"list.name"}},
		{name: "a listed resource that cannot be read", break_: func(s *mcp.Server) {
			listPages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{res("test://a", "a"), res("test://gone", "gone")}}})
		}, want: []string{"read.listed"}},
		{name: "no contents", break_: func(s *mcp.Server) { readAs(s, "test://b") }, want: []string{"read.contents"}},
		{name: "a content without a uri", break_: func(s *mcp.Server) {
			readAs(s, "test://b", &mcp.ResourceContents{MIMEType: "text/plain", Text: "x"})
		}, want: []string{"read.content-uri"}},
		{name: "a content without a type", break_: func(s *mcp.Server) {
			readAs(s, "test://b", &mcp.ResourceContents{URI: "test://b", Text: "x"})
		}, want: []string{"read.content-mime"}},
		{name: "text and blob", break_: func(s *mcp.Server) {
			readAs(s, "test://b", &mcp.ResourceContents{URI: "test://b", MIMEType: "text/plain", Text: "x", Blob: []byte("y")})
		}, want: []string{"read.text-or-blob"}},
		{name: "JSON that does not parse", break_: func(s *mcp.Server) {
			s.AddResource(&mcp.Resource{URI: "test://b", Name: "b", MIMEType: "application/json"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://b", MIMEType: "application/json", Text: `{"a":`}}}, nil
			})
		}, want: []string{"read.true-type"}},
		{name: "text as a blob", break_: func(s *mcp.Server) {
			readAs(s, "test://b", &mcp.ResourceContents{URI: "test://b", MIMEType: "text/plain", Blob: []byte("plain text")})
		}, want: []string{"read.text-as-text"}},
		{name: "a read that contradicts the list", break_: func(s *mcp.Server) {
			readAs(s, "test://b", &mcp.ResourceContents{URI: "test://b", MIMEType: "text/markdown", Text: "# x"})
		}, want: []string{"read.agrees-with-list"}},
		{name: "not found as empty contents", break_: func(s *mcp.Server) {
			notFoundAs(s, func(string, string) (mcp.Result, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
			})
		}, want: []string{"notfound.error"}},
		{name: "not found with another code", eras: []string{"2026-07-28"}, break_: func(s *mcp.Server) {
			notFoundAs(s, func(string, string) (mcp.Result, error) {
				return nil, &jsonrpc.Error{Code: -32603, Message: "internal"}
			})
		}, want: []string{"notfound.code", "notfound.malformed-uri"}},
		{name: "not found without the URI", break_: func(s *mcp.Server) {
			notFoundAs(s, func(version, _ string) (mcp.Result, error) {
				code := int64(-32002)
				if version >= "2026-07-28" {
					code = -32602
				}
				return nil, &jsonrpc.Error{Code: code, Message: "not found"}
			})
		}, want: []string{"notfound.data"}},
		{name: "an invalid template", break_: func(s *mcp.Server) {
			forge(s, "resources/templates/list", func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
				if req.GetParams().(*mcp.ListResourceTemplatesParams).Cursor != "" {
					return nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"}
				}
				return &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{{URITemplate: "test://t/{id", Name: "t"}}}, nil
			})
		}, want: []string{"template.syntax"}},
		{name: "101 completions", break_: func(s *mcp.Server) { completeAs(s, hundredOne, 101, false) }, want: []string{"complete.max-values"}},
		{name: "a total below the values", break_: func(s *mcp.Server) { completeAs(s, []string{"1", "2", "3"}, 1, false) }, want: []string{"complete.total"}},
		{name: "more without hasMore", break_: func(s *mcp.Server) { completeAs(s, []string{"1", "2", "3"}, 10, false) }, want: []string{"complete.has-more"}},
		{name: "an unknown variable completed", break_: func(s *mcp.Server) {
			forge(s, "completion/complete", func(context.Context, mcp.Request, mcp.MethodHandler) (mcp.Result, error) {
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"x"}}}, nil
			})
		}, want: []string{"complete.unknown-argument"}},
		{name: "a subscription to nothing accepted", break_: func(s *mcp.Server) {
			forge(s, "resources/subscribe", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
				req.GetParams().(*mcp.SubscribeParams).URI = "test://a" // accepted as if it named test://a
				return next(ctx, "resources/subscribe", req)
			})
		}, eras: []string{"2025-11-25"}, want: []string{"subscribe.missing"}},
		{name: "a change never told", change: func(*mcp.Server, *audit.Updates) func(context.Context, string) error {
			return func(context.Context, string) error { return nil }
		}, want: []string{"subscribe.delivers"}},
		{name: "told after unsubscribing", change: func(s *mcp.Server, u *audit.Updates) func(context.Context, string) error {
			return func(ctx context.Context, uri string) error {
				u.Handle(ctx, &mcp.ResourceUpdatedNotificationRequest{Params: &mcp.ResourceUpdatedNotificationParams{URI: uri}}) // as if sent regardless
				return nil
			}
		}, want: []string{"subscribe.unsubscribed-silent"}},
		{name: "a caching scope of its own", eras: []string{"2026-07-28"}, break_: func(s *mcp.Server) {
			forge(s, "resources/read", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
				r, err := next(ctx, "resources/read", req)
				if rr, ok := r.(*mcp.ReadResourceResult); ok && rr != nil {
					rr.CacheScope = "shared"
				}
				return r, err
			})
		}, want: []string{"cache.hints"}},
	}
	for _, tc := range cases {
		for _, version := range eras {
			if tc.eras != nil && !slices.Contains(tc.eras, version) {
				continue
			}
			t.Run(tc.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				audited := func(broken bool) []string {
					s := baseServer()
					if broken && tc.break_ != nil {
						tc.break_(s)
					}
					u := &audit.Updates{}
					var change func(ctx context.Context, uri string) error // nil: no delivery check, which takes a second
					if tc.change != nil {
						change = func(_ context.Context, uri string) error {
							return s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
						}
						if broken {
							change = tc.change(s, u)
						}
					}
					cs := connect(t, s, version, u)
					return ruleIDs(run(t, cs, &audit.Options{Updates: u, Change: change, Wait: time.Second}))
				}
				base, broken := audited(false), audited(true)
				var added []string
				for _, id := range broken {
					if !slices.Contains(base, id) {
						added = append(added, id)
					}
				}
				assert.Equal(t, tc.want, added, "base server: %v", base)
			})
		}
	}
}

// A waived rule is reported as waived and fails nothing.
func TestWaive(t *testing.T) {
	t.Parallel()
	s := baseServer()
	s.AddResource(res("https://u:p@example.com/x", "x"), textRead("x"))
	cs := connect(t, s, "2026-07-28", nil)
	r := run(t, cs, &audit.Options{Waive: map[string]string{"list.uri-credentials": "a test fixture"}})
	assert.False(t, r.Failed(), "%s", r)
	assert.Empty(t, ruleIDs(r))
	require.Len(t, r.Findings, 1)
	assert.Equal(t, "a test fixture", r.Findings[0].Waived)
	assert.Contains(t, r.String(), "waived: a test fixture")
}

// Options Run would have to guess at are refused, and nothing is audited.
func TestBadOptions(t *testing.T) {
	t.Parallel()
	cs := connect(t, baseServer(), "2025-11-25", nil)
	for _, opts := range []*audit.Options{
		{Reads: -1},
		{Wait: -time.Second},
		{Waive: map[string]string{"no.such-rule": "why"}},
		{Waive: map[string]string{"list.name": ""}},
	} {
		r, err := audit.Run(t.Context(), cs, opts)
		assert.Error(t, err, "%+v", opts)
		assert.Nil(t, r)
	}
}

// Every rule has an ID, a severity and the words it comes from.
func TestRules(t *testing.T) {
	t.Parallel()
	rules := audit.Rules()
	assert.GreaterOrEqual(t, len(rules), 25)
	for _, r := range rules {
		assert.Regexp(t, `^[a-z]+\.[a-z-]+$`, r.ID)
		assert.Contains(t, []audit.Severity{audit.Must, audit.Should}, r.Severity, r.ID)
		assert.NotEmpty(t, r.Spec, r.ID)
	}
}
