package resource_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests below serve requests as an adapter for another MCP server
// than go-sdk's does (WithCaller, Attach): the module mcpgo tests the
// same over mcp-go's own client and transports.

// adapterSession is a Session as an adapter makes one: its updates go to
// a channel, and it ends when end is called.
type adapterSession struct {
	id      string
	updates chan string
	done    chan struct{}
}

func newAdapterSession(id string) *adapterSession {
	return &adapterSession{id: id, updates: make(chan string, 16), done: make(chan struct{})}
}

func (s *adapterSession) ID() string            { return s.id }
func (s *adapterSession) Done() <-chan struct{} { return s.done }
func (s *adapterSession) end()                  { close(s.done) }

func (s *adapterSession) Updated(_ context.Context, uri string) error {
	s.updates <- uri
	return nil
}

// awaitUpdate returns the URI s is told of once a window has passed on
// synctest's clock, failing t if it is told of none.
func (s *adapterSession) awaitUpdate(t *testing.T) string {
	t.Helper()
	settle()
	select {
	case uri := <-s.updates:
		return uri
	default:
		t.Fatal("no resources/updated within a window")
		return ""
	}
}

// assertNoUpdate fails t if s is told of anything within a window on
// synctest's clock.
func (s *adapterSession) assertNoUpdate(t *testing.T) {
	t.Helper()
	settle()
	select {
	case uri := <-s.updates:
		t.Fatalf("resources/updated of %q, want none", uri)
	default:
	}
}

func callerRegistry(t *testing.T, opts *resource.Options) *resource.Registry {
	t.Helper()
	if opts == nil {
		opts = &resource.Options{}
	}
	opts.Logger = quietLogger()
	if opts.Subscriptions.Window == 0 {
		opts.Subscriptions.Window = testWindow
	}
	reg := newRegistry(t, opts)
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "a"}}}, nil
		}))
	return reg
}

func subscribeAs(ctx context.Context, reg *resource.Registry, uri string) error {
	return reg.Subscribe(ctx, &mcp.SubscribeRequest{Params: &mcp.SubscribeParams{URI: uri}})
}

func TestCallerNotFoundCodeByVersion(t *testing.T) {
	t.Parallel()
	reg := callerRegistry(t, nil)
	for version, code := range map[string]int64{
		"2025-11-25": resource.CodeLegacyResourceNotFound,
		"2026-07-28": jsonrpc.CodeInvalidParams,
		"":           resource.CodeLegacyResourceNotFound,
	} {
		ctx := resource.WithCaller(context.Background(), resource.Caller{ProtocolVersion: version})
		_, err := reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "test://missing"}})
		var jerr *jsonrpc.Error
		require.True(t, errors.As(err, &jerr), "version %q: %v", version, err)
		assert.Equal(t, code, jerr.Code, "version %q", version)
		assert.JSONEq(t, `{"uri":"test://missing"}`, string(jerr.Data), "version %q", version)
	}
}

func TestCallerSubscriptionNotified(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		reg := callerRegistry(t, nil)
		s := newAdapterSession("s1")
		ctx := resource.WithCaller(context.Background(), resource.Caller{ProtocolVersion: "2025-11-25", Session: s})
		require.NoError(t, subscribeAs(ctx, reg, "test://a"))
		n, sessions, uris := reg.SubscriptionStats()
		assert.Equal(t, [3]int{1, 1, 1}, [3]int{n, sessions, uris})

		require.NoError(t, reg.Changed("test://a"))
		assert.Equal(t, "test://a", s.awaitUpdate(t))

		require.NoError(t, reg.Unsubscribe(ctx, &mcp.UnsubscribeRequest{Params: &mcp.UnsubscribeParams{URI: "test://a"}}))
		n, _, _ = reg.SubscriptionStats()
		assert.Zero(t, n, "subscriptions after Unsubscribe")
		require.NoError(t, reg.Changed("test://a"))
		s.assertNoUpdate(t)
	})
}

func TestCallerSessionEnds(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		reg := callerRegistry(t, nil)
		s := newAdapterSession("s1")
		ctx := resource.WithCaller(context.Background(), resource.Caller{ProtocolVersion: "2026-07-28", Session: s})
		require.NoError(t, subscribeAs(ctx, reg, "test://a"))
		s.end()
		synctest.Wait() // the registry watches Done
		n, _, _ := reg.SubscriptionStats()
		assert.Zero(t, n, "subscriptions after the session ended")
	})
}

func TestCallerWithoutSessionRefused(t *testing.T) {
	t.Parallel()
	reg := callerRegistry(t, nil)
	ctx := resource.WithCaller(context.Background(), resource.Caller{ProtocolVersion: "2025-11-25"})
	err := subscribeAs(ctx, reg, "test://a")
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "%v", err)
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code)
	assert.Contains(t, jerr.Message, "cannot receive notifications")
}

func TestCallerAuthorizerAskedAgain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var allowed atomic.Bool
		allowed.Store(true)
		reg := callerRegistry(t, &resource.Options{
			Identity: func(ctx context.Context, _ mcp.Request) string { return "alice" },
			Authorize: func(_ context.Context, a resource.Access) error {
				if !allowed.Load() || a.Identity != "alice" {
					return resource.ErrDenied
				}
				return nil
			},
		})
		s := newAdapterSession("s1")
		ctx := resource.WithCaller(context.Background(), resource.Caller{ProtocolVersion: "2025-11-25", Session: s})
		require.NoError(t, subscribeAs(ctx, reg, "test://a"))
		require.NoError(t, reg.Changed("test://a"))
		assert.Equal(t, "test://a", s.awaitUpdate(t))

		allowed.Store(false)
		require.NoError(t, reg.Changed("test://a"))
		s.assertNoUpdate(t)
	})
}

func TestAttachListChanged(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry(t, &resource.Options{Logger: quietLogger(), ListChangedDelay: time.Millisecond})
		told := make(chan struct{}, 16)
		detach := reg.Attach(func() { told <- struct{}{} })
		add := func(uri string) {
			require.NoError(t, reg.Add(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return nil, resource.ErrNotFound
			}))
		}
		add("test://one")
		time.Sleep(time.Millisecond) // ListChangedDelay, on synctest's clock
		synctest.Wait()
		assert.Len(t, told, 1, "list change told once")
		<-told
		detach()
		add("test://two")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		assert.Empty(t, told, "list change told after detach")
	})
}
