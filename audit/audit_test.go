package audit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/audit/internal/broken"
	"github.com/mcpres/mcpres/resource"
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

// Each rule fires on the server that breaks it alone (package broken's
// Breakers), in each era where it is checked, and no other rule does that
// the same server without the breakage keeps; the two rules of
// subscription delivery fire when a change is not told, and when it is
// told after unsubscribing.
func TestRulesFire(t *testing.T) {
	t.Parallel()
	// also are the rules a breakage breaks besides its own.
	also := map[string][]string{
		"list.uri":      {"read.listed"},            // a listed string that is not a URI cannot be read
		"notfound.code": {"notfound.malformed-uri"}, // the same wrong code for both
	}
	// only names the era a rule is checked in, where it is not both.
	only := map[string]string{
		"notfound.code":     "2026-07-28", // before, go-sdk's own -32602 breaks it already
		"subscribe.missing": "2025-11-25", // at 2026-07-28 go-sdk's client cannot see a refusal
		"cache.hints":       "2026-07-28", // caching hints are 2026-07-28's
	}
	told := func(s *mcp.Server, _ *audit.Updates) func(context.Context, string) error {
		return func(_ context.Context, uri string) error {
			return s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	}
	changes := map[string]func(s *mcp.Server, u *audit.Updates) func(context.Context, string) error{
		"subscribe.delivers": func(*mcp.Server, *audit.Updates) func(context.Context, string) error {
			return func(context.Context, string) error { return nil } // never told
		},
		"subscribe.unsubscribed-silent": func(_ *mcp.Server, u *audit.Updates) func(context.Context, string) error {
			return func(ctx context.Context, uri string) error { // told whatever the subscriptions
				u.Handle(ctx, &mcp.ResourceUpdatedNotificationRequest{Params: &mcp.ResourceUpdatedNotificationParams{URI: uri}})
				return nil
			}
		},
	}
	for _, r := range audit.Rules() {
		breakRule, breaks := broken.Breakers[r.ID]
		change, changes := changes[r.ID]
		require.True(t, breaks || changes, "no way to break rule %s", r.ID)
		for _, version := range eras {
			if v, ok := only[r.ID]; ok && v != version {
				continue
			}
			t.Run(r.ID+"/"+version, func(t *testing.T) {
				t.Parallel()
				audited := func(broke bool) []string {
					s := broken.Base()
					u := &audit.Updates{}
					var c func(context.Context, string) error // nil: no delivery check, which takes a second
					if changes {
						c = told(s, u)
					}
					if broke && breaks {
						breakRule(s)
					}
					if broke && changes {
						c = change(s, u)
					}
					cs := connect(t, s, version, u)
					return ruleIDs(run(t, cs, &audit.Options{Updates: u, Change: c, Wait: time.Second}))
				}
				base, after := audited(false), audited(true)
				var added []string
				for _, id := range after {
					if !slices.Contains(base, id) {
						added = append(added, id)
					}
				}
				want := append([]string{r.ID}, also[r.ID]...)
				slices.Sort(want)
				assert.Equal(t, want, added, "the server without the breakage breaks %v", base)
			})
		}
	}
}

// A waived rule is reported as waived and fails nothing.
func TestWaive(t *testing.T) {
	t.Parallel()
	s := broken.Base()
	broken.Breakers["list.uri-credentials"](s)
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
	cs := connect(t, broken.Base(), "2025-11-25", nil)
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

// Over streamable HTTP at 2026-07-28, Options.Subscribe with
// SubscribeHTTP checks what go-sdk's client cannot: that a subscription to
// nothing is refused. The registry refuses it; a plain go-sdk server
// whose SubscribeHandler accepts everything does not.
func TestSubscribeHTTP(t *testing.T) {
	t.Parallel()
	const version = "2026-07-28"
	audited := func(t *testing.T, handler http.Handler) *audit.Report {
		hs := httptest.NewServer(handler)
		t.Cleanup(hs.Close)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "auditor"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: hs.URL}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
		return run(t, cs, &audit.Options{Subscribe: func(ctx context.Context, uri string) error {
			return audit.SubscribeHTTP(ctx, hs.Client(), hs.URL, version, uri)
		}})
	}
	t.Run("registry", func(t *testing.T) {
		t.Parallel()
		reg, err := resource.NewRegistry(&resource.Options{Logger: quiet})
		require.NoError(t, err)
		t.Cleanup(func() { reg.Close() })
		require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a", MIMEType: "text/plain"}, resource.Text("a")))
		server, err := reg.NewServer(&mcp.Implementation{Name: "registry"}, &mcp.ServerOptions{Logger: quiet})
		require.NoError(t, err)
		r := audited(t, resource.NewHTTPHandler(server, nil))
		assert.Empty(t, ruleIDs(r), "%s", r)
		for _, skipped := range r.Skipped {
			assert.NotContains(t, skipped, "subscription to nothing", "the refusal was checked")
		}
	})
	t.Run("go-sdk", func(t *testing.T) {
		t.Parallel()
		s := plainServer()
		s.AddResource(&mcp.Resource{URI: "docs://a", Name: "a", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "a"}}}, nil
		})
		r := audited(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
		assert.Contains(t, ruleIDs(r), "subscribe.missing", "%s", r)
	})
}
