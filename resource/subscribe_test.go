package resource_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
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

// eras are one protocol version per subscription flow: resources/subscribe
// and the 2026-07-28 subscriptions/listen.
var eras = []string{"2025-11-25", "2026-07-28"}

// testWindow is the subscription window of the subscription tests, which
// run on synctest's fake clock.
const testWindow = 100 * time.Millisecond

// forEachEra runs f as a parallel subtest per era, in a synctest bubble.
func forEachEra(t *testing.T, f func(t *testing.T, version string)) {
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) { f(t, version) })
		})
	}
}

// settle lets every change reported so far be delivered: the window
// passes, and every goroutine of the bubble finishes what it can do.
func settle() {
	time.Sleep(testWindow)
	synctest.Wait()
}

// A subscriptions is a registry with subscriptions enabled, served by a
// server made with NewServer, to which watchers connect.
type subscriptions struct {
	reg    *resource.Registry
	server *mcp.Server
	// listenErrors receives the errors the server answers
	// subscriptions/listen requests with: go-sdk's client opens a
	// 2026-07-28 listen in the background and never reports its failure
	// to Subscribe's caller.
	listenErrors chan error
}

func newSubscriptions(t *testing.T, opts *resource.Options) *subscriptions {
	t.Helper()
	if opts == nil {
		opts = &resource.Options{}
	}
	if opts.Subscriptions.Window == 0 {
		opts.Subscriptions.Window = testWindow
	}
	s := &subscriptions{reg: newRegistry(t, opts), listenErrors: make(chan error, 100)}
	for _, u := range []string{"log://prod/api", "log://prod/web", "log://dev/api", "docs://readme"} {
		require.NoError(t, s.reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
	}
	require.NoError(t, s.reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2))
	server, err := s.reg.NewServer(&mcp.Implementation{Name: "subs"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	reportListenErrors(server, s.listenErrors)
	s.server = server
	return s
}

// watcher is a client that records the updates it is sent.
type watcher struct {
	session *mcp.ClientSession
	mu      sync.Mutex
	updates []string
}

// watch connects a watcher at protocol version.
func (s *subscriptions) watch(t *testing.T, version string) *watcher {
	w := &watcher{}
	w.session = mcptest.Connect(t, s.server, version, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			w.mu.Lock()
			w.updates = append(w.updates, req.Params.URI)
			w.mu.Unlock()
		},
	})
	return w
}

func (w *watcher) subscribe(t *testing.T, uris ...string) {
	t.Helper()
	for _, u := range uris {
		require.NoError(t, w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: u}), u)
	}
	synctest.Wait() // a 2026-07-28 listen is acknowledged in the background
}

// taken returns the updates w has received since the last call, sorted.
func (w *watcher) taken() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.updates
	w.updates = nil
	slices.Sort(out)
	return out
}

// stats is the registry's subscription count.
func (s *subscriptions) stats() int {
	n, _, _ := s.reg.SubscriptionStats()
	return n
}

func TestSubscribeChangeNotify(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, nil)
		a, b := s.watch(t, version), s.watch(t, version)
		assert.True(t, a.session.InitializeResult().Capabilities.Resources.Subscribe)
		a.subscribe(t, "log://prod/api", "db://users/7")
		b.subscribe(t, "docs://readme")
		require.Equal(t, 3, s.stats())

		s.reg.Changed("log://prod/api")
		s.reg.ChangedTemplate("db://{table}/{id}") // unknown template: nothing
		s.reg.ChangedTemplate("db://users/{id}")
		s.reg.Changed("docs://readme")
		settle()
		assert.Equal(t, []string{"db://users/7", "log://prod/api"}, a.taken(), "only subscribers are notified")
		assert.Equal(t, []string{"docs://readme"}, b.taken(), "only subscribers are notified")

		// Unsubscribe: silence.
		require.NoError(t, a.session.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "log://prod/api"}))
		synctest.Wait()
		require.Equal(t, 2, s.stats())
		s.reg.Changed("log://prod/api")
		s.reg.Changed("docs://readme")
		settle()
		assert.Empty(t, a.taken(), "no update after unsubscribing")
		assert.Equal(t, []string{"docs://readme"}, b.taken())
		require.NoError(t, a.session.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "never://subscribed"}))
	})
}

// A lone change is notified at once; a burst of 1,000 changes is at most
// two notifications per subscriber: its first change at once, the rest
// together when the window it opened ends.
func TestSubscriptionsCoalesce(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, nil)
		ws := []*watcher{s.watch(t, version), s.watch(t, version), s.watch(t, version)}
		for _, w := range ws {
			w.subscribe(t, "log://prod/api")
		}
		s.reg.Changed("log://prod/api")
		synctest.Wait()
		for i, w := range ws {
			assert.Equal(t, []string{"log://prod/api"}, w.taken(), "watcher %d: a lone change, at once", i)
		}
		for range 999 {
			s.reg.Changed("log://prod/api")
		}
		time.Sleep(testWindow / 2)
		synctest.Wait()
		assert.Empty(t, ws[0].taken(), "nothing more before the window ends")
		settle()
		for i, w := range ws {
			assert.Equal(t, []string{"log://prod/api"}, w.taken(), "watcher %d: the rest of the burst, when the window ends", i)
		}
		settle() // a window with no change: the spell is quiet again
		s.reg.Changed("log://prod/api")
		synctest.Wait()
		for i, w := range ws {
			assert.Equal(t, []string{"log://prod/api"}, w.taken(), "watcher %d: the next lone change, at once", i)
		}
	})
}

func TestChangedPrefix(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, nil)
		w := s.watch(t, version)
		w.subscribe(t, "log://prod/api", "log://prod/web", "log://dev/api")
		s.reg.ChangedPrefix("log://prod/")
		s.reg.Changed("docs://readme") // not watched: nothing
		settle()
		assert.Equal(t, []string{"log://prod/api", "log://prod/web"}, w.taken())
		s.reg.Changed("log://dev/api")
		settle()
		assert.Equal(t, []string{"log://dev/api"}, w.taken())
	})
}

// subscribeError subscribes and returns the error the server answered
// with, in either era.
func (s *subscriptions) subscribeError(t *testing.T, w *watcher, version, uri string) error {
	t.Helper()
	err := w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
	if version < "2026-07-28" {
		return err
	}
	require.NoError(t, err, "the 2026-07-28 listen is opened in the background")
	synctest.Wait()
	select {
	case err := <-s.listenErrors:
		return err
	default:
		t.Fatalf("subscriptions/listen for %s was not refused", uri)
		return nil
	}
}

func TestSubscribeRefusals(t *testing.T) {
	t.Parallel()
	forEachEra(t, func(t *testing.T, version string) {
		s := newSubscriptions(t, &resource.Options{Subscriptions: resource.SubscriptionOptions{MaxPerSession: 2}})
		w := s.watch(t, version)
		for uri, why := range map[string]string{
			"log://nowhere":         "no such resource",
			"relative":              "no scheme",
			"postgres://u:p@h/x":    "userinfo",
			"db://users/too/deep/1": "no such resource",
		} {
			jerr := rpcError(t, s.subscribeError(t, w, version, uri))
			assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, uri)
			assert.Contains(t, jerr.Message, why, uri)
		}
		w.subscribe(t, "log://prod/api", "log://prod/web")
		require.Equal(t, 2, s.stats())
		if version >= "2026-07-28" {
			// The cap is a listen stream's, and go-sdk's client opens one
			// for each URI: TestSubscriptionsPerListenStream sends one
			// listen of many.
			return
		}
		jerr := rpcError(t, s.subscribeError(t, w, version, "log://dev/api"))
		assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code)
		assert.Contains(t, jerr.Message, "too many subscriptions")
		assert.Equal(t, 2, s.stats(), "a refused subscription records nothing")
	})
}

// A server made elsewhere and mounted serves subscriptions only if it was
// made with the registry's handlers.
func TestSubscribeCapabilityOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		h := connect(t, newRegistry(t, nil), version, nil, nil)
		assert.False(t, h.session.InitializeResult().Capabilities.Resources.Subscribe, version)
	}
}

func TestDemandHooks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var events []string
		hook := func(what string) func(string) {
			return func(uri string) {
				mu.Lock()
				events = append(events, what+" "+uri)
				mu.Unlock()
			}
		}
		s := newSubscriptions(t, &resource.Options{Subscriptions: resource.SubscriptionOptions{
			OnWatch: hook("watch"), OnUnwatch: hook("unwatch"),
		}})
		a, b := s.watch(t, "2025-11-25"), s.watch(t, "2026-07-28")
		a.subscribe(t, "log://prod/api")
		b.subscribe(t, "log://prod/api")
		require.Equal(t, 2, s.stats())
		require.NoError(t, a.session.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "log://prod/api"}))
		synctest.Wait()
		require.Equal(t, 1, s.stats())
		mu.Lock()
		assert.Equal(t, []string{"watch log://prod/api"}, events, "one watcher left: still watched")
		mu.Unlock()
		require.NoError(t, b.session.Close()) // the last watcher goes away by disconnecting
		synctest.Wait()
		assert.Zero(t, s.stats())
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"watch log://prod/api", "unwatch log://prod/api"}, events)
	})
}

// TestSessionsLeaveNoTrace subscribes and disconnects many sessions, in
// both eras, eight at a time: afterwards the registry holds nothing. 500
// sessions, 62 rounds of the eight workers, interleave connecting,
// subscribing and leaving as 2,000 did, in a quarter of the time (2,000
// took 8 to 18 s under -race).
func TestSessionsLeaveNoTrace(t *testing.T) {
	t.Parallel()
	sessions := 500
	if testing.Short() {
		sessions = 200
	}
	reg := newRegistry(t, nil)
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2))
	server, err := reg.NewServer(&mcp.Implementation{Name: "many"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
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
	// Each session's subscriptions are dropped by a goroutine that saw it
	// end; give them a moment.
	require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 0 }, 10*time.Second, time.Millisecond)
	subs, sess, uris := reg.SubscriptionStats()
	assert.Zero(t, subs+sess+uris, "after %d sessions came and went", sessions)
}

// A change reported while a subscription is being made, after the
// registry recorded it but before go-sdk holds it (behaviour 13), is not
// lost: the subscriber hears of it. OnWatch reporting the URI's state
// as it starts watching is the common case, over every transport.
func TestChangeWhileSubscribingIsNotLost(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{"memory", "http"} {
		for _, version := range eras {
			t.Run(transport+"/"+version, func(t *testing.T) {
				t.Parallel()
				// OnWatch runs within the subscription, before go-sdk holds it;
				// it waits until go-sdk has sent the change it reports (to
				// nobody: go-sdk logs each ResourceUpdated), so that the
				// change is delivered while the subscription is pending.
				sent := make(chan struct{}, 10)
				var reg *resource.Registry
				reg = newRegistry(t, &resource.Options{Logger: quietLogger(), Subscriptions: resource.SubscriptionOptions{
					OnWatch: func(uri string) {
						assert.NoError(t, reg.Changed(uri))
						if _, ok := mcptest.Await(sent); !ok {
							t.Error("go-sdk never sent the change")
						}
					},
				}})
				require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
				sdkLog := slog.New(logSignal{msg: "resource updated notification sent", c: sent})
				server, err := reg.NewServer(&mcp.Implementation{Name: "pending"}, &mcp.ServerOptions{Logger: sdkLog})
				require.NoError(t, err)
				got := make(chan string, 10)
				opts := &mcp.ClientOptions{
					ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) { got <- req.Params.URI },
				}
				var cs *mcp.ClientSession
				if transport == "memory" {
					cs = mcptest.Connect(t, server, version, opts)
				} else {
					cs = mcptest.ConnectHTTP(t, serveHTTP(t, server, nil), "", version, opts)
				}
				require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://a"}))
				assert.Equal(t, "docs://a", mcptest.Receive(t, got, "update of the change OnWatch reported"))
			})
		}
	}
}

// A logSignal is a slog handler that sends on c for each record whose
// message is msg, and drops every record.
type logSignal struct {
	msg string
	c   chan<- struct{}
}

func (h logSignal) Enabled(context.Context, slog.Level) bool { return true }
func (h logSignal) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.c <- struct{}{}
	}
	return nil
}
func (h logSignal) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logSignal) WithGroup(string) slog.Handler      { return h }

// reportListenErrors sends on errs the error of each subscriptions/listen
// server answers with one: go-sdk's client opens a 2026-07-28
// subscription in the background and drops the server's answer.
func reportListenErrors(server *mcp.Server, errs chan<- error) {
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "subscriptions/listen" && err != nil {
				errs <- err
			}
			return res, err
		}
	})
}
