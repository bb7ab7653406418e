package audit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
)

// A registry tells a subscribed change and not an unsubscribed one, and
// gives caching hints in range, with the delivery check made.
func TestSubscriptionsClean(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			// In a bubble, whose clock makes the audit's Wait take no time.
			synctest.Test(t, func(t *testing.T) {
				reg, server := cleanRegistry(t)
				u := &audit.Updates{}
				var changes atomic.Int32
				r := run(t, connect(t, server, version, u), &audit.Options{
					Updates: u,
					Change: func(_ context.Context, uri string) error {
						changes.Add(1)
						return reg.Changed(uri)
					},
					Wait: 2 * time.Second,
				})
				assert.Empty(t, rulesIn(r, "subscribe.", "cache."), "%s", r)
				assert.False(t, skipped(r, "delivery"), "delivery was checked: %q", r.Skipped)
				assert.False(t, skipped(r, "does not advertise subscribe"), "%q", r.Skipped)
				assert.GreaterOrEqual(t, changes.Load(), int32(2), "changed while subscribed, and after unsubscribing")
			})
		})
	}
}

// told returns a Change that has s tell its subscribers of the change, as
// go-sdk's server does: only the sessions subscribed.
func told(s *mcp.Server) func(context.Context, string) error {
	return func(ctx context.Context, uri string) error {
		return s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// addTo returns a ChangeList that adds a resource to s, which go-sdk's
// server tells its sessions.
func addTo(s *mcp.Server) func(context.Context) error {
	var n atomic.Int32
	return func(context.Context) error {
		addText(s, fmt.Sprintf("x://new/%d", n.Add(1)))
		return nil
	}
}

// refuseMissing makes s refuse a subscription to any URI but x://a.
func refuseMissing(s *mcp.Server) {
	forge(s, "resources/subscribe", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		if req.GetParams().(*mcp.SubscribeParams).URI != "x://a" {
			return nil, &jsonrpc.Error{Code: -32602, Message: "no such resource"}
		}
		return next(ctx, "resources/subscribe", req)
	})
}

// Each breakage of a subscription or caching rule is found, and only it,
// in the eras where it is checked.
func TestSubscriptionsBroken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// setup builds the server and the options; u collects its updates.
		setup func(u *audit.Updates) (*mcp.Server, *audit.Options)
		want  map[string][]string // by era
	}{
		{"missing-accepted", func(*audit.Updates) (*mcp.Server, *audit.Options) {
			// A subscription to a URI that names nothing yet may be
			// accepted: no version says otherwise.
			s := plainServer()
			addText(s, "x://a")
			return s, nil
		}, nil},
		{"list-told", func(u *audit.Updates) (*mcp.Server, *audit.Options) {
			s := plainServer()
			addText(s, "x://a")
			return s, &audit.Options{Updates: u, ChangeList: addTo(s), Wait: time.Second}
		}, nil},
		{"list-untold", func(u *audit.Updates) (*mcp.Server, *audit.Options) {
			s := plainServer()
			addText(s, "x://a")
			s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "notifications/resources/list_changed" {
						return nil, nil
					}
					return next(ctx, method, req)
				}
			})
			return s, &audit.Options{Updates: u, ChangeList: addTo(s), Wait: 300 * time.Millisecond}
		}, map[string][]string{"2025-11-25": {"list.changed"}, "2026-07-28": {"list.changed"}}},
		{"list-and-delivery", func(u *audit.Updates) (*mcp.Server, *audit.Options) {
			// go-sdk's server forgets a 2026-07-28 listen for list
			// changes when another listen of the session ends: the list
			// is checked first.
			s := plainServer()
			addText(s, "x://a")
			return s, &audit.Options{Updates: u, ChangeList: addTo(s), Change: told(s), Wait: time.Second}
		}, nil},
		{"delivers", func(u *audit.Updates) (*mcp.Server, *audit.Options) {
			s := plainServer()
			addText(s, "x://a")
			refuseMissing(s)
			return s, &audit.Options{Updates: u, Change: told(s), Wait: time.Second}
		}, nil},
		{"never-told", func(u *audit.Updates) (*mcp.Server, *audit.Options) {
			s := plainServer()
			addText(s, "x://a")
			refuseMissing(s)
			return s, &audit.Options{Updates: u, Change: func(context.Context, string) error { return nil }, Wait: 300 * time.Millisecond}
		}, map[string][]string{"2025-11-25": {"subscribe.delivers"}, "2026-07-28": {"subscribe.delivers"}}},
		{"told-unsubscribed", func(u *audit.Updates) (*mcp.Server, *audit.Options) {
			s := plainServer()
			addText(s, "x://a")
			refuseMissing(s)
			return s, &audit.Options{Updates: u, Wait: 300 * time.Millisecond, Change: func(ctx context.Context, uri string) error {
				u.Handle(ctx, &mcp.ResourceUpdatedNotificationRequest{Params: &mcp.ResourceUpdatedNotificationParams{URI: uri}})
				return nil
			}}
		}, map[string][]string{"2025-11-25": {"subscribe.unsubscribed-silent"}, "2026-07-28": {"subscribe.unsubscribed-silent"}}},
		{"cache-scope", func(*audit.Updates) (*mcp.Server, *audit.Options) {
			s := plainServer()
			addText(s, "x://a")
			refuseMissing(s)
			forge(s, "resources/read", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
				res, err := next(ctx, "resources/read", req)
				if rr, ok := res.(*mcp.ReadResourceResult); ok && rr != nil {
					rr.CacheScope = "shared"
				}
				return res, err
			})
			return s, nil
		}, map[string][]string{"2026-07-28": {"cache.hints"}}},
		{"cache-ttl", func(*audit.Updates) (*mcp.Server, *audit.Options) {
			s := plainServer()
			addText(s, "x://a")
			refuseMissing(s)
			forge(s, "resources/list", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
				res, err := next(ctx, "resources/list", req)
				if lr, ok := res.(*mcp.ListResourcesResult); ok && lr != nil {
					lr.TTLMs = -1
				}
				return res, err
			})
			return s, nil
		}, map[string][]string{"2026-07-28": {"cache.hints"}}},
	}
	for _, tt := range tests {
		for _, version := range eras {
			t.Run(tt.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				// In a bubble, whose clock makes the audit's Wait take no time.
				synctest.Test(t, func(t *testing.T) {
					u := &audit.Updates{}
					s, opts := tt.setup(u)
					r := run(t, connect(t, s, version, u), opts)
					assert.Equal(t, tt.want[version], rulesIn(r, "subscribe.", "cache.", "list.changed"), "%s", r)
					if opts == nil || opts.Change == nil {
						assert.True(t, skipped(r, "subscription delivery"), "%q", r.Skipped)
					}
					if opts == nil || opts.ChangeList == nil {
						assert.True(t, skipped(r, "list changes"), "%q", r.Skipped)
					}
				})
			})
		}
	}
}

// A server that does not advertise subscribe has no subscription checked,
// and the report says so.
func TestSubscriptionsNotAdvertised(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "v0"}, &mcp.ServerOptions{Logger: quiet})
	addText(s, "x://a")
	subscribed := false
	forge(s, "resources/subscribe", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		subscribed = true
		return next(ctx, "resources/subscribe", req)
	})
	u := &audit.Updates{}
	r := run(t, connect(t, s, "2025-11-25", u), &audit.Options{Updates: u, Change: told(s), Wait: 100 * time.Millisecond})
	assert.Empty(t, rulesIn(r, "subscribe.", "cache."), "%s", r)
	assert.True(t, skipped(r, "does not advertise subscribe"), "%q", r.Skipped)
	assert.False(t, subscribed)
}
