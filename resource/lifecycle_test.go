package resource_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Close stops every timer and goroutine the registry started, with
// changes and a list_changed pending and a delivery due; once the
// sessions have gone too, the goroutine count is back at its baseline.
// (synctest also fails the test if any goroutine of the bubble is left
// blocked.)
func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		baseline := mcptest.BubbleGoroutines(t)
		reg, err := resource.NewRegistry(&resource.Options{
			Logger:           quietLogger(),
			ListChangedDelay: time.Second,
			Subscriptions:    resource.SubscriptionOptions{Window: time.Second},
		})
		require.NoError(t, err)
		require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
		server, err := reg.NewServer(&mcp.Implementation{Name: "lifecycle"}, &mcp.ServerOptions{Logger: quietLogger()})
		require.NoError(t, err)

		var updates, listChanges atomic.Int32
		copts := &mcp.ClientOptions{
			ResourceUpdatedHandler:     func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { updates.Add(1) },
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanges.Add(1) },
		}
		var sessions []*mcp.ClientSession
		for _, version := range append(eras, "2025-06-18") {
			st, ct := mcp.NewInMemoryTransports()
			_, err := server.Connect(t.Context(), st, nil)
			require.NoError(t, err)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, copts).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://a"}))
			sessions = append(sessions, cs)
		}
		synctest.Wait()
		n, _, _ := reg.SubscriptionStats()
		require.Equal(t, 3, n)

		// A first change goes out at once, from a goroutine of its own:
		// let it arrive, so that what Close stops is what is due later.
		reg.Changed("docs://a")
		synctest.Wait()
		require.EqualValues(t, 3, updates.Load(), "the first change, before Close")
		reg.Changed("docs://a")                                                                    // a delivery due in a second
		require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://b", Name: "b"}, resource.Text("b"))) // a list_changed too
		require.NoError(t, reg.Close())
		require.NoError(t, reg.Close(), "twice")
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.EqualValues(t, 3, updates.Load(), "no update delivered after Close")
		assert.Zero(t, listChanges.Load(), "no list_changed after Close")
		n, _, _ = reg.SubscriptionStats()
		assert.Zero(t, n, "subscriptions forgotten")

		for _, cs := range sessions {
			require.NoError(t, cs.Close())
		}
		synctest.Wait()
		assert.Equal(t, baseline, mcptest.BubbleGoroutines(t), "goroutines left after Close and the sessions' end")
	})
}

// After Close, what would change the registry returns ErrClosed, requests
// are answered with -32603, and reporting changes does nothing.
func TestClosedRegistryFailsCleanly(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		reg := newRegistry(t, nil)
		require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
		require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://{id}", Name: "row"}, nil2))
		server, err := reg.NewServer(&mcp.Implementation{Name: "closed"}, nil)
		require.NoError(t, err)
		cs := mcptest.Connect(t, server, "2025-11-25", nil)
		require.NoError(t, reg.Close())

		assert.ErrorIs(t, reg.Add(&mcp.Resource{URI: "docs://b", Name: "b"}, resource.Text("b")), resource.ErrClosed)
		assert.ErrorIs(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db2://{id}", Name: "row"}, nil2), resource.ErrClosed)
		assert.ErrorIs(t, reg.AddProvider("p", listNotes), resource.ErrClosed)
		_, err = reg.NewServer(&mcp.Implementation{Name: "again"}, nil)
		assert.ErrorIs(t, err, resource.ErrClosed)
		reg.Changed("docs://a")
		reg.ChangedPrefix("docs://")
		reg.ChangedTemplate("db://{id}")
		reg.NotifyListChanged()

		for name, call := range map[string]func() error{
			"read": func() error {
				_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://a"})
				return err
			},
			"list":      func() error { _, err := cs.ListResources(t.Context(), nil); return err },
			"templates": func() error { _, err := cs.ListResourceTemplates(t.Context(), nil); return err },
			"subscribe": func() error { return cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://a"}) },
			"complete": func() error {
				_, err := cs.Complete(t.Context(), &mcp.CompleteParams{
					Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "db://{id}"},
					Argument: mcp.CompleteParamsArgument{Name: "id"},
				})
				return err
			},
		} {
			var jerr *jsonrpc.Error
			require.True(t, errors.As(call(), &jerr), name)
			assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code, name)
			assert.Equal(t, "Resource registry closed", jerr.Message, name)
		}
	})
}

// NewServer keeps the caller's options, and refuses handlers that are the
// registry's.
func TestNewServerOptions(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	_, err := reg.NewServer(nil, nil)
	assert.Error(t, err, "no implementation")
	_, err = reg.NewServer(&mcp.Implementation{Name: "x"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	assert.Error(t, err, "a SubscribeHandler of the caller's")

	opts := &mcp.ServerOptions{
		Instructions: "read the docs",
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"from the caller"}}}, nil
		},
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "x"}, opts)
	require.NoError(t, err)
	assert.Nil(t, opts.SubscribeHandler, "the caller's options are not modified")
	forEachVersion(t, func(t *testing.T, version string) {
		cs := mcptest.Connect(t, server, version, nil)
		init := cs.InitializeResult()
		assert.Equal(t, "read the docs", init.Instructions)
		require.NotNil(t, init.Capabilities.Resources)
		assert.True(t, init.Capabilities.Resources.Subscribe)
		assert.True(t, init.Capabilities.Resources.ListChanged)
		assert.NotNil(t, init.Capabilities.Completions)
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "p"},
			Argument: mcp.CompleteParamsArgument{Name: "a"},
		})
		require.NoError(t, err)
		assert.Equal(t, []string{"from the caller"}, res.Completion.Values, "other completions reach the caller's handler")
	})
}
