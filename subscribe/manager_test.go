package subscribe_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/subscribe"
)

// timeout bounds every wait for something that must happen; a test that
// hits it has hung (a deadlock, a lost delivery).
const timeout = 10 * time.Second

// barrierURI is watched by barrierSession in the managers of the delivery
// tests; see harness.barrier.
const (
	barrierURI     = "test://barrier"
	barrierSession = -1
)

// A harness is a Manager whose deliveries are counted.
type harness struct {
	t *testing.T
	m *subscribe.Manager[int]

	mu        sync.Mutex
	delivered map[string]int
	barrier   chan struct{}
}

// newHarness returns a harness for a Manager with opts (of which Deliver
// is the harness's), whose barrierSession watches barrierURI.
func newHarness(t *testing.T, opts subscribe.Options) *harness {
	h := &harness{t: t, delivered: make(map[string]int), barrier: make(chan struct{}, 1)}
	opts.Deliver = h.deliver
	h.m = subscribe.New[int](&opts)
	t.Cleanup(h.m.Close)
	if err := h.m.Subscribe(barrierSession, barrierURI); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) deliver(uri string) {
	if uri == barrierURI {
		h.barrier <- struct{}{}
		return
	}
	h.mu.Lock()
	h.delivered[uri]++
	h.mu.Unlock()
}

// sync waits until every change reported before it has been delivered (or
// dropped): it changes barrierURI and waits for its delivery twice. The
// delivery that carries the first one took every change pending with it;
// the second comes in a later delivery, which starts once that one is
// over.
func (h *harness) sync() {
	h.t.Helper()
	for range 2 {
		h.m.Changed(barrierURI)
		select {
		case <-h.barrier:
		case <-time.After(timeout):
			h.t.Fatal("barrier not delivered")
		}
	}
}

// take returns the deliveries counted so far (barriers aside) and resets
// the count.
func (h *harness) take() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	got := h.delivered
	h.delivered = make(map[string]int)
	return got
}

func (h *harness) subscribe(s int, uris ...string) {
	h.t.Helper()
	for _, u := range uris {
		if err := h.m.Subscribe(s, u); err != nil {
			h.t.Fatalf("Subscribe(%d, %q): %v", s, u, err)
		}
	}
}

func wantStats[S comparable](t *testing.T, m *subscribe.Manager[S], subs, sessions, uris int) {
	t.Helper()
	gs, gn, gu := m.Stats()
	if gs != subs || gn != sessions || gu != uris {
		t.Errorf("Stats() = %d subscriptions, %d sessions, %d URIs; want %d, %d, %d", gs, gn, gu, subs, sessions, uris)
	}
}

func wantWatched[S comparable](t *testing.T, m *subscribe.Manager[S], uri string, want bool) {
	t.Helper()
	if got := m.Watched(uri); got != want {
		t.Errorf("Watched(%q) = %v, want %v", uri, got, want)
	}
}

// within runs f on its own goroutine and fails the test if f has not
// returned within timeout: f would have blocked (or deadlocked).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatalf("%s did not return: blocked", what)
	}
}

func TestBookkeeping(t *testing.T) {
	m := subscribe.New[string](nil)
	defer m.Close()
	wantStats(t, m, 0, 0, 0)
	for _, sub := range [][2]string{{"alice", "a"}, {"alice", "b"}, {"bob", "a"}} {
		if err := m.Subscribe(sub[0], sub[1]); err != nil {
			t.Fatalf("Subscribe(%q, %q): %v", sub[0], sub[1], err)
		}
	}
	wantStats(t, m, 3, 2, 2)
	wantWatched(t, m, "a", true)
	wantWatched(t, m, "b", true)
	wantWatched(t, m, "c", false)

	// Subscribing again changes nothing.
	if err := m.Subscribe("alice", "a"); err != nil {
		t.Errorf("second Subscribe: %v", err)
	}
	wantStats(t, m, 3, 2, 2)

	// Unsubscribing what is not subscribed is fine and changes nothing.
	m.Unsubscribe("alice", "c")
	m.Unsubscribe("carol", "a")
	m.Unsubscribe("bob", "b")
	wantStats(t, m, 3, 2, 2)

	m.Unsubscribe("alice", "a")
	wantStats(t, m, 2, 2, 2)
	wantWatched(t, m, "a", true) // bob still watches it
	m.Unsubscribe("alice", "a")  // again
	wantStats(t, m, 2, 2, 2)

	m.Drop("bob")
	wantStats(t, m, 1, 1, 1)
	wantWatched(t, m, "a", false)
	m.Drop("bob") // again
	m.Drop("nobody")
	wantStats(t, m, 1, 1, 1)

	m.Unsubscribe("alice", "b") // alice's last: alice is forgotten
	wantStats(t, m, 0, 0, 0)
	wantWatched(t, m, "b", false)

	if err := m.Subscribe("alice", ""); err == nil {
		t.Error("Subscribe with an empty URI: no error")
	}
	wantStats(t, m, 0, 0, 0)
}

// TestBigSets subscribes a session to many URIs and many sessions to one,
// beyond the size up to which the Manager keeps a set as a slice, and
// takes them apart again.
func TestBigSets(t *testing.T) {
	const n = 100
	m := subscribe.New[int](nil)
	defer m.Close()
	uri := func(i int) string { return fmt.Sprintf("test://item/%d", i) }
	for i := range n {
		if err := m.Subscribe(0, uri(i)); err != nil { // session 0 watches every URI
			t.Fatal(err)
		}
		if err := m.Subscribe(i+1, uri(0)); err != nil { // everyone watches URI 0
			t.Fatal(err)
		}
	}
	wantStats(t, m, 2*n, n+1, n)
	for i := range n {
		if err := m.Subscribe(0, uri(i)); err != nil {
			t.Fatal(err)
		}
	}
	wantStats(t, m, 2*n, n+1, n)
	for i := 1; i < n; i += 2 {
		m.Unsubscribe(0, uri(i))
		m.Unsubscribe(i+1, uri(0))
	}
	wantStats(t, m, n, n/2+1, n/2)
	for i := range n {
		wantWatched(t, m, uri(i), i%2 == 0)
	}
	m.Drop(0)
	wantStats(t, m, n/2, n/2, 1)
	for i := 0; i < n; i += 2 {
		m.Drop(i + 1)
	}
	wantStats(t, m, 0, 0, 0)
	wantWatched(t, m, uri(0), false)
}

// TestAgainstModel runs random operations on a Manager with a small limit
// and checks it against a plain model after each: what is watched, the
// counts, the limit's refusals, and that the hooks follow each URI's first
// watcher and last.
func TestAgainstModel(t *testing.T) {
	const (
		sessions = 20
		uris     = 40
		limit    = 25
	)
	var hooks []string
	m := subscribe.New[int](&subscribe.Options{
		MaxPerSession: limit,
		OnWatch:       func(u string) { hooks = append(hooks, "+"+u) },
		OnUnwatch:     func(u string) { hooks = append(hooks, "-"+u) },
	})
	defer m.Close()
	model := make(map[int]map[string]bool)
	watchers := make(map[string]int)
	names := make([]string, uris)
	for i := range names {
		names[i] = fmt.Sprintf("test://%d", i)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for step := range 10_000 {
		s, u := rng.IntN(sessions), names[rng.IntN(uris)]
		hooks = hooks[:0]
		var want []string
		switch op := rng.IntN(10); {
		case op < 6:
			err := m.Subscribe(s, u)
			switch {
			case model[s][u]:
				if err != nil {
					t.Fatalf("step %d: Subscribe again: %v", step, err)
				}
			case len(model[s]) >= limit:
				if !errors.Is(err, subscribe.ErrLimit) {
					t.Fatalf("step %d: Subscribe beyond the limit: %v", step, err)
				}
			default:
				if err != nil {
					t.Fatalf("step %d: Subscribe: %v", step, err)
				}
				if watchers[u]++; watchers[u] == 1 {
					want = append(want, "+"+u)
				}
				if model[s] == nil {
					model[s] = make(map[string]bool)
				}
				model[s][u] = true
			}
		case op < 9:
			m.Unsubscribe(s, u)
			if model[s][u] {
				delete(model[s], u)
				if len(model[s]) == 0 {
					delete(model, s)
				}
				if watchers[u]--; watchers[u] == 0 {
					want = append(want, "-"+u)
				}
			}
		default:
			m.Drop(s)
			for u := range model[s] {
				if watchers[u]--; watchers[u] == 0 {
					want = append(want, "-"+u)
				}
			}
			delete(model, s)
		}
		slices.Sort(hooks)
		slices.Sort(want)
		if !slices.Equal(hooks, want) {
			t.Fatalf("step %d: hooks %q, want %q", step, hooks, want)
		}
		total, watched := 0, 0
		for _, set := range model {
			total += len(set)
		}
		for _, u := range names {
			if watchers[u] > 0 {
				watched++
			}
			if m.Watched(u) != (watchers[u] > 0) {
				t.Fatalf("step %d: Watched(%q) = %v", step, u, m.Watched(u))
			}
		}
		if gs, gn, gu := m.Stats(); gs != total || gn != len(model) || gu != watched {
			t.Fatalf("step %d: Stats() = %d, %d, %d; want %d, %d, %d", step, gs, gn, gu, total, len(model), watched)
		}
	}
}

func TestLimit(t *testing.T) {
	var watched []string
	m := subscribe.New[string](&subscribe.Options{MaxPerSession: 3, OnWatch: func(u string) { watched = append(watched, u) }})
	defer m.Close()
	for _, u := range []string{"a", "b", "c"} {
		if err := m.Subscribe("alice", u); err != nil {
			t.Fatalf("Subscribe(%q): %v", u, err)
		}
	}
	err := m.Subscribe("alice", "d")
	if !errors.Is(err, subscribe.ErrLimit) {
		t.Fatalf("fourth Subscribe: %v, want ErrLimit", err)
	}
	wantStats(t, m, 3, 1, 3)
	wantWatched(t, m, "d", false)
	if !slices.Equal(watched, []string{"a", "b", "c"}) {
		t.Errorf("OnWatch calls %q, want a, b, c (none for the refused one)", watched)
	}
	// At the limit, subscribing again to a URI held is still fine, and
	// other sessions have their own limit.
	if err := m.Subscribe("alice", "a"); err != nil {
		t.Errorf("Subscribe again at the limit: %v", err)
	}
	if err := m.Subscribe("bob", "d"); err != nil {
		t.Errorf("another session: %v", err)
	}
	m.Unsubscribe("alice", "a")
	if err := m.Subscribe("alice", "d"); err != nil {
		t.Errorf("Subscribe after making room: %v", err)
	}
	wantStats(t, m, 4, 2, 3)
}

func TestLimitDefaultAndNone(t *testing.T) {
	for _, tc := range []struct {
		max  int
		want int // subscriptions accepted of 2,000; 0 for all
	}{
		{0, subscribe.DefaultMaxPerSession},
		{-1, 0},
	} {
		m := subscribe.New[int](&subscribe.Options{MaxPerSession: tc.max})
		n := 0
		for i := range 2_000 {
			err := m.Subscribe(1, fmt.Sprintf("test://%d", i))
			if err == nil {
				n++
			} else if !errors.Is(err, subscribe.ErrLimit) {
				t.Fatalf("MaxPerSession %d: %v", tc.max, err)
			}
		}
		want := tc.want
		if want == 0 {
			want = 2_000
		}
		if n != want {
			t.Errorf("MaxPerSession %d: %d subscriptions accepted, want %d", tc.max, n, want)
		}
		wantStats(t, m, want, 1, want)
		m.Close()
	}
}

func TestHooksFirstAndLast(t *testing.T) {
	var calls []string
	m := subscribe.New[int](&subscribe.Options{
		OnWatch:   func(u string) { calls = append(calls, "watch "+u) },
		OnUnwatch: func(u string) { calls = append(calls, "unwatch "+u) },
	})
	defer m.Close()
	want := func(w ...string) {
		t.Helper()
		slices.Sort(calls)
		if !slices.Equal(calls, w) {
			t.Errorf("hook calls %q, want %q", calls, w)
		}
		calls = nil
	}
	for s := range 3 {
		if err := m.Subscribe(s, "a"); err != nil {
			t.Fatal(err)
		}
	}
	want("watch a")
	_ = m.Subscribe(0, "a")
	m.Unsubscribe(0, "a")
	m.Drop(1)
	want()
	m.Unsubscribe(2, "a")
	want("unwatch a")
	m.Unsubscribe(2, "a")
	want()

	// Drop calls OnUnwatch for each URI the session was the last to watch.
	for _, u := range []string{"a", "b", "c"} {
		_ = m.Subscribe(7, u)
	}
	_ = m.Subscribe(8, "b")
	want("watch a", "watch b", "watch c")
	m.Drop(7)
	want("unwatch a", "unwatch c")
	m.Drop(8)
	want("unwatch b")
	m.Drop(8)
	want()

	// A URI watched again is announced again.
	_ = m.Subscribe(9, "a")
	want("watch a")
}

// TestHooksCallBack has hooks call back into the Manager: with a lock held
// while they run, they would deadlock.
func TestHooksCallBack(t *testing.T) {
	var m *subscribe.Manager[int]
	var calls []string
	m = subscribe.New[int](&subscribe.Options{
		OnWatch: func(u string) {
			calls = append(calls, "watch "+u)
			if !m.Watched(u) {
				t.Errorf("OnWatch(%q): not Watched", u)
			}
			m.Stats()
			m.Changed(u)
			if u == "a" {
				// Watch something else in turn: a hook within a hook.
				if err := m.Subscribe(100, "a/derived"); err != nil {
					t.Error(err)
				}
			}
		},
		OnUnwatch: func(u string) {
			calls = append(calls, "unwatch "+u)
			if m.Watched(u) {
				t.Errorf("OnUnwatch(%q): still Watched", u)
			}
			if u == "a" {
				m.Drop(100)
			}
		},
	})
	defer m.Close()
	within(t, "Subscribe with a hook calling back", func() {
		if err := m.Subscribe(1, "a"); err != nil {
			t.Error(err)
		}
	})
	within(t, "Drop with a hook calling back", func() { m.Drop(1) })
	want := []string{"watch a", "watch a/derived", "unwatch a", "unwatch a/derived"}
	if !slices.Equal(calls, want) {
		t.Errorf("hook calls %q, want %q", calls, want)
	}
	wantStats(t, m, 0, 0, 0)
}

// TestHooksOrdered subscribes and unsubscribes a few URIs from many
// goroutines at once: the hooks must alternate for each URI (watch,
// unwatch, watch, ...), one call at a time, and agree with the end state.
func TestHooksOrdered(t *testing.T) {
	var (
		mu      sync.Mutex
		watched = make(map[string]bool)
		active  atomic.Int32
		bad     atomic.Value
	)
	hook := func(watch bool) func(string) {
		return func(u string) {
			if active.Add(1) != 1 {
				bad.Store("two hooks at once")
			}
			mu.Lock()
			if watched[u] == watch {
				bad.Store(fmt.Sprintf("hook(%q, watch=%v) twice in a row", u, watch))
			}
			watched[u] = watch
			mu.Unlock()
			active.Add(-1)
		}
	}
	m := subscribe.New[int](&subscribe.Options{OnWatch: hook(true), OnUnwatch: hook(false)})
	defer m.Close()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 0))
			for range 5_000 {
				u := fmt.Sprintf("test://%d", rng.IntN(3))
				switch rng.IntN(3) {
				case 0:
					_ = m.Subscribe(g, u)
				case 1:
					m.Unsubscribe(g, u)
				default:
					m.Drop(g)
				}
			}
		})
	}
	wg.Wait()
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
	for i := range 3 {
		u := fmt.Sprintf("test://%d", i)
		if m.Watched(u) != watched[u] {
			t.Errorf("Watched(%q) = %v, but the hooks say %v", u, m.Watched(u), watched[u])
		}
	}
}

// TestHookPanic: a hook that panics does not stop later hooks.
func TestHookPanic(t *testing.T) {
	var calls []string
	m := subscribe.New[int](&subscribe.Options{OnWatch: func(u string) {
		if u == "bad" {
			panic("bad hook")
		}
		calls = append(calls, u)
	}})
	defer m.Close()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the hook's panic did not reach Subscribe's caller")
			}
		}()
		_ = m.Subscribe(1, "bad")
	}()
	within(t, "Subscribe after a hook panicked", func() { _ = m.Subscribe(1, "good") })
	if !slices.Equal(calls, []string{"good"}) {
		t.Errorf("hooks after a panic: %q", calls)
	}
}

func TestChangedUnwatched(t *testing.T) {
	h := newHarness(t, subscribe.Options{Window: time.Millisecond})
	h.subscribe(1, "test://a")
	h.m.Changed("test://nobody")
	h.m.ChangedPrefix("test://nobody")
	h.m.Changed("test://a")
	h.m.Unsubscribe(1, "test://a") // before the delivery: not delivered
	h.sync()
	if got := h.take(); len(got) != 0 {
		t.Errorf("delivered %v, want nothing", got)
	}
}

func TestChangedCoalesces(t *testing.T) {
	h := newHarness(t, subscribe.Options{Window: 50 * time.Millisecond})
	h.subscribe(1, "test://hot", "test://warm")
	h.subscribe(2, "test://hot")
	for range 1_000 {
		h.m.Changed("test://hot")
	}
	h.sync()
	got := h.take()
	if n := got["test://hot"]; n < 1 || n > 2 {
		t.Errorf("1,000 changes within the window: %d deliveries, want 1 or 2", n)
	}
	if len(got) != 1 {
		t.Errorf("delivered %v, want test://hot alone", got)
	}

	// Many URIs changed many times each within a window.
	uris := make([]string, 100)
	for i := range uris {
		uris[i] = fmt.Sprintf("test://many/%d", i)
		h.subscribe(3, uris[i])
	}
	for range 100 {
		for _, u := range uris {
			h.m.Changed(u)
		}
	}
	h.sync()
	got = h.take()
	for _, u := range uris {
		if n := got[u]; n < 1 || n > 2 {
			t.Errorf("%s: %d deliveries, want 1 or 2", u, n)
		}
	}
	if len(got) != len(uris) {
		t.Errorf("delivered %d URIs, want %d", len(got), len(uris))
	}

	// A later change is delivered again.
	h.m.Changed("test://hot")
	h.sync()
	if got := h.take(); got["test://hot"] != 1 || len(got) != 1 {
		t.Errorf("a later change: delivered %v", got)
	}
}

func TestChangedPrefixAndWhere(t *testing.T) {
	h := newHarness(t, subscribe.Options{Window: time.Millisecond})
	h.subscribe(1, "log://prod/a", "log://prod/b/c", "log://dev/a", "log://prod")
	h.subscribe(2, "log://prod/a", "log://production")

	h.m.ChangedPrefix("log://prod/")
	h.sync()
	want := map[string]int{"log://prod/a": 1, "log://prod/b/c": 1}
	if got := h.take(); !mapsEqual(got, want) {
		t.Errorf("ChangedPrefix: delivered %v, want %v", got, want)
	}

	h.m.ChangedWhere(func(u string) bool { return strings.HasSuffix(u, "/a") })
	h.sync()
	want = map[string]int{"log://prod/a": 1, "log://dev/a": 1}
	if got := h.take(); !mapsEqual(got, want) {
		t.Errorf("ChangedWhere: delivered %v, want %v", got, want)
	}

	h.m.ChangedPrefix("nothing://")
	h.m.ChangedWhere(func(string) bool { return false })
	h.sync()
	if got := h.take(); len(got) != 0 {
		t.Errorf("no match: delivered %v", got)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestChangedDoesNotWaitForDeliver blocks Deliver and checks that the
// Manager's methods still return at once; the change made meanwhile is
// delivered once Deliver is free.
func TestChangedDoesNotWaitForDeliver(t *testing.T) {
	entered := make(chan string, 10)
	release := make(chan struct{})
	m := subscribe.New[int](&subscribe.Options{
		Window: time.Millisecond,
		Deliver: func(u string) {
			entered <- u
			<-release
		},
	})
	defer m.Close()
	if err := m.Subscribe(1, "test://slow"); err != nil {
		t.Fatal(err)
	}
	m.Changed("test://slow")
	select {
	case <-entered: // Deliver is blocked
	case <-time.After(timeout):
		t.Fatal("no delivery")
	}
	within(t, "Changed while Deliver blocks", func() {
		for range 100 {
			m.Changed("test://slow")
		}
		m.ChangedPrefix("test://")
		m.ChangedWhere(func(string) bool { return true })
		_ = m.Subscribe(2, "test://other")
		m.Unsubscribe(2, "test://other")
		m.Stats()
	})
	close(release)
	select {
	case u := <-entered:
		if u != "test://slow" {
			t.Errorf("delivered %q after the blocked Deliver, want test://slow", u)
		}
	case <-time.After(timeout):
		t.Fatal("the change made while Deliver blocked was not delivered")
	}
}

// TestDeliverCallsBack has Deliver call back into the Manager.
func TestDeliverCallsBack(t *testing.T) {
	var m *subscribe.Manager[int]
	done := make(chan struct{})
	m = subscribe.New[int](&subscribe.Options{
		Window: time.Millisecond,
		Deliver: func(u string) {
			m.Stats()
			m.Changed(u)
			m.Unsubscribe(1, u)
			close(done)
		},
	})
	defer m.Close()
	if err := m.Subscribe(1, "test://a"); err != nil {
		t.Fatal(err)
	}
	m.Changed("test://a")
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatal("Deliver calling back into the Manager did not return")
	}
	wantStats(t, m, 0, 0, 0)
}

func TestClose(t *testing.T) {
	t.Run("pending", func(t *testing.T) {
		// Block a delivery, queue more changes behind it, and Close: none
		// of them is delivered, not even those of the delivery under way.
		entered := make(chan string, 10)
		release := make(chan struct{})
		var mu sync.Mutex
		var delivered []string
		m := subscribe.New[int](&subscribe.Options{
			Window: 20 * time.Millisecond,
			Deliver: func(u string) {
				mu.Lock()
				delivered = append(delivered, u)
				mu.Unlock()
				if u == "test://a" {
					entered <- u
					<-release
				}
			},
		})
		for _, u := range []string{"test://a", "test://b", "test://c"} {
			if err := m.Subscribe(1, u); err != nil {
				t.Fatal(err)
			}
		}
		m.Changed("test://a")
		m.Changed("test://c") // with a, or pending when Close is called
		select {
		case <-entered:
		case <-time.After(timeout):
			t.Fatal("no delivery")
		}
		m.Changed("test://b") // pending
		m.Close()
		close(release)
		m.Changed("test://b")
		time.Sleep(100 * time.Millisecond) // several windows
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(delivered, []string{"test://a"}) {
			t.Errorf("delivered %q, want test://a (under way when closed) alone", delivered)
		}
	})
	t.Run("after", func(t *testing.T) {
		var n atomic.Int32
		m := subscribe.New[int](&subscribe.Options{Window: time.Millisecond, Deliver: func(string) { n.Add(1) }})
		if err := m.Subscribe(1, "test://a"); err != nil {
			t.Fatal(err)
		}
		m.Close()
		m.Changed("test://a")
		m.ChangedPrefix("test://")
		m.Close() // twice is fine
		time.Sleep(50 * time.Millisecond)
		if n.Load() != 0 {
			t.Errorf("%d deliveries after Close", n.Load())
		}
		wantStats(t, m, 1, 1, 1) // subscriptions are kept
		m.Drop(1)
		wantStats(t, m, 0, 0, 0)
	})
}

// TestNilDeliver: without Deliver, changes are gathered and dropped.
func TestNilDeliver(t *testing.T) {
	m := subscribe.New[int](nil)
	defer m.Close()
	if err := m.Subscribe(1, "test://a"); err != nil {
		t.Fatal(err)
	}
	m.Changed("test://a")
	m.ChangedPrefix("test://")
}

// TestSessionsLeaveNothing: after 10,000 sessions subscribe and end, the
// Manager holds nothing, and every URI watched was unwatched.
func TestSessionsLeaveNothing(t *testing.T) {
	const sessions = 10_000
	var watches, unwatches atomic.Int64
	h := newHarness(t, subscribe.Options{
		Window:    time.Millisecond,
		OnWatch:   func(string) { watches.Add(1) },
		OnUnwatch: func(string) { unwatches.Add(1) },
	})
	var wg sync.WaitGroup
	const workers = 8
	for w := range workers {
		wg.Go(func() {
			for s := w; s < sessions; s += workers {
				uris := []string{
					"test://shared",
					fmt.Sprintf("test://group/%d", s%100),
					fmt.Sprintf("test://own/%d", s),
				}
				for i := range 20 { // beyond the small-set size
					uris = append(uris, fmt.Sprintf("test://own/%d/%d", s, i))
				}
				for _, u := range uris {
					if err := h.m.Subscribe(s, u); err != nil {
						t.Error(err)
						return
					}
				}
				h.m.Changed(uris[s%len(uris)])
				if s%3 == 0 {
					h.m.Unsubscribe(s, uris[1])
				}
				h.m.Drop(s)
			}
		})
	}
	wg.Wait()
	h.m.Drop(barrierSession)
	wantStats(t, h.m, 0, 0, 0)
	if watches.Load() == 0 || watches.Load() != unwatches.Load() {
		t.Errorf("%d OnWatch calls, %d OnUnwatch calls; want as many, more than zero", watches.Load(), unwatches.Load())
	}
}

// TestConcurrent mixes every operation from many goroutines (run it with
// -race), then ends every session: nothing is left.
func TestConcurrent(t *testing.T) {
	var watches, unwatches atomic.Int64
	h := newHarness(t, subscribe.Options{
		Window:        time.Millisecond,
		MaxPerSession: 5,
		OnWatch:       func(string) { watches.Add(1) },
		OnUnwatch:     func(string) { unwatches.Add(1) },
	})
	const goroutines, sessions = 16, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 2_000 {
				s, u := rng.IntN(sessions), fmt.Sprintf("test://%d/%d", rng.IntN(4), rng.IntN(10))
				switch rng.IntN(8) {
				case 0, 1, 2:
					if err := h.m.Subscribe(s, u); err != nil && !errors.Is(err, subscribe.ErrLimit) {
						t.Error(err)
					}
				case 3:
					h.m.Unsubscribe(s, u)
				case 4:
					h.m.Drop(s)
				case 5:
					h.m.Changed(u)
				case 6:
					h.m.ChangedPrefix(u[:len("test://0/")])
				default:
					h.m.Watched(u)
					h.m.Stats()
				}
			}
		})
	}
	wg.Wait()
	h.sync()
	for s := range sessions {
		h.m.Drop(s)
	}
	h.m.Drop(barrierSession)
	wantStats(t, h.m, 0, 0, 0)
	if watches.Load() != unwatches.Load() {
		t.Errorf("%d OnWatch calls, %d OnUnwatch calls; want as many", watches.Load(), unwatches.Load())
	}
}
