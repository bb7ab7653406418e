package resource_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eras are one protocol version per subscription flow: resources/subscribe
// and the 2026-07-28 subscriptions/listen.
var eras = []string{"2025-11-25", "2026-07-28"}

// watcher is a client that records the updates it is sent.
type watcher struct {
	h       harness
	mu      sync.Mutex
	updates []string
	got     chan string
}

func (w *watcher) count(uri string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, u := range w.updates {
		if u == uri {
			n++
		}
	}
	return n
}

// waitFor waits until w has been told of uri.
func (w *watcher) waitFor(t *testing.T, uri string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for w.count(uri) == 0 {
		select {
		case <-w.got:
		case <-deadline:
			t.Fatalf("no notifications/resources/updated for %s", uri)
		}
	}
}

// listenErrors receives the errors the server answers subscriptions/listen
// requests with: go-sdk's client opens a 2026-07-28 listen in the
// background and never reports its failure to Subscribe's caller.
var listenErrors = make(chan error, 100)

// subscriptionServer returns a registry with subscriptions enabled and a
// way to connect watchers to one server it is mounted on.
func subscriptionServer(t *testing.T, opts *resource.Options) (*resource.Registry, func(version string) *watcher) {
	for len(listenErrors) > 0 {
		<-listenErrors // left by an earlier test
	}
	if opts == nil {
		opts = &resource.Options{}
	}
	if opts.Subscriptions.Window == 0 {
		opts.Subscriptions.Window = 20 * time.Millisecond
	}
	reg := resource.NewRegistry(opts)
	for _, u := range []string{"log://prod/api", "log://prod/web", "log://dev/api", "docs://readme"} {
		require.NoError(t, reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2))
	server := mcp.NewServer(&mcp.Implementation{Name: "subs"}, &mcp.ServerOptions{
		SubscribeHandler: reg.Subscribe, UnsubscribeHandler: reg.Unsubscribe,
	})
	resource.Mount(server, reg)
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "subscriptions/listen" && err != nil {
				listenErrors <- err
			}
			return res, err
		}
	})
	connectWatcher := func(version string) *watcher {
		w := &watcher{got: make(chan string, 1000)}
		ctx := context.Background()
		st, ct := mcp.NewInMemoryTransports()
		ss, err := server.Connect(ctx, st, nil)
		require.NoError(t, err)
		client := mcp.NewClient(&mcp.Implementation{Name: "watcher"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				w.mu.Lock()
				w.updates = append(w.updates, req.Params.URI)
				w.mu.Unlock()
				select {
				case w.got <- req.Params.URI:
				default:
				}
			},
		})
		cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close(); ss.Wait() })
		w.h = harness{server: server, session: cs}
		return w
	}
	return reg, connectWatcher
}

// waitStats waits until the registry holds the given number of
// subscriptions.
func waitStats(t *testing.T, reg *resource.Registry, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, _, _ := reg.SubscriptionStats()
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry holds %d subscriptions, want %d", n, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestSubscribeChangeNotify(t *testing.T) {
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			reg, connectWatcher := subscriptionServer(t, nil)
			ctx := context.Background()
			a, b := connectWatcher(version), connectWatcher(version)
			assert.True(t, a.h.session.InitializeResult().Capabilities.Resources.Subscribe)
			require.NoError(t, a.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "log://prod/api"}))
			require.NoError(t, b.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs://readme"}))
			require.NoError(t, a.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "db://users/7"}))
			waitStats(t, reg, 3)

			reg.Changed("log://prod/api")
			a.waitFor(t, "log://prod/api")
			reg.ChangedTemplate("db://{table}/{id}") // unknown template: nothing
			reg.ChangedTemplate("db://users/{id}")
			a.waitFor(t, "db://users/7")
			reg.Changed("docs://readme")
			b.waitFor(t, "docs://readme")
			assert.Zero(t, b.count("log://prod/api"), "only subscribers are notified")
			assert.Zero(t, a.count("docs://readme"), "only subscribers are notified")

			// Unsubscribe: silence.
			require.NoError(t, a.h.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "log://prod/api"}))
			waitStats(t, reg, 2)
			before := a.count("log://prod/api")
			reg.Changed("log://prod/api")
			reg.Changed("docs://readme")
			b.waitFor(t, "docs://readme") // the later change has gone out
			time.Sleep(100 * time.Millisecond)
			assert.Equal(t, before, a.count("log://prod/api"), "no update after unsubscribing")
			require.NoError(t, a.h.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "never://subscribed"}))
		})
	}
}

func TestSubscriptionsCoalesce(t *testing.T) {
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			reg, connectWatcher := subscriptionServer(t, &resource.Options{Subscriptions: resource.SubscriptionOptions{Window: 200 * time.Millisecond}})
			ctx := context.Background()
			ws := []*watcher{connectWatcher(version), connectWatcher(version), connectWatcher(version)}
			for _, w := range ws {
				require.NoError(t, w.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "log://prod/api"}))
			}
			waitStats(t, reg, len(ws))
			for range 1000 {
				reg.Changed("log://prod/api")
			}
			for _, w := range ws {
				w.waitFor(t, "log://prod/api")
			}
			time.Sleep(500 * time.Millisecond)
			for i, w := range ws {
				n := w.count("log://prod/api")
				assert.LessOrEqual(t, n, 2, "watcher %d: 1,000 changes gave %d notifications", i, n)
			}
		})
	}
}

func TestChangedPrefix(t *testing.T) {
	reg, connectWatcher := subscriptionServer(t, nil)
	ctx := context.Background()
	w := connectWatcher("2025-11-25")
	for _, u := range []string{"log://prod/api", "log://prod/web", "log://dev/api"} {
		require.NoError(t, w.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: u}))
	}
	waitStats(t, reg, 3)
	reg.ChangedPrefix("log://prod/")
	w.waitFor(t, "log://prod/api")
	w.waitFor(t, "log://prod/web")
	reg.Changed("docs://readme") // not watched: nothing, and a marker for "later"
	reg.Changed("log://dev/api")
	w.waitFor(t, "log://dev/api")
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.Equal(t, []string{"log://dev/api", "log://prod/api", "log://prod/web"}, sorted(w.updates))
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// subscribeError subscribes and returns the error the server answered
// with, in either era.
func subscribeError(t *testing.T, w *watcher, version, uri string) error {
	t.Helper()
	err := w.h.session.Subscribe(context.Background(), &mcp.SubscribeParams{URI: uri})
	if version < "2026-07-28" {
		return err
	}
	require.NoError(t, err, "the 2026-07-28 listen is opened in the background")
	select {
	case err := <-listenErrors:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("subscriptions/listen for %s was not refused", uri)
		return nil
	}
}

func TestSubscribeRefusals(t *testing.T) {
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			reg, connectWatcher := subscriptionServer(t, &resource.Options{Subscriptions: resource.SubscriptionOptions{MaxPerSession: 2}})
			ctx := context.Background()
			w := connectWatcher(version)
			for uri, why := range map[string]string{
				"log://nowhere":         "no such resource",
				"relative":              "no scheme",
				"postgres://u:p@h/x":    "userinfo",
				"db://users/too/deep/1": "no such resource",
			} {
				jerr := rpcError(t, subscribeError(t, w, version, uri))
				assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, uri)
				assert.Contains(t, jerr.Message, why, uri)
			}
			require.NoError(t, w.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "log://prod/api"}))
			require.NoError(t, w.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "log://prod/web"}))
			waitStats(t, reg, 2)
			jerr := rpcError(t, subscribeError(t, w, version, "log://dev/api"))
			assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code)
			assert.Contains(t, jerr.Message, "too many subscriptions")
			n, _, _ := reg.SubscriptionStats()
			assert.Equal(t, 2, n, "a refused subscription records nothing")
		})
	}
}

func TestSubscribeCapabilityOnlyWhenEnabled(t *testing.T) {
	for _, version := range eras {
		h := connect(t, resource.NewRegistry(nil), version, nil, nil)
		assert.False(t, h.session.InitializeResult().Capabilities.Resources.Subscribe, version)
	}
}

func TestDemandHooks(t *testing.T) {
	var mu sync.Mutex
	var events []string
	hook := func(what string) func(string) {
		return func(uri string) {
			mu.Lock()
			events = append(events, what+" "+uri)
			mu.Unlock()
		}
	}
	reg, connectWatcher := subscriptionServer(t, &resource.Options{Subscriptions: resource.SubscriptionOptions{
		OnWatch: hook("watch"), OnUnwatch: hook("unwatch"),
	}})
	ctx := context.Background()
	a, b := connectWatcher("2025-11-25"), connectWatcher("2026-07-28")
	require.NoError(t, a.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "log://prod/api"}))
	require.NoError(t, b.h.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "log://prod/api"}))
	waitStats(t, reg, 2)
	require.NoError(t, a.h.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "log://prod/api"}))
	waitStats(t, reg, 1)
	mu.Lock()
	assert.Equal(t, []string{"watch log://prod/api"}, events, "one watcher left: still watched")
	mu.Unlock()
	require.NoError(t, b.h.session.Close()) // the last watcher goes away by disconnecting
	waitStats(t, reg, 0)
	// Hooks may run just after the change that causes them.
	assert.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Equal([]string{"watch log://prod/api", "unwatch log://prod/api"}, events)
	}, 10*time.Second, 5*time.Millisecond, "events: %v", events)
}

// TestSessionsLeaveNoTrace subscribes and disconnects many sessions, in
// both eras: afterwards the registry holds nothing.
func TestSessionsLeaveNoTrace(t *testing.T) {
	sessions := 10_000
	if testing.Short() {
		sessions = 500
	}
	reg := resource.NewRegistry(nil)
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2))
	server := mcp.NewServer(&mcp.Implementation{Name: "many"}, &mcp.ServerOptions{
		SubscribeHandler: reg.Subscribe, UnsubscribeHandler: reg.Unsubscribe,
	})
	resource.Mount(server, reg)
	ctx := context.Background()
	var failed atomic.Int32
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			client := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil)
			for i := range work {
				st, ct := mcp.NewInMemoryTransports()
				ss, err := server.Connect(ctx, st, nil)
				if err != nil {
					failed.Add(1)
					continue
				}
				cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: eras[i%2]})
				if err == nil {
					for j := range 3 {
						if cs.Subscribe(ctx, &mcp.SubscribeParams{URI: fmt.Sprintf("db://users/%d", (i+j)%50)}) != nil {
							failed.Add(1)
						}
					}
					cs.Close()
				} else {
					failed.Add(1)
				}
				ss.Wait()
			}
		})
	}
	for i := range sessions {
		work <- i
	}
	close(work)
	wg.Wait()
	require.Zero(t, failed.Load())
	waitStats(t, reg, 0)
	subs, sess, uris := reg.SubscriptionStats()
	assert.Zero(t, subs+sess+uris, "after %d sessions came and went", sessions)
}
