package resource_test

// Contract tests for the go-sdk behaviours listed at the top of gosdk.go.
// Each exercises go-sdk itself, as the registry relies on it, and fails
// naming the behaviour, so that a go-sdk upgrade that changes one says
// which seam to revisit.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// changed names the behaviour of gosdk.go a failing assertion is about.
func changed(n int, name string) string {
	return fmt.Sprintf("go-sdk behaviour %d (%s) of resource/gosdk.go changed", n, name)
}

// subscribingSDKServer returns a plain go-sdk server that accepts every
// subscription and holds one resource, so that it advertises subscribe
// and agrees to 2026-07-28 listens.
func subscribingSDKServer() *mcp.Server {
	s := sdkServer(&mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, textResult("m"))
	return s
}

// sdkServer returns a plain go-sdk server, its test logger discarded.
func sdkServer(opts *mcp.ServerOptions) *mcp.Server {
	if opts == nil {
		opts = &mcp.ServerOptions{}
	}
	opts.Logger = quietLogger()
	return mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "v0"}, opts)
}

func textResult(text string) mcp.ResourceHandler {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "x:marker", Text: text}}}, nil
	}
}

// 1 and 3: a server advertises resources with listChanged only once it
// holds a resource, and adding one again sends list_changed to legacy
// sessions and to 2026-07-28 listeners.
func TestSDKMarkerAndReAdd(t *testing.T) {
	t.Parallel()
	forEachVersion(t, func(t *testing.T, version string) {
		t.Parallel()
		bare := mcptest.Connect(t, sdkServer(nil), version, nil)
		assert.Nil(t, bare.InitializeResult().Capabilities.Resources, changed(1, "marker")+": resources advertised without a resource")

		s := sdkServer(nil)
		s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, textResult("m"))
		got := make(chan struct{}, 10)
		cs := mcptest.Connect(t, s, version, &mcp.ClientOptions{
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { got <- struct{}{} },
		})
		caps := cs.InitializeResult().Capabilities.Resources
		require.NotNil(t, caps, changed(1, "marker")+": no resources capability with a resource")
		assert.True(t, caps.ListChanged, changed(1, "marker")+": no listChanged")
		s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, textResult("m"))
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatal(changed(3, "reAddAnnounces") + ": no list_changed after adding the resource again")
		}
	})
}

type ctxKey struct{}

// 2: a middleware may send a read on to another resource's handler, with
// its context; go-sdk finishes the result as for its own resources.
func TestSDKReadThroughSDK(t *testing.T) {
	t.Parallel()
	forEachVersion(t, func(t *testing.T, version string) {
		t.Parallel()
		s := sdkServer(&mcp.ServerOptions{SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) { c.TTLMs = 2000 }})
		s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			orig, _ := ctx.Value(ctxKey{}).(string)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: orig, Text: "via " + req.Params.URI}}}, nil
		})
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if q, ok := req.(*mcp.ReadResourceRequest); ok {
					ctx = context.WithValue(ctx, ctxKey{}, q.Params.URI)
					redirected, params := *q, *q.Params
					params.URI = "x:marker"
					redirected.Params = &params
					return next(ctx, method, &redirected)
				}
				return next(ctx, method, req)
			}
		})
		cs := mcptest.Connect(t, s, version, nil)
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "x:elsewhere"})
		require.NoError(t, err, changed(2, "readThroughSDK"))
		require.Len(t, res.Contents, 1, changed(2, "readThroughSDK"))
		assert.Equal(t, "x:elsewhere", res.Contents[0].URI, changed(2, "readThroughSDK")+": the context did not reach the handler")
		assert.Equal(t, "via x:marker", res.Contents[0].Text, changed(2, "readThroughSDK"))
		assert.Equal(t, 2000, res.TTLMs, changed(2, "readThroughSDK")+": SetCacheable not applied")
		raw, err := json.Marshal(res)
		require.NoError(t, err)
		if version >= "2026-07-28" {
			assert.Contains(t, string(raw), `"resultType":"complete"`, changed(2, "readThroughSDK")+": no resultType")
		}
	})
}

// 4: go-sdk makes a SubscribeRequest of each resource of a 2026-07-28
// listen, without the transport's Extra, in the context the middleware
// gave the listen, whose handler returns only when the listen's stream
// ends.
func TestSDKListenSubscribes(t *testing.T) {
	t.Parallel()
	type seen struct {
		listenExtra, subExtra bool
		ctxValue              any
	}
	var mu sync.Mutex
	var got []seen
	var listenExtra bool
	var listenReturned atomic.Bool
	s := sdkServer(&mcp.ServerOptions{
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, seen{listenExtra: listenExtra, subExtra: req.Extra != nil, ctxValue: ctx.Value(ctxKey{})})
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, textResult("m"))
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if q, ok := req.(*mcp.SubscriptionsListenRequest); ok {
				mu.Lock()
				listenExtra = q.Extra != nil
				mu.Unlock()
				ctx = context.WithValue(ctx, ctxKey{}, "listen")
				defer listenReturned.Store(true)
			}
			return next(ctx, method, req)
		}
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(handler)
	t.Cleanup(hs.Close)
	cs := mcptest.ConnectHTTP(t, hs.URL, "", "2026-07-28", nil)
	require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "x:marker"}))
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) > 0 }, 10*time.Second, time.Millisecond,
		changed(4, "listenSubscribes")+": SubscribeHandler not called for a listen")
	mu.Lock()
	assert.Equal(t, seen{listenExtra: true, subExtra: false, ctxValue: "listen"}, got[0],
		changed(4, "listenSubscribes")+": the listen's Extra, the subscription's missing Extra, or the listen's context")
	mu.Unlock()
	assert.False(t, listenReturned.Load(), changed(4, "listenSubscribes")+": the listen returned while its stream is open")
	require.NoError(t, cs.Close())
	require.Eventually(t, listenReturned.Load, 10*time.Second, time.Millisecond,
		changed(4, "listenSubscribes")+": the listen did not return when its stream ended")
}

// 5: the middleware sees initialize's and server/discover's result, and
// may add a capability.
func TestSDKInitializeResult(t *testing.T) {
	t.Parallel()
	forEachVersion(t, func(t *testing.T, version string) {
		t.Parallel()
		s := sdkServer(nil)
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				switch res := res.(type) {
				case *mcp.InitializeResult:
					res.Capabilities.Completions = &mcp.CompletionCapabilities{}
				case *mcp.DiscoverResult:
					res.Capabilities.Completions = &mcp.CompletionCapabilities{}
				}
				return res, err
			}
		})
		cs := mcptest.Connect(t, s, version, nil)
		assert.NotNil(t, cs.InitializeResult().Capabilities.Completions, changed(5, "initializeResult"))
	})
}

// 6 and 7: ResourceUpdated notifies exactly the sessions whose
// subscription was accepted, in both eras; Server.Sessions lists a session
// once connected and ServerSession.Wait returns when it ends, when it is
// listed no more.
func TestSDKResourceUpdatedAndSessionEnd(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			s := sdkServer(&mcp.ServerOptions{
				SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
					if req.Params.URI == "x:refused" {
						return errors.New("refused")
					}
					return nil
				},
				UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
			})
			s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, textResult("m"))
			updates := map[string]chan string{"watcher": make(chan string, 10), "other": make(chan string, 10)}
			clients := map[string]*mcp.ClientSession{}
			for name, ch := range updates {
				clients[name] = mcptest.Connect(t, s, version, &mcp.ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { ch <- req.Params.URI },
				})
			}
			require.NoError(t, clients["watcher"].Subscribe(t.Context(), &mcp.SubscribeParams{URI: "x:a"}))
			_ = clients["watcher"].Subscribe(t.Context(), &mcp.SubscribeParams{URI: "x:refused"})
			require.Eventually(t, func() bool {
				require.NoError(t, s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "x:a"}))
				select {
				case u := <-updates["watcher"]:
					return u == "x:a"
				case <-time.After(10 * time.Millisecond):
					return false // a 2026-07-28 listen may not be acknowledged yet
				}
			}, 10*time.Second, time.Millisecond, changed(6, "resourceUpdated")+": the subscriber was not notified")
			require.NoError(t, s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "x:refused"}))
			require.NoError(t, clients["watcher"].Ping(t.Context(), nil)) // what was sent before has arrived
			for len(updates["watcher"]) > 0 {
				assert.Equal(t, "x:a", <-updates["watcher"], changed(6, "resourceUpdated")+": a refused subscription was notified")
			}
			assert.Empty(t, updates["other"], changed(6, "resourceUpdated")+": a session that did not subscribe was notified")
		})
	}

	s := sdkServer(nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	require.True(t, slices.Contains(slices.Collect(s.Sessions()), ss), changed(7, "sessionEnd")+": a connected session is not listed")
	ended := make(chan struct{})
	go func() { ss.Wait(); close(ended) }()
	require.NoError(t, cs.Close())
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal(changed(7, "sessionEnd") + ": ServerSession.Wait did not return when the client left")
	}
	assert.False(t, slices.Contains(slices.Collect(s.Sessions()), ss), changed(7, "sessionEnd")+": an ended session is still listed")
}

// 8: mcp.ResourceNotFoundError has data {"uri": …} and code -32602 or
// -32002; a read function that returns it is answered as not found.
func TestSDKNotFoundError(t *testing.T) {
	t.Parallel()
	var jerr *jsonrpc.Error
	require.True(t, errors.As(mcp.ResourceNotFoundError("x://a"), &jerr), changed(8, "notFoundError")+": not a *jsonrpc.Error")
	assert.Contains(t, []int64{jsonrpc.CodeInvalidParams, resource.CodeLegacyResourceNotFound}, jerr.Code, changed(8, "notFoundError"))
	assert.JSONEq(t, `{"uri":"x://a"}`, string(jerr.Data), changed(8, "notFoundError"))

	reg := newRegistry(t, nil)
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "x://{id}", Name: "x"},
		func(_ context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}))
	_, err := reg.ReadResource(t.Context(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "x://a"}})
	assert.Equal(t, int64(resource.CodeLegacyResourceNotFound), rpcError(t, err).Code, changed(8, "notFoundError")+": not recognized")
}

// 9: the versions go-sdk speaks include the three the registry knows, and
// sort in time order.
func TestSDKProtocolVersion(t *testing.T) {
	t.Parallel()
	supported := mcp.SupportedProtocolVersions()
	for _, v := range versions {
		assert.Contains(t, supported, v, changed(9, "protocolVersion"))
	}
	assert.True(t, slices.IsSorted(versions), changed(9, "protocolVersion"))
}

// 10: ResourceUpdated sends each notification through the sending
// middleware, per session, with the session and its params, in both eras;
// a middleware that does not call on drops it for that session.
func TestSDKUpdatesThroughMiddleware(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			s := subscribingSDKServer()
			var mu sync.Mutex
			var dropFor *mcp.ServerSession // the session that gets x:mine; x:a is dropped for it
			dropping := false
			s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method == "notifications/resources/updated" {
						ss, _ := req.GetSession().(*mcp.ServerSession)
						p, _ := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
						if ss == nil || p == nil {
							t.Errorf("%s: a request of %T with params %T", changed(10, "updatesThroughMiddleware"), req.GetSession(), req.GetParams())
							return next(ctx, method, req)
						}
						mu.Lock()
						defer mu.Unlock()
						if p.URI == "x:mine" {
							dropFor = ss
						}
						if dropping && ss == dropFor && p.URI == "x:a" {
							return nil, nil
						}
					}
					return next(ctx, method, req)
				}
			})
			got := map[string]chan string{}
			for _, name := range []string{"kept", "dropped"} {
				ch := make(chan string, 10_000) // never full: a blocked handler would hold up the client
				got[name] = ch
				cs := mcptest.Connect(t, s, version, &mcp.ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { ch <- req.Params.URI },
				})
				uris := []string{"x:a", "x:b"}
				if name == "dropped" {
					uris = append(uris, "x:mine")
				}
				for _, u := range uris {
					require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: u}))
				}
			}
			// Once "dropped" hears of x:mine, its listens are all acknowledged
			// (2026-07-28), and the middleware knows its session.
			require.Eventually(t, func() bool {
				require.NoError(t, s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "x:mine"}))
				select {
				case <-got["dropped"]:
					return true
				case <-time.After(10 * time.Millisecond):
					return false
				}
			}, 10*time.Second, time.Millisecond, changed(10, "updatesThroughMiddleware")+": no update")
			mu.Lock()
			dropping = true
			mu.Unlock()
			// next returns the next update name hears of, x:mine aside.
			next := func(name string) string {
				for {
					select {
					case u := <-got[name]:
						if u != "x:mine" {
							return u
						}
					case <-time.After(10 * time.Second):
						t.Fatalf("%s heard nothing", name)
					}
				}
			}
			require.Eventually(t, func() bool {
				// "kept" may not be listening yet on 2026-07-28: try until it is.
				require.NoError(t, s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "x:a"}))
				select {
				case u := <-got["kept"]:
					return u == "x:a"
				case <-time.After(10 * time.Millisecond):
					return false
				}
			}, 10*time.Second, time.Millisecond)
			require.NoError(t, s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "x:b"}))
			for next("kept") == "x:a" { // from the retries above
			}
			assert.Equal(t, "x:b", next("dropped"), changed(10, "updatesThroughMiddleware")+": a dropped notification arrived")
		})
	}
}

// 12: a sending middleware may keep a notification and send it later: it
// returns at once, and calls the rest of the chain with the request it
// was given, from another goroutine and with a context of its own; the
// notification then reaches the session. (ResourceUpdated has returned by
// then, and cancelled its own context.)
func TestSDKLaterSend(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			s := subscribingSDKServer()
			kept := make(chan func(), 100)
			s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method != "notifications/resources/updated" {
						return next(ctx, method, req)
					}
					kept <- func() {
						if _, err := next(context.Background(), method, req); err != nil {
							t.Errorf("%s: the later send failed: %v", changed(12, "laterSend"), err)
						}
					}
					return nil, nil
				}
			})
			got := make(chan string, 100)
			cs := mcptest.Connect(t, s, version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { got <- req.Params.URI },
			})
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "x:a"}))
			// On 2026-07-28 the listen is recorded in the background: try
			// until a notification is kept.
			var send func()
			require.Eventually(t, func() bool {
				require.NoError(t, s.ResourceUpdated(t.Context(), &mcp.ResourceUpdatedNotificationParams{URI: "x:a"}))
				select {
				case send = <-kept:
					return true
				default:
					return false
				}
			}, 10*time.Second, time.Millisecond, changed(12, "laterSend")+": nothing to keep")
			select {
			case u := <-got:
				t.Fatalf("%s: %s arrived before it was sent", changed(12, "laterSend"), u)
			case <-time.After(10 * time.Millisecond):
			}
			go send()
			select {
			case u := <-got:
				assert.Equal(t, "x:a", u)
			case <-time.After(10 * time.Second):
				t.Fatal(changed(12, "laterSend") + ": the later send never arrived")
			}
		})
	}
}

// 11: a stateful streamable HTTP handler refuses 2026-07-28 clients (which
// then fall back to 2025-11-25) and a stateless one serves them; every
// request over HTTP carries its headers in Extra, and a session is
// addressable (has an ID) exactly when it is a stateful handler's.
func TestSDKHTTPEras(t *testing.T) {
	t.Parallel()
	type seen struct {
		header bool
		id     string
	}
	var mu sync.Mutex
	var got []seen
	s := sdkServer(nil)
	s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, textResult("m"))
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/read" {
				mu.Lock()
				got = append(got, seen{header: req.GetExtra() != nil && req.GetExtra().Header != nil, id: req.GetSession().ID()})
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	for _, stateless := range []bool{false, true} {
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: stateless}))
		t.Cleanup(hs.Close)
		for _, version := range allVersions {
			cs := mcptest.ConnectHTTP(t, hs.URL, "", version, nil)
			want := version
			if !stateless && version >= "2026-07-28" {
				want = "2025-11-25"
			}
			assert.Equal(t, want, cs.InitializeResult().ProtocolVersion,
				changed(11, "httpEras")+": stateless %v, version %s", stateless, version)
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "x:marker"})
			require.NoError(t, err)
			mu.Lock()
			last := got[len(got)-1]
			mu.Unlock()
			assert.True(t, last.header, changed(11, "httpEras")+": no Extra.Header over HTTP")
			assert.Equal(t, stateless, last.id == "", changed(11, "httpEras")+": session ID %q, stateless %v", last.id, stateless)
		}
	}
	cs := mcptest.Connect(t, s, "2025-11-25", nil)
	_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "x:marker"})
	require.NoError(t, err)
	mu.Lock()
	assert.False(t, got[len(got)-1].header, changed(11, "httpEras")+": Extra.Header in memory")
	mu.Unlock()
}

// 13: go-sdk holds a subscription, and so notifies it, only once
// ServerOptions.SubscribeHandler has returned: a ResourceUpdated from
// within the handler reaches nobody. It holds it by the time the
// receiving middleware's next returns for resources/subscribe, and by the
// time the listen's notifications/subscriptions/acknowledged has passed
// the sending middleware.
func TestSDKSubscriptionHeldAfterHandler(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			var s *mcp.Server
			s = sdkServer(&mcp.ServerOptions{
				SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
					return s.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: req.Params.URI})
				},
				UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
			})
			s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, textResult("m"))
			held := func(uri string) {
				if err := s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
					t.Errorf("ResourceUpdated: %v", err)
				}
			}
			s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					if q, ok := req.(*mcp.SubscribeRequest); ok && err == nil {
						held(q.Params.URI)
					}
					return res, err
				}
			})
			s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && err == nil {
						for _, u := range p.Notifications.ResourceSubscriptions {
							held(u)
						}
					}
					return res, err
				}
			})
			got := make(chan string, 10)
			cs := mcptest.Connect(t, s, version, &mcp.ClientOptions{
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { got <- req.Params.URI },
			})
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "x:a"}))
			assert.Equal(t, "x:a", mcptest.Receive(t, got, changed(13, "subscriptionHeld")+": update once held"))
			// The one from within the handler would have come first, on the
			// same connection: there is none.
			assert.Empty(t, got, changed(13, "subscriptionHeld")+": the handler's own update reached the session")
		})
	}
}

// 14: a receiving middleware may pass a listen on with other resources
// than the client's; go-sdk's acknowledgment then passes the sending
// middleware with the listen's context and the listen's ID as its
// subscription ID, and what the middleware passes on is what the client
// is sent.
func TestSDKListenAcknowledgment(t *testing.T) {
	t.Parallel()
	s := subscribingSDKServer()
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if q, ok := req.(*mcp.SubscriptionsListenRequest); ok {
				n := *q.Params.Notifications
				n.ResourceSubscriptions = []string{"x:marker"}
				p := *q.Params
				p.Notifications = &n
				c := *q
				c.Params = &p
				return next(context.WithValue(ctx, ctxKey{}, "listen"), method, &c)
			}
			return next(ctx, method, req)
		}
	})
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams)
			if !ok || ctx.Value(ctxKey{}) != "listen" || !slices.Equal(p.Notifications.ResourceSubscriptions, []string{"x:marker"}) {
				return next(ctx, method, req)
			}
			acked := *p
			acked.Notifications.ResourceSubscriptions = []string{"x:a", "x:b"}
			return next(ctx, method, &mcp.ServerRequest[*mcp.SubscriptionsAcknowledgedParams]{Session: req.GetSession().(*mcp.ServerSession), Params: &acked})
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	msg, ok := mcptest.Await(rawListen(t, hs.URL, "x:a", "x:b"))
	require.True(t, ok, changed(14, "listenAcknowledgment")+": no acknowledgment")
	var ack mcp.SubscriptionsAcknowledgedParams
	notification(t, msg, "notifications/subscriptions/acknowledged", &ack)
	assert.Equal(t, []string{"x:a", "x:b"}, ack.Notifications.ResourceSubscriptions,
		changed(14, "listenAcknowledgment")+": the acknowledgment sent is not the middleware's")
	assert.EqualValues(t, 7, ack.Meta[mcp.MetaKeySubscriptionID], changed(14, "listenAcknowledgment")+": subscription ID")
}

// 15: a sending middleware may send another notification go-sdk knows,
// with params of its own, in place of one ServerSession.NotifyProgress
// sends; the client is sent that one, on the session's stream.
func TestSDKNotifyProgressCarries(t *testing.T) {
	t.Parallel()
	s := subscribingSDKServer()
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/progress" {
				return next(ctx, "notifications/resources/updated", &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{
					Session: req.GetSession().(*mcp.ServerSession),
					Params:  &mcp.ResourceUpdatedNotificationParams{URI: "x:carried", Meta: mcp.Meta{mcp.MetaKeySubscriptionID: 7}}})
			}
			return next(ctx, method, req)
		}
	})
	listening := make(chan *mcp.ServerSession, 1)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if q, ok := req.(*mcp.SubscriptionsListenRequest); ok {
				listening <- q.Session
			}
			return next(ctx, method, req)
		}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	msgs := rawListen(t, hs.URL, "x:marker")
	ss := mcptest.Receive(t, listening, "the listen")
	_, ok := mcptest.Await(msgs) // the acknowledgment
	require.True(t, ok)
	require.NoError(t, ss.NotifyProgress(t.Context(), &mcp.ProgressNotificationParams{}))
	msg, ok := mcptest.Await(msgs)
	require.True(t, ok, changed(15, "notifyProgressCarries")+": nothing sent")
	var p mcp.ResourceUpdatedNotificationParams
	notification(t, msg, "notifications/resources/updated", &p)
	assert.Equal(t, "x:carried", p.URI, changed(15, "notifyProgressCarries"))
	assert.EqualValues(t, 7, p.Meta[mcp.MetaKeySubscriptionID], changed(15, "notifyProgressCarries"))
}
