package audit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/audit/internal/broken"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A registry-backed server breaks no rule, not even an ADVICE one, in
// either era, with the checks of delivery made.
func TestCleanRegistry(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			// In a bubble, whose clock makes the audit's Wait take no time.
			synctest.Test(t, func(t *testing.T) {
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
				n := 0
				r := run(t, cs, &audit.Options{Updates: u, Wait: 3 * time.Second,
					Change: func(_ context.Context, uri string) error { return reg.Changed(uri) },
					ChangeList: func(context.Context) error {
						n++
						return reg.Add(&mcp.Resource{URI: fmt.Sprintf("docs://new/%d.txt", n), Name: "new", MIMEType: "text/plain"}, resource.Text("new"))
					}})
				assert.Empty(t, r.Findings, "%s", r)
				assert.Equal(t, 32, r.Resources)
				assert.Equal(t, 1, r.Templates)
				assert.Equal(t, 32, r.Reads)
				assert.Empty(t, r.Skipped, "every check was made")
				for id, why := range r.Unchecked {
					assert.Contains(t, why, "not a rule of protocol", id)
				}
				assert.False(t, r.FailedAt(audit.Advice))
			})
		})
	}
}

// Each rule fires on the server that breaks it alone (package broken's
// Breakers), in each era where it is checked, and no other rule does that
// the same server without the breakage keeps: one behaviour, one finding.
// The two rules of subscription delivery fire when a change is not told,
// and when it is told after unsubscribing; list.changed when a change to
// the list is not told.
func TestRulesFire(t *testing.T) {
	t.Parallel()
	// only names the era a rule is checked in, where it is not both.
	only := map[string]string{
		"notfound.code":       "2026-07-28", // at 2025-11-25 go-sdk's own -32602 breaks it already
		"cache.present":       "2026-07-28", // caching hints are 2026-07-28's
		"cache.hints":         "2026-07-28",
		"cache.same-scope":    "2026-07-28",
		"error.reserved-code": "2026-07-28", // the reserved range is 2026-07-28's
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
		listChanges := r.ID == "list.changed"
		for _, version := range eras {
			if v, ok := only[r.ID]; ok && v != version {
				continue
			}
			t.Run(r.ID+"/"+version, func(t *testing.T) {
				t.Parallel()
				// In a bubble, whose clock makes the audit's Wait take no time.
				synctest.Test(t, func(t *testing.T) {
					audited := func(broke bool) []string {
						s := broken.Base()
						u := &audit.Updates{}
						opts := &audit.Options{Updates: u, Wait: time.Second}
						// Without them no delivery is checked, which takes a second.
						if changes {
							opts.Change = told(s, u)
						}
						if listChanges {
							n := 0
							opts.ChangeList = func(context.Context) error {
								n++
								s.AddResource(&mcp.Resource{URI: fmt.Sprintf("test://new/%d", n), Name: "new", MIMEType: "text/plain"}, nil)
								return nil
							}
						}
						if broke && breaks {
							breakRule(s)
						}
						if broke && changes {
							opts.Change = change(s, u)
						}
						cs := connect(t, s, version, u)
						return ruleIDs(run(t, cs, opts))
					}
					base, after := audited(false), audited(true)
					var added []string
					for _, id := range after {
						if !slices.Contains(base, id) {
							added = append(added, id)
						}
					}
					assert.Equal(t, []string{r.ID}, added, "the server without the breakage breaks %v", base)
				})
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

// Every rule has an ID, says what it checks, and quotes a clause for
// each version it is checked at, with a severity; no two clauses of a
// rule judge the same version and target.
func TestRules(t *testing.T) {
	t.Parallel()
	rules := audit.Rules()
	assert.GreaterOrEqual(t, len(rules), 30)
	for _, r := range rules {
		assert.Regexp(t, `^[a-z]+\.[a-z-]+$`, r.ID)
		assert.NotEmpty(t, r.Check, r.ID)
		require.NotEmpty(t, r.Clauses, r.ID)
		judged := map[string]bool{}
		for _, cl := range r.Clauses {
			assert.Contains(t, []audit.Severity{audit.Must, audit.Should, audit.Advice}, cl.Severity, r.ID)
			assert.NotEmpty(t, cl.Section, r.ID)
			assert.NotEmpty(t, cl.Text, r.ID)
			require.NotEmpty(t, cl.Versions, r.ID)
			for _, v := range cl.Versions {
				assert.Contains(t, mcptest.Versions, v, r.ID)
				key := v + " " + cl.Method
				assert.False(t, judged[key], "%s: two clauses judge %s", r.ID, key)
				judged[key] = true
			}
			// A MUST or SHOULD clause says so; an ADVICE one says neither.
			switch cl.Severity {
			case audit.Should:
				assert.Regexp(t, `\bSHOULD\b`, cl.Text, r.ID)
			case audit.Advice:
				assert.NotRegexp(t, `\b(MUST|SHOULD|REQUIRED)\b`, cl.Text, r.ID)
			}
		}
	}
	for id := range audit.Withdrawn() {
		assert.False(t, slices.ContainsFunc(rules, func(r audit.Rule) bool { return r.ID == id }), id)
	}
}

// A session is judged by the words of the version it negotiated, or, at
// a version the audit quotes no words of, by the nearest it does.
func TestJudgedBy(t *testing.T) {
	t.Parallel()
	for version, want := range map[string]string{
		"2025-03-26": "2025-06-18",
		"2025-06-18": "2025-06-18",
		"2025-11-25": "2025-11-25",
		"2026-07-28": "2026-07-28",
	} {
		r := run(t, connect(t, broken.Base(), version, nil), nil)
		assert.Equal(t, version, r.Protocol)
		assert.Equal(t, want, r.JudgedBy, version)
		for _, f := range r.Findings {
			assert.Contains(t, f.Clause.Versions, want, "%s at %s", f.Rule.ID, version)
		}
		if version < "2026-07-28" {
			assert.Contains(t, r.Unchecked["cache.hints"], "not a rule of protocol "+want)
		}
	}
}

// A waiver of a withdrawn rule is accepted, and waives nothing.
func TestWaiveWithdrawn(t *testing.T) {
	t.Parallel()
	cs := connect(t, broken.Base(), "2026-07-28", nil)
	r := run(t, cs, &audit.Options{Waive: map[string]string{"subscribe.missing": "an old waiver"}})
	assert.Empty(t, r.Findings)
}

// An audit that ends early lists every rule it did not reach as
// unchecked, "not reached", never as held: all of them when ctx has
// ended before it begins (so every rule is a rule of some step), and
// those of the steps after a change that fails.
func TestUnreached(t *testing.T) {
	t.Parallel()
	cs := connect(t, broken.Base(), "2026-07-28", nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r, err := audit.Run(ctx, cs, nil)
	require.ErrorIs(t, err, context.Canceled)
	for _, rule := range audit.Rules() {
		assert.Contains(t, r.Unchecked[rule.ID], "not reached: the audit ended first", rule.ID)
	}

	s := broken.Base()
	u := &audit.Updates{}
	cs = connect(t, s, "2026-07-28", u)
	r, err = audit.Run(t.Context(), cs, &audit.Options{Updates: u, Change: func(context.Context, string) error {
		return errors.New("the change failed")
	}})
	require.ErrorContains(t, err, "the change failed")
	for _, id := range []string{"subscribe.delivers", "subscribe.unsubscribed-silent", "error.reserved-code"} {
		assert.Equal(t, "not reached: the audit ended first: the change failed", r.Unchecked[id], id)
	}
	for _, id := range []string{"list.ends", "read.contents", "notfound.code", "complete.max-values", "cache.present"} {
		assert.NotContains(t, r.Unchecked, id, "checked before the change")
	}
	assert.Positive(t, r.Took["list.ends"])
	assert.Zero(t, r.Took["error.reserved-code"])
}
