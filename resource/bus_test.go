package resource_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/internal/burst"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replicas are registries with the same registrations, each on its own
// Bus of one Hub, as the replicas of one server are.
func replicas(t *testing.T, n int, opts *resource.Options) ([]*subscriptions, *subscribe.Hub) {
	t.Helper()
	hub := &subscribe.Hub{}
	out := make([]*subscriptions, n)
	for i := range out {
		o := &resource.Options{}
		if opts != nil {
			*o = *opts
		}
		o.Subscriptions.Bus = hub.Bus()
		o.ListChangedDelay = testWindow
		out[i] = newSubscriptions(t, o)
	}
	return out, hub
}

// A change reported on any replica reaches the subscribers of every
// replica, in both eras, once each, coalesced as on one replica; the
// replica that reported it does not deliver it twice.
func TestBusChangesReachEveryReplica(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rs, _ := replicas(t, 3, nil)
		var watchers []*watcher
		for _, r := range rs {
			for _, version := range eras {
				w := r.watch(t, version)
				w.subscribe(t, "db://users/7", "log://prod/api")
				watchers = append(watchers, w)
			}
		}
		for i, r := range rs {
			require.NoError(t, r.reg.Changed("db://users/7")) // at once
			require.NoError(t, r.reg.Changed("db://users/7")) // in its window,
			require.NoError(t, r.reg.Changed("db://users/7")) // coalesced with this one
			settle()
			settle()
			for j, w := range watchers {
				assert.Equal(t, []string{"db://users/7", "db://users/7"}, w.taken(), "change on replica %d, watcher %d", i, j)
			}
		}
		// A change no one on the reporting replica watches is published all
		// the same.
		for _, w := range watchers[:2] {
			require.NoError(t, w.session.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: "db://users/7"}))
		}
		synctest.Wait()
		require.NoError(t, rs[0].reg.Changed("db://users/7"))
		settle()
		for j, w := range watchers {
			want := []string{"db://users/7"}
			if j < 2 {
				want = nil
			}
			assert.Equal(t, want, w.taken(), "watcher %d", j)
		}
		require.NoError(t, rs[1].reg.ChangedPrefix("log://prod/"))
		settle()
		for j, w := range watchers {
			assert.Equal(t, []string{"log://prod/api"}, w.taken(), "prefix, watcher %d", j)
		}
		require.NoError(t, rs[2].reg.ChangedTemplate("db://users/{id}"))
		settle()
		for j, w := range watchers {
			want := []string{"db://users/7"}
			if j < 2 {
				want = nil
			}
			assert.Equal(t, want, w.taken(), "template, watcher %d", j)
		}
	})
}

// A change the registry refuses is not published; nor is anything once
// the registry is closed; and a closed registry takes no more changes.
func TestBusPublishesOnlyGoodChanges(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rs, _ := replicas(t, 2, nil)
		w := rs[1].watch(t, "2025-11-25")
		w.subscribe(t, "db://users/7")
		assert.ErrorIs(t, rs[0].reg.Changed("db://users/%37"), resource.ErrInvalidURI)
		assert.ErrorIs(t, rs[0].reg.Changed("nope://x"), resource.ErrNotFound)
		assert.ErrorIs(t, rs[0].reg.ChangedPrefix("db://users /"), resource.ErrInvalidURI)
		assert.ErrorIs(t, rs[0].reg.ChangedTemplate("db://{x}"), resource.ErrNotFound)
		settle()
		assert.Empty(t, w.taken())

		require.NoError(t, rs[0].reg.Close())
		assert.NoError(t, rs[0].reg.Changed("db://users/7"))
		settle()
		assert.Empty(t, w.taken(), "a closed registry publishes nothing")
	})
}

// NotifyListChanged reaches every replica's sessions; Add and Remove,
// which each replica makes for itself, notify only their own.
func TestBusListChanged(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rs, _ := replicas(t, 2, nil)
		counts := make([]int, 2)
		var mu sync.Mutex
		for i, r := range rs {
			// A session of each era: list_changed goes to every session.
			for _, version := range eras {
				connectListWatcher(t, r.server, version, func() { mu.Lock(); counts[i]++; mu.Unlock() })
			}
		}
		synctest.Wait()
		rs[0].reg.NotifyListChanged()
		settleList()
		mu.Lock()
		assert.Equal(t, []int{2, 2}, counts, "NotifyListChanged: every session of every replica, once")
		counts[0], counts[1] = 0, 0
		mu.Unlock()

		require.NoError(t, rs[1].reg.Add(&mcp.Resource{URI: "docs://new", Name: "new"}, resource.Text("new")))
		settleList()
		mu.Lock()
		assert.Equal(t, []int{0, 2}, counts, "Add: its own replica only")
		mu.Unlock()
	})
}

// A change to a template this replica does not hold is logged once, and
// delivery goes on.
func TestBusUnknownTemplateLoggedOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		hub := &subscribe.Hub{}
		other := hub.Bus()
		reg := newRegistry(t, &resource.Options{
			Logger:        slog.New(slog.NewTextHandler(&logs, nil)),
			Subscriptions: resource.SubscriptionOptions{Bus: hub.Bus(), Window: testWindow},
		})
		_ = reg
		for range 3 {
			other.Publish(subscribe.Change{Kind: subscribe.UpdatedTemplate, Value: "x://{only-there}"})
		}
		synctest.Wait()
		assert.Equal(t, 1, strings.Count(logs.String(), "does not hold"), logs.String())
	})
}

// A Bus serves one registry: a second registry on it is refused.
func TestBusOneRegistryEach(t *testing.T) {
	t.Parallel()
	hub := &subscribe.Hub{}
	bus := hub.Bus()
	newRegistry(t, &resource.Options{Subscriptions: resource.SubscriptionOptions{Bus: bus}})
	_, err := resource.NewRegistry(&resource.Options{Subscriptions: resource.SubscriptionOptions{Bus: bus}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Bus")
}

// Three replicas behind serve's edge and go-sdk's handler for every era, one client of each protocol era
// on a different replica: a change reported on any replica reaches all
// three, once each.
func TestBusAcrossHTTPReplicas(t *testing.T) {
	t.Parallel()
	hub := &subscribe.Hub{}
	var regs []*resource.Registry
	var watchers []*mcptest.Notifications
	for i, version := range allVersions {
		reg := newRegistry(t, &resource.Options{Logger: quietLogger(),
			Subscriptions: resource.SubscriptionOptions{Window: time.Millisecond, Bus: hub.Bus()}})
		require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"}, nil2))
		server, err := reg.NewServer(&mcp.Implementation{Name: "replica", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
		require.NoError(t, err)
		w := &mcptest.Notifications{}
		cs := mcptest.ConnectHTTP(t, serveHTTP(t, server, nil), "", version, w.ClientOptions(nil))
		require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "db://users/7"}), version)
		require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 1 }, time.Minute, time.Millisecond, "replica %d", i)
		regs = append(regs, reg)
		watchers = append(watchers, w)
	}
	for _, reg := range regs {
		require.NoError(t, reg.Changed("db://users/7"))
		for _, w := range watchers {
			w.WaitUpdated(t, "db://users/7", nil)
		}
	}
	// That nothing is delivered twice is TestBusChangesReachEveryReplica's
	// part, on the fake clock.
}

// settleList lets every list change reported so far be delivered:
// ListChangedDelay passes, then go-sdk's own 10 ms delay.
func settleList() {
	time.Sleep(testWindow + 10*time.Millisecond)
	synctest.Wait()
}

// connectListWatcher connects a client at version to server that calls
// listed on each list_changed.
func connectListWatcher(t *testing.T, server *mcp.Server, version string, listed func()) *mcp.ClientSession {
	t.Helper()
	return mcptest.Connect(t, server, version, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listed() },
	})
}

// A resyncBus is a Bus whose test says when its replica may have missed
// changes, as a broker bus does after an outage or a gap.
type resyncBus struct {
	mu      sync.Mutex
	deliver func(subscribe.Change)
}

func (b *resyncBus) Publish(subscribe.Change) {}

func (b *resyncBus) Listen(deliver func(subscribe.Change)) (func(), error) {
	b.mu.Lock()
	b.deliver = deliver
	b.mu.Unlock()
	return func() {}, nil
}

func (b *resyncBus) resync(why string) {
	b.mu.Lock()
	deliver := b.deliver
	b.mu.Unlock()
	deliver(subscribe.Change{Kind: subscribe.Resync, Value: why})
}

// When the bus says the replica may have missed changes, every session
// of every era is told to read again each URI it watches, once, and that
// the list changed; it is counted, observed and logged once an episode.
func TestBusResyncTellsEveryWatcher(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bus := &resyncBus{}
		obs := &recorder{}
		logs := &syncBuffer{}
		r := newSubscriptions(t, &resource.Options{Observer: obs, ListChangedDelay: testWindow,
			Logger:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Subscriptions: resource.SubscriptionOptions{Bus: bus}})
		var watchers []*watcher
		lists := make([]int, len(eras))
		var mu sync.Mutex
		for i, version := range eras {
			w := r.watch(t, version)
			w.subscribe(t, "db://users/7", "log://prod/api")
			watchers = append(watchers, w)
			connectListWatcher(t, r.server, version, func() { mu.Lock(); lists[i]++; mu.Unlock() })
		}
		synctest.Wait()
		bus.resync("a test's gap")
		settle()
		settleList()
		for i, w := range watchers {
			assert.Equal(t, []string{"db://users/7", "log://prod/api"}, w.taken(), "watcher %s", eras[i])
		}
		mu.Lock()
		for i, n := range lists {
			assert.Equal(t, 1, n, "list_changed, once to %s", eras[i])
		}
		mu.Unlock()
		resyncs, uris := r.reg.ResyncStats()
		assert.EqualValues(t, 1, resyncs)
		assert.EqualValues(t, 2, uris)
		var seen []resource.Event
		obs.mu.Lock()
		for _, e := range obs.events {
			if e.Kind == resource.EventResync {
				seen = append(seen, e)
			}
		}
		obs.mu.Unlock()
		assert.Equal(t, []resource.Event{{Kind: resource.EventResync, Count: 2, Reason: "a test's gap"}}, seen)
		// More resyncs within a second of the last (a bus that finds a
		// gap in each other replica's messages after its own outage) cost
		// one more notification per URI, when the second ends, not one
		// each; and they are one episode in the log.
		bus.resync("gap in replica b")
		bus.resync("gap in replica c")
		settle()
		for i, w := range watchers {
			assert.Empty(t, w.taken(), "watcher %s: put off", eras[i])
		}
		time.Sleep(time.Second)
		settle()
		for i, w := range watchers {
			assert.Equal(t, []string{"db://users/7", "log://prod/api"}, w.taken(), "watcher %s: the trailing resync", eras[i])
		}
		resyncs, _ = r.reg.ResyncStats()
		assert.EqualValues(t, 2, resyncs)
		assert.Equal(t, 1, strings.Count(logs.String(), "may have missed changes"), logs.String())
		// After a quiet spell, a resync is made at once, and logged as a
		// new episode.
		time.Sleep(burst.DefaultQuiet)
		bus.resync("a new outage")
		settle()
		assert.Len(t, watchers[0].taken(), 2)
		assert.Equal(t, 2, strings.Count(logs.String(), "may have missed changes"), logs.String())
		assert.Contains(t, logs.String(), "more_resyncs_in_previous_episode=1")
	})
}
