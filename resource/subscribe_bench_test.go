package resource_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkNotify compares, side by side, what reporting a change to a
// resource with 1,000 subscribed sessions costs its caller: the registry's
// Changed, which returns at once (the first change after a quiet spell
// goes out at once and the rest once per window, however many it
// gathers, sent by the registry's sending goroutines), and
// go-sdk v1.8's bare Server.ResourceUpdated, which returns once it has
// sent the notification to every subscriber.
//
// The sessions are real: go-sdk clients over in-memory transports,
// subscribed through resources/subscribe (2025-11-25) or a
// subscriptions/listen (2026-07-28), so that the server's own subscription
// map holds them; on the mcpres side it is filled through
// ServerOptions.SubscribeHandler = reg.Subscribe. Each client counts the
// notifications/resources/updated it receives: notifications/op is that
// count over the benchmark's operations (for mcpres, what the window's
// coalescing leaves of them).
//
//	go test -run '^$' -bench Notify -benchmem -count 5 ./resource/
func BenchmarkNotify(b *testing.B) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		b.Run("era="+version+"/mcpres", func(b *testing.B) {
			reg, n := newMountedNotifyBench(b, notifySessions, version)
			if subs, sessions, uris := reg.SubscriptionStats(); subs != notifySessions || sessions != notifySessions || uris != 1 {
				b.Fatalf("SubscriptionStats() = %d, %d, %d; want %d, %d, 1", subs, sessions, uris, notifySessions, notifySessions)
			}
			n.run(b, func() { reg.Changed(notifyURI) })
		})
		b.Run("era="+version+"/gosdk", func(b *testing.B) {
			n := newSDKNotifyBench(b, notifySessions, version)
			ctx := context.Background()
			params := &mcp.ResourceUpdatedNotificationParams{URI: notifyURI}
			n.run(b, func() {
				if err := n.server.ResourceUpdated(ctx, params); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

const (
	notifySessions = 1_000
	notifyURI      = "bench://watched"
)

func notifyRead(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: notifyURI, Text: "x"}}}, nil
}

// newMountedNotifyBench returns a registry holding notifyURI, mounted on
// the server of a new notifyBench of sessions clients of version. Its log
// is discarded: a stalled session's sends fail, and are logged, as it
// closes.
func newMountedNotifyBench(b *testing.B, sessions int, version string) (*resource.Registry, *notifyBench) {
	reg := newRegistry(b, &resource.Options{Logger: quietLogger()})
	if err := reg.Add(&mcp.Resource{URI: notifyURI, Name: "watched"}, notifyRead); err != nil {
		b.Fatal(err)
	}
	n := newNotifyBench(b, sessions, version, &mcp.ServerOptions{
		SubscribeHandler:   reg.Subscribe,
		UnsubscribeHandler: reg.Unsubscribe,
	}, func(s *mcp.Server) (notify func() error) {
		resource.Mount(s, reg)
		// go-sdk's ResourceUpdated reaches no 2026-07-28 listen: the
		// registry keeps their subscriptions (resource/listen.go).
		return func() error { return reg.Changed(notifyURI) }
	})
	return reg, n
}

// newSDKNotifyBench returns a notifyBench of sessions clients of version
// on a plain go-sdk server that accepts every subscription and holds
// notifyURI, so that it advertises resources (and subscribe) and agrees
// to listens.
func newSDKNotifyBench(b *testing.B, sessions int, version string) *notifyBench {
	return newNotifyBench(b, sessions, version, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	}, func(s *mcp.Server) (notify func() error) {
		s.AddResource(&mcp.Resource{URI: notifyURI, Name: "watched"}, notifyRead)
		params := &mcp.ResourceUpdatedNotificationParams{URI: notifyURI}
		return func() error { return s.ResourceUpdated(context.Background(), params) }
	})
}

// A notifyBench is a server with connected clients, each subscribed to
// notifyURI and counting its notifications.
type notifyBench struct {
	server   *mcp.Server
	notify   func() error   // sends every subscriber one notification of notifyURI
	received []atomic.Int64 // per client
	total    atomic.Int64
	target   atomic.Int64  // the total at which to signal reached
	reached  chan struct{} // signalled when total reaches target
}

// newNotifyBench creates a server with sopts, sets it up with mount,
// which returns how to notify its subscribers of notifyURI, connects
// sessions clients, speaking version, and subscribes them; b.Cleanup
// closes them.
func newNotifyBench(b *testing.B, sessions int, version string, sopts *mcp.ServerOptions, mount func(*mcp.Server) (notify func() error)) *notifyBench {
	ctx := context.Background()
	sopts.Logger = quietLogger()
	n := &notifyBench{
		server:   mcp.NewServer(&mcp.Implementation{Name: "bench"}, sopts),
		received: make([]atomic.Int64, sessions),
		reached:  make(chan struct{}, 1),
	}
	n.notify = mount(n.server)

	var (
		mu      sync.Mutex
		clients []*mcp.ClientSession
		servers []*mcp.ServerSession
		setup   sync.WaitGroup
		failed  atomic.Value
	)
	b.Cleanup(func() {
		for _, cs := range clients {
			cs.Close()
		}
		for _, ss := range servers {
			ss.Wait()
		}
	})
	const workers = 8
	for w := range workers {
		setup.Go(func() {
			for i := w; i < sessions; i += workers {
				client, acked := ackedClient(notifyURI, &mcp.ClientOptions{
					ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) {
						n.received[i].Add(1)
						if n.total.Add(1) == n.target.Load() {
							select {
							case n.reached <- struct{}{}:
							default:
							}
						}
					},
				})
				st, ct := mcp.NewInMemoryTransports()
				ss, err := n.server.Connect(ctx, st, nil)
				if err != nil {
					failed.Store(err)
					return
				}
				cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					failed.Store(err)
					return
				}
				mu.Lock()
				clients, servers = append(clients, cs), append(servers, ss)
				mu.Unlock()
				if got := cs.InitializeResult().ProtocolVersion; got != version {
					failed.Store(fmt.Errorf("negotiated %s, want %s", got, version))
					return
				}
				if err := subscribeAcked(ctx, cs, acked, notifyURI); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	setup.Wait()
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	n.checkSubscribed(b)
	return n
}

// ackedClient returns a client with opts, and a channel that hears of
// each notifications/subscriptions/acknowledged it receives for a
// subscription to uri.
func ackedClient(uri string, opts *mcp.ClientOptions) (*mcp.Client, <-chan struct{}) {
	acked := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench"}, opts)
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && slices.Contains(p.Notifications.ResourceSubscriptions, uri) {
				acked <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	return client, acked
}

// subscribeAcked subscribes cs, a session of a client from ackedClient
// for uri, to uri, and returns once the server holds the subscription: before
// 2026-07-28 when Subscribe returns; at 2026-07-28, whose Subscribe
// returns once its subscriptions/listen is sent, when the listen's
// acknowledgment arrives (go-sdk sends it once it has recorded the
// subscription). A minute without it is an error.
func subscribeAcked(ctx context.Context, cs *mcp.ClientSession, acked <-chan struct{}, uri string) error {
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return err
	}
	if cs.InitializeResult().ProtocolVersion < "2026-07-28" {
		return nil
	}
	if _, ok := mcptest.Await(acked); !ok {
		return fmt.Errorf("subscriptions/listen to %s not acknowledged within %v", uri, mcptest.WaitTimeout)
	}
	return nil
}

// checkSubscribed sends one notification (notify), and returns once
// every client has received it.
func (n *notifyBench) checkSubscribed(b *testing.B) {
	n.target.Store(n.total.Load() + int64(len(n.received)))
	if err := n.notify(); err != nil {
		b.Fatal(err)
	}
	if _, ok := mcptest.Await(n.reached); !ok {
		b.Fatalf("%d of %d sessions notified within %v", n.total.Load(), len(n.received), mcptest.WaitTimeout)
	}
	for i := range n.received {
		if got := n.received[i].Load(); got != 1 {
			b.Fatalf("session %d received %d notifications, want 1", i, got)
		}
	}
}

// run times notify, and reports the notifications the clients received
// while it ran, per operation.
func (n *notifyBench) run(b *testing.B, notify func()) {
	before := n.total.Load()
	b.ReportAllocs()
	for b.Loop() {
		notify()
	}
	b.ReportMetric(float64(n.total.Load()-before)/float64(b.N), "notifications/op")
}
