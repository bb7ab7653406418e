package subscribe_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/subscribe"
)

// The tests of timing run in testing/synctest bubbles: time is fake, so a
// window passes at once, and synctest.Wait lets every goroutine of the
// bubble (the Manager's included) finish what it can, so every count is
// exact. A test that sleeps for a window and waits (see wait) knows that
// what was due has been delivered, and nothing else.
//
// The tests that are not about time run outside bubbles. Every test runs
// in parallel with the others.

// window is the Window of the timing tests. It is not a whole number of
// milliseconds, so a window never ends at the very instant a test acts
// on whole milliseconds (as TestDeliveryAgainstModel does).
const window = 10*time.Millisecond + 500*time.Microsecond

// newManager returns a Manager with opts, failing the test if New fails,
// and closes it when the test ends.
func newManager[S comparable](t testing.TB, opts *subscribe.Options) *subscribe.Manager[S] {
	t.Helper()
	m, err := subscribe.New[S](opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

// A delivery is a Deliver call: the URI, and how long after the start of
// the test it was made (in a bubble, exactly).
type delivery struct {
	at  time.Duration
	uri string
}

func (d delivery) String() string { return fmt.Sprintf("%s@%v", d.uri, d.at) }

// A recorder records Deliver calls.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	got   []delivery
}

func newRecorder() *recorder { return &recorder{start: time.Now()} }

func (r *recorder) deliver(uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, delivery{time.Since(r.start), uri})
}

// take returns the deliveries recorded since the last take.
func (r *recorder) take() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

// want fails the test unless the deliveries since the last take are want,
// in order, at their times.
func (r *recorder) want(t *testing.T, what string, want ...delivery) {
	t.Helper()
	if got := r.take(); !slices.Equal(got, want) {
		t.Errorf("%s: delivered %v, want %v", what, got, want)
	}
}

// wait sleeps (on the bubble's fake clock) for d, then waits until every
// other goroutine of the bubble is idle: whatever was due by then has
// happened.
func wait(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// at is a delivery of uri at time d.
func at(d time.Duration, uri string) delivery { return delivery{d, uri} }

func subscribeAll[S comparable](t *testing.T, m *subscribe.Manager[S], s S, uris ...string) {
	t.Helper()
	for _, u := range uris {
		if err := m.Subscribe(s, u); err != nil {
			t.Fatalf("Subscribe(%v, %q): %v", s, u, err)
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
// returned within 10 seconds: f would have blocked (or deadlocked). It is
// for tests outside bubbles; in one, a goroutine blocked on a mutex would
// stop the fake clock.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("%s did not return: blocked", what)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		opts    *subscribe.Options
		wantErr string
	}{
		{"nil", nil, ""},
		{"zero", &subscribe.Options{}, ""},
		{"NoLimit", &subscribe.Options{MaxPerSession: subscribe.NoLimit, Window: time.Nanosecond}, ""},
		{"negative MaxPerSession", &subscribe.Options{MaxPerSession: -1},
			"subscribe: negative MaxPerSession -1 (NoLimit sets no cap)"},
		{"negative Window", &subscribe.Options{Window: -time.Second},
			"subscribe: negative Window -1s"},
		{"both negative", &subscribe.Options{MaxPerSession: -5, Window: -time.Nanosecond},
			"subscribe: negative MaxPerSession -5 (NoLimit sets no cap)\nsubscribe: negative Window -1ns"},
	} {
		m, err := subscribe.New[string](tc.opts)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: New: %v", tc.name, err)
		case tc.wantErr == "" && m == nil:
			t.Errorf("%s: New returned a nil Manager and no error", tc.name)
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("%s: New: error %v, want %q", tc.name, err, tc.wantErr)
		case tc.wantErr != "" && m != nil:
			t.Errorf("%s: New returned a Manager with its error", tc.name)
		}
		if m != nil {
			m.Close()
		}
	}
}

func TestBookkeeping(t *testing.T) {
	t.Parallel()
	m := newManager[string](t, nil)
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
	wantWatched(t, m, "", false)

	// Subscribing again changes nothing.
	if err := m.Subscribe("alice", "a"); err != nil {
		t.Errorf("second Subscribe: %v", err)
	}
	wantStats(t, m, 3, 2, 2)

	// Unsubscribing what is not subscribed is fine and changes nothing.
	m.Unsubscribe("alice", "c")
	m.Unsubscribe("carol", "a")
	m.Unsubscribe("bob", "b")
	m.Unsubscribe("bob", "")
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

	// The zero session is a session like any other.
	subscribeAll(t, m, "", "a")
	wantStats(t, m, 1, 1, 1)
	m.Drop("")
	wantStats(t, m, 0, 0, 0)
}

// TestBigSets subscribes a session to many URIs and many sessions to one,
// beyond the size up to which the Manager keeps a set as a slice, and
// takes them apart again.
func TestBigSets(t *testing.T) {
	t.Parallel()
	const n = 100
	m := newManager[int](t, nil)
	uri := func(i int) string { return fmt.Sprintf("test://item/%d", i) }
	for i := range n {
		subscribeAll(t, m, 0, uri(i))   // session 0 watches every URI
		subscribeAll(t, m, i+1, uri(0)) // everyone watches URI 0
	}
	wantStats(t, m, 2*n, n+1, n)
	for i := range n {
		subscribeAll(t, m, 0, uri(i))
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
	t.Parallel()
	const (
		sessions = 20
		uris     = 40
		limit    = 25
	)
	var hooks []string
	m := newManager[int](t, &subscribe.Options{
		MaxPerSession: limit,
		OnWatch:       func(u string) { hooks = append(hooks, "+"+u) },
		OnUnwatch:     func(u string) { hooks = append(hooks, "-"+u) },
	})
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
	t.Parallel()
	var watched []string
	m := newManager[string](t, &subscribe.Options{MaxPerSession: 3, OnWatch: func(u string) { watched = append(watched, u) }})
	subscribeAll(t, m, "alice", "a", "b", "c")
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

// TestLimitDefaultAndNoLimit: zero means DefaultMaxPerSession, NoLimit
// means no cap, and one means one.
func TestLimitDefaultAndNoLimit(t *testing.T) {
	t.Parallel()
	const tries = 2_000
	uris := make([]string, tries)
	for i := range uris {
		uris[i] = "test://" + strconv.Itoa(i)
	}
	for _, tc := range []struct{ max, want int }{
		{0, subscribe.DefaultMaxPerSession},
		{subscribe.NoLimit, tries},
		{1, 1},
	} {
		m := newManager[int](t, &subscribe.Options{MaxPerSession: tc.max})
		n := 0
		for _, u := range uris {
			err := m.Subscribe(1, u)
			if err == nil {
				n++
			} else if !errors.Is(err, subscribe.ErrLimit) {
				t.Fatalf("MaxPerSession %d: %v", tc.max, err)
			}
		}
		if n != tc.want {
			t.Errorf("MaxPerSession %d: %d subscriptions accepted, want %d", tc.max, n, tc.want)
		}
		wantStats(t, m, tc.want, 1, tc.want)
	}
}

func TestHooksFirstAndLast(t *testing.T) {
	t.Parallel()
	var calls []string
	m := newManager[int](t, &subscribe.Options{
		OnWatch:   func(u string) { calls = append(calls, "watch "+u) },
		OnUnwatch: func(u string) { calls = append(calls, "unwatch "+u) },
	})
	want := func(w ...string) {
		t.Helper()
		slices.Sort(calls)
		if !slices.Equal(calls, w) {
			t.Errorf("hook calls %q, want %q", calls, w)
		}
		calls = nil
	}
	for s := range 3 {
		subscribeAll(t, m, s, "a")
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
	subscribeAll(t, m, 7, "a", "b", "c")
	subscribeAll(t, m, 8, "b")
	want("watch a", "watch b", "watch c")
	m.Drop(7)
	want("unwatch a", "unwatch c")
	m.Drop(8)
	want("unwatch b")
	m.Drop(8)
	want()

	// A URI watched again is announced again.
	subscribeAll(t, m, 9, "a")
	want("watch a")
}

// TestHooksCallBack has hooks call back into the Manager: with a lock held
// while they run, they would deadlock.
func TestHooksCallBack(t *testing.T) {
	t.Parallel()
	var m *subscribe.Manager[int]
	var calls []string
	m = newManager[int](t, &subscribe.Options{
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
	t.Parallel()
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
	m := newManager[int](t, &subscribe.Options{OnWatch: hook(true), OnUnwatch: hook(false)})
	uris := []string{"test://0", "test://1", "test://2"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 0))
			for range 5_000 {
				u := uris[rng.IntN(len(uris))]
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
	for _, u := range uris {
		if m.Watched(u) != watched[u] {
			t.Errorf("Watched(%q) = %v, but the hooks say %v", u, m.Watched(u), watched[u])
		}
	}
}

// TestHookPanic: a hook that panics does not stop later hooks.
func TestHookPanic(t *testing.T) {
	t.Parallel()
	var calls []string
	m := newManager[int](t, &subscribe.Options{OnWatch: func(u string) {
		if u == "bad" {
			panic("bad hook")
		}
		calls = append(calls, u)
	}})
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

// TestWindow checks when deliveries are made: a change to a URI after a
// quiet spell at once; its changes within the window that opens, once,
// when the window ends, which opens the next; a window with no change ends
// the spell. Each URI has its own window.
func TestWindow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		m := newManager[int](t, &subscribe.Options{Window: window, Deliver: r.deliver})
		subscribeAll(t, m, 1, "test://a", "test://b")

		m.Changed("test://a")
		synctest.Wait()
		r.want(t, "a lone change", at(0, "test://a"))
		wait(window)
		r.want(t, "a window with no change")

		// A burst over one window, to two URIs: each one's first change
		// at once; the rest once each, when its own window ends.
		start := 20 * time.Millisecond
		wait(start - window)
		m.Changed("test://b")
		wait(time.Millisecond)
		m.Changed("test://a")
		wait(window/2 - time.Millisecond)
		m.Changed("test://b")
		m.Changed("test://a")
		wait(window - window/2 - time.Nanosecond)
		m.Changed("test://b") // the last instant of b's window
		wait(time.Nanosecond)
		r.want(t, "a burst over b's window", at(start, "test://b"), at(start+time.Millisecond, "test://a"), at(start+window, "test://b"))
		wait(time.Millisecond)
		r.want(t, "the end of a's window", at(start+time.Millisecond+window, "test://a"))
		wait(window)
		r.want(t, "the next windows, with no change")

		// Changes in consecutive windows: one delivery a window, then a
		// quiet window, then at once again.
		start = 60 * time.Millisecond
		wait(start - (20*time.Millisecond + time.Millisecond + 2*window))
		m.Changed("test://a")
		wait(time.Millisecond)
		m.Changed("test://a")
		wait(window)
		m.Changed("test://a") // in the second window
		wait(2 * window)      // the third ends with no change
		m.Changed("test://a")
		synctest.Wait()
		r.want(t, "three windows", at(start, "test://a"), at(start+window, "test://a"),
			at(start+2*window, "test://a"), at(start+3*window+time.Millisecond, "test://a"))

		wait(100 * window)
		r.want(t, "nothing changed")
	})
}

// TestDefaultWindow: Window zero means DefaultWindow.
func TestDefaultWindow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		m := newManager[int](t, &subscribe.Options{Deliver: r.deliver})
		subscribeAll(t, m, 1, "test://a")
		m.Changed("test://a")
		wait(time.Millisecond)
		m.Changed("test://a")
		wait(subscribe.DefaultWindow - time.Millisecond - time.Nanosecond)
		r.want(t, "before DefaultWindow", at(0, "test://a"))
		wait(time.Nanosecond)
		r.want(t, "at DefaultWindow", at(subscribe.DefaultWindow, "test://a"))
	})
}

func TestChangedCoalesces(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		m := newManager[int](t, &subscribe.Options{Window: window, Deliver: r.deliver})
		subscribeAll(t, m, 1, "test://hot", "test://warm")
		subscribeAll(t, m, 2, "test://hot")
		m.Changed("test://hot")
		synctest.Wait() // delivered: the rest of the burst comes after
		for range 999 {
			m.Changed("test://hot")
		}
		wait(window)
		r.want(t, "1,000 changes to one URI within the window", at(0, "test://hot"), at(window, "test://hot"))

		// 100 URIs changed 100 times each within a window: each at once,
		// and once more when its window ends, in URI order.
		uris := make([]string, 100)
		for i := range uris {
			uris[i] = fmt.Sprintf("test://many/%03d", i)
			subscribeAll(t, m, 3, uris[i])
		}
		start := 30 * time.Millisecond
		wait(start - window)
		m.Changed(uris[0])
		synctest.Wait()
		for range 100 {
			for _, u := range uris {
				m.Changed(u)
			}
		}
		wait(window)
		var want []delivery
		for _, u := range uris {
			want = append(want, at(start, u))
		}
		for _, u := range uris {
			want = append(want, at(start+window, u))
		}
		r.want(t, "100 URIs changed 100 times each", want...)

		// A change after a quiet window is delivered at once again.
		start = 60 * time.Millisecond
		wait(start - (30*time.Millisecond + window))
		m.Changed("test://hot")
		synctest.Wait()
		r.want(t, "a later change", at(start, "test://hot"))
	})
}

// TestOnCoalesce: a change that costs no delivery of its own is counted,
// once for all the URI's watchers: a burst of n within one window costs
// n-1 deliveries fewer than changes, and the first of them is delivered
// at the window's end, not counted.
func TestOnCoalesce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		var mu sync.Mutex
		coalesced := map[string]int{}
		m := newManager[int](t, &subscribe.Options{Window: window, Deliver: r.deliver, OnCoalesce: func(uri string) {
			mu.Lock()
			coalesced[uri]++
			mu.Unlock()
		}})
		subscribeAll(t, m, 1, "test://hot", "test://cold")
		subscribeAll(t, m, 2, "test://hot")
		m.Changed("test://hot") // delivered at once
		synctest.Wait()
		for range 1000 {
			m.Changed("test://hot") // the first is delivered when the window ends
		}
		m.ChangedPrefix("test://") // hot: coalesced; cold: delivered at once
		m.Changed("test://unwatched")
		wait(window)
		r.want(t, "two deliveries of hot, one of cold",
			at(0, "test://hot"), at(0, "test://cold"), at(window, "test://hot"))
		mu.Lock()
		if want := (map[string]int{"test://hot": 1000}); !maps.Equal(coalesced, want) {
			t.Errorf("coalesced %v, want %v", coalesced, want)
		}
		mu.Unlock()
	})
}

// TestChangedUnwatched: only URIs watched both when they change and when
// their window ends are delivered.
func TestChangedUnwatched(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		m := newManager[int](t, &subscribe.Options{Window: window, Deliver: r.deliver})
		subscribeAll(t, m, 1, "test://a")
		m.Changed("test://nobody")
		m.ChangedPrefix("test://nobody")
		m.Changed("")
		wait(10 * window)
		r.want(t, "changes to URIs unwatched")
		m.Changed("test://a")
		synctest.Wait()
		m.Changed("test://a")
		m.Unsubscribe(1, "test://a") // before the window ends: not delivered
		wait(10 * window)
		r.want(t, "a URI unwatched before its window ends", at(10*window, "test://a"))

		m.Changed("test://b")
		subscribeAll(t, m, 1, "test://b") // after the change: nothing to deliver
		wait(10 * window)
		r.want(t, "a change before the subscription")

		// Still, the Manager delivers.
		m.Changed("test://b")
		synctest.Wait()
		r.want(t, "a watched URI", at(30*window, "test://b"))
	})
}

func TestChangedPrefixAndWhere(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		m := newManager[int](t, &subscribe.Options{Window: window, Deliver: r.deliver})
		subscribeAll(t, m, 1, "log://prod/a", "log://prod/b/c", "log://dev/a", "log://prod")
		subscribeAll(t, m, 2, "log://prod/a", "log://production")

		m.ChangedPrefix("log://prod/")
		wait(window)
		r.want(t, "ChangedPrefix", at(0, "log://prod/a"), at(0, "log://prod/b/c"))

		m.ChangedWhere(func(u string) bool { return strings.HasSuffix(u, "/a") })
		wait(window)
		r.want(t, "ChangedWhere", at(window, "log://dev/a"), at(window, "log://prod/a"))

		m.ChangedPrefix("nothing://")
		m.ChangedWhere(func(string) bool { return false })
		m.ChangedWhere(nil)
		wait(10 * window)
		r.want(t, "no match")

		m.ChangedPrefix("")
		wait(window)
		r.want(t, "the empty prefix", at(12*window, "log://dev/a"), at(12*window, "log://prod"),
			at(12*window, "log://prod/a"), at(12*window, "log://prod/b/c"), at(12*window, "log://production"))
	})
}

// TestDeliveryAgainstModel makes random subscriptions and changes at
// random (fake) times and checks every delivery, its URI and its exact
// time, against a model of windows. (Each change is let through before the
// next step, so that what a delivery at once takes does not depend on how
// goroutines are scheduled.)
func TestDeliveryAgainstModel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		m := newManager[int](t, &subscribe.Options{Window: window, Deliver: r.deliver})
		names := []string{"test://a/0", "test://a/1", "test://a/2", "test://b/0", "test://b/1", "test://b/2"}
		// The model.
		type modelWindow struct {
			end     time.Duration
			changed bool
		}
		var (
			subs     = make(map[int]map[string]bool)
			watchers = make(map[string]int)
			windows  = make(map[string]*modelWindow) // open, by URI
			lone     []string                        // changed outside a window by the step
			want     []delivery
		)
		deliver := func(when time.Duration, uris []string) {
			slices.Sort(uris)
			for _, u := range uris {
				if watchers[u] > 0 {
					want = append(want, at(when, u))
				}
			}
		}
		unwatch := func(u string) {
			if watchers[u]--; watchers[u] == 0 {
				delete(watchers, u)
			}
		}
		changed := func(now time.Duration, u string) {
			if watchers[u] == 0 {
				return
			}
			if w := windows[u]; w != nil {
				w.changed = true
				return
			}
			lone = append(lone, u)
			windows[u] = &modelWindow{end: now + window}
		}
		deliverLone := func(now time.Duration) { // after the changes of one call
			deliver(now, lone)
			lone = nil
		}
		endWindows := func(now time.Duration) { // those that ended since the last step, in order
			for {
				var first time.Duration = -1
				for _, w := range windows {
					if w.end <= now && (first < 0 || w.end < first) {
						first = w.end
					}
				}
				if first < 0 {
					return
				}
				var batch []string
				for u, w := range windows {
					if w.end != first {
						continue
					}
					delete(windows, u)
					if w.changed {
						batch = append(batch, u)
						windows[u] = &modelWindow{end: first + window}
					}
				}
				deliver(first, batch)
			}
		}
		rng := rand.New(rand.NewPCG(3, 4))
		var now time.Duration
		for range 3_000 {
			if d := time.Duration(rng.IntN(4)) * time.Millisecond; d > 0 {
				wait(d)
				now += d
			}
			endWindows(now)
			s, u := rng.IntN(4), names[rng.IntN(len(names))]
			switch op := rng.IntN(20); {
			case op < 6:
				subscribeAll(t, m, s, u)
				if !subs[s][u] {
					if subs[s] == nil {
						subs[s] = make(map[string]bool)
					}
					subs[s][u] = true
					watchers[u]++
				}
			case op < 10:
				m.Unsubscribe(s, u)
				if subs[s][u] {
					delete(subs[s], u)
					unwatch(u)
				}
			case op < 11:
				m.Drop(s)
				for u := range subs[s] {
					unwatch(u)
				}
				delete(subs, s)
			case op < 18:
				m.Changed(u)
				synctest.Wait()
				changed(now, u)
				deliverLone(now)
			default:
				prefix := u[:len("test://a/")]
				m.ChangedPrefix(prefix)
				synctest.Wait()
				for _, u := range names {
					if strings.HasPrefix(u, prefix) {
						changed(now, u)
					}
				}
				deliverLone(now)
			}
		}
		m.Close() // the window open, if any, is dropped
		wait(10 * window)
		got := r.take()
		if !slices.Equal(got, want) {
			t.Errorf("%d deliveries, want %d", len(got), len(want))
			for i := range max(len(got), len(want)) {
				var g, w delivery
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Fatalf("delivery %d: %v, want %v", i, g, w)
				}
			}
		}
		if len(want) < 100 {
			t.Errorf("only %d deliveries: the test tests little", len(want))
		}
	})
}

// TestChangedDoesNotWaitForDeliver blocks Deliver and checks that the
// Manager's methods still return at once (if one blocked on a lock, the
// bubble's clock would stop and the test hang until go test's -timeout);
// the change made meanwhile is delivered as soon as Deliver is free.
func TestChangedDoesNotWaitForDeliver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		release := make(chan struct{})
		var blocked atomic.Bool
		m := newManager[int](t, &subscribe.Options{
			Window: window,
			Deliver: func(u string) {
				r.deliver(u)
				if blocked.CompareAndSwap(false, true) {
					<-release
				}
			},
		})
		subscribeAll(t, m, 1, "test://slow")
		m.Changed("test://slow")
		synctest.Wait()
		r.want(t, "the first change", at(0, "test://slow")) // and Deliver blocks

		for range 100 {
			m.Changed("test://slow") // in the window
		}
		m.ChangedPrefix("test://")
		m.ChangedWhere(func(string) bool { return true })
		subscribeAll(t, m, 2, "test://other")
		m.Changed("test://other")
		m.Unsubscribe(2, "test://other")
		m.Stats()
		m.Watched("test://slow")

		wait(5 * window) // windows end meanwhile
		r.want(t, "while Deliver blocks")
		close(release)
		synctest.Wait()
		r.want(t, "once Deliver returns", at(5*window, "test://slow"))
		wait(10 * window)
		r.want(t, "later")
	})
}

// TestDeliverCallsBack has Deliver call back into the Manager.
func TestDeliverCallsBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		var m *subscribe.Manager[int]
		m = newManager[int](t, &subscribe.Options{
			Window: window,
			Deliver: func(u string) {
				r.deliver(u)
				m.Stats()
				m.Changed(u)
				m.Unsubscribe(1, u) // before the window Changed opened ends
				if err := m.Subscribe(2, "test://b"); err != nil {
					t.Error(err)
				}
			},
		})
		subscribeAll(t, m, 1, "test://a")
		m.Changed("test://a")
		synctest.Wait()
		r.want(t, "the change", at(0, "test://a"))
		wantStats(t, m, 1, 1, 1)
		wantWatched(t, m, "test://b", true)
		wait(10 * window)
		r.want(t, "the change made by Deliver, unwatched since")
	})
}

// TestNilDeliver: without Deliver, changes are ignored.
func TestNilDeliver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := newManager[int](t, &subscribe.Options{Window: window})
		subscribeAll(t, m, 1, "test://a")
		m.Changed("test://a")
		m.ChangedPrefix("test://")
		wait(10 * window)
		wantStats(t, m, 1, 1, 1)
	})
}

func TestClose(t *testing.T) {
	t.Parallel()
	t.Run("pending", func(t *testing.T) {
		// Close drops the changes of the window open.
		synctest.Test(t, func(t *testing.T) {
			r := newRecorder()
			m := newManager[int](t, &subscribe.Options{Window: window, Deliver: r.deliver})
			subscribeAll(t, m, 1, "test://a")
			m.Changed("test://a")
			synctest.Wait()
			m.Changed("test://a")
			wait(window - time.Nanosecond)
			m.Close()
			wait(10 * window)
			r.want(t, "after Close", at(0, "test://a"))
		})
	})
	t.Run("waits", func(t *testing.T) {
		// Block a delivery, queue more changes behind it, and Close: it
		// waits for the Deliver call under way, and none other is made,
		// not even for the rest of that window's URIs.
		synctest.Test(t, func(t *testing.T) {
			var (
				mu     sync.Mutex
				events []string
			)
			event := func(e string) {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, e)
			}
			wantEvents := func(what string, want ...string) {
				t.Helper()
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(events, want) {
					t.Errorf("%s: %q, want %q", what, events, want)
				}
			}
			release := make(chan struct{})
			m := newManager[int](t, &subscribe.Options{
				Window: window,
				Deliver: func(u string) {
					event("deliver " + u)
					if u == "test://a" {
						<-release
					}
					event("return " + u)
				},
			})
			subscribeAll(t, m, 1, "test://a", "test://b", "test://c")
			m.Changed("test://a")
			m.Changed("test://c") // in a's window: Deliver(c) would follow Deliver(a)
			wait(window)
			wantEvents("Deliver blocks", "deliver test://a")
			m.Changed("test://b") // in the next window, which ends meanwhile
			wait(2 * window)

			var closers sync.WaitGroup
			for i := range 2 { // Close twice, at once: both wait
				closers.Go(func() {
					m.Close()
					event("closed " + strconv.Itoa(i))
				})
			}
			synctest.Wait()
			wantEvents("Close waits for Deliver", "deliver test://a")
			close(release)
			closers.Wait()
			mu.Lock()
			if len(events) > 2 {
				slices.Sort(events[2:]) // the closers return in either order
			}
			mu.Unlock()
			wantEvents("Close returns once Deliver has", "deliver test://a", "return test://a", "closed 0", "closed 1")

			m.Changed("test://b")
			wait(10 * window)
			wantEvents("nothing after", "deliver test://a", "return test://a", "closed 0", "closed 1")
			m.Close() // once more: returns at once
		})
	})
	t.Run("after", func(t *testing.T) {
		// After Close, changes are ignored and Subscribe refuses; the
		// subscriptions held can be taken apart, and the hooks say so.
		synctest.Test(t, func(t *testing.T) {
			r := newRecorder()
			var watches, unwatches []string
			m := newManager[int](t, &subscribe.Options{
				Window:    window,
				Deliver:   r.deliver,
				OnWatch:   func(u string) { watches = append(watches, u) },
				OnUnwatch: func(u string) { unwatches = append(unwatches, u) },
			})
			subscribeAll(t, m, 1, "test://a", "test://b")
			subscribeAll(t, m, 2, "test://a")
			m.Close()
			m.Changed("test://a")
			m.ChangedPrefix("test://")
			m.ChangedWhere(func(string) bool { return true })
			m.Close() // twice is fine
			wait(10 * window)
			r.want(t, "after Close")

			for _, u := range []string{"test://a", "test://c", ""} {
				if err := m.Subscribe(3, u); !errors.Is(err, subscribe.ErrClosed) {
					t.Errorf("Subscribe(%q) after Close: %v, want ErrClosed", u, err)
				}
			}
			if err := m.Subscribe(1, "test://a"); !errors.Is(err, subscribe.ErrClosed) {
				t.Errorf("Subscribe again after Close: %v, want ErrClosed", err)
			}
			wantStats(t, m, 3, 2, 2) // the subscriptions are kept, none added
			wantWatched(t, m, "test://a", true)
			wantWatched(t, m, "test://c", false)

			m.Unsubscribe(1, "test://b")
			m.Drop(1)
			m.Drop(2)
			wantStats(t, m, 0, 0, 0)
			if !slices.Equal(watches, []string{"test://a", "test://b"}) {
				t.Errorf("OnWatch calls %q, want those before Close", watches)
			}
			if !slices.Equal(unwatches, []string{"test://b", "test://a"}) {
				t.Errorf("OnUnwatch calls %q after Close, want test://b, test://a", unwatches)
			}
		})
	})
}

// TestCloseLeavesNoGoroutine counts the goroutines of the bubble while a
// delivery is under way and after Close: once Close has returned, none
// the Manager started is left.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The bubble holds the test's goroutine and the testing package's
		// own (those that called synctest.Test): count them too.
		base := mcptest.BubbleGoroutines(t)
		wantGoroutines := func(what string, more int) {
			t.Helper()
			if n := mcptest.BubbleGoroutines(t); n != base+more {
				t.Errorf("%s: %d goroutines in the bubble, want %d", what, n, base+more)
			}
		}
		release := make(chan struct{})
		var returned atomic.Bool
		m, err := subscribe.New[int](&subscribe.Options{
			Window: window,
			Deliver: func(string) {
				<-release
				returned.Store(true)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		subscribeAll(t, m, 1, "test://a")
		wantGoroutines("no change yet", 0)
		m.Changed("test://a")
		synctest.Wait()
		wantGoroutines("Deliver blocked", 1)
		m.Changed("test://a") // windows end while Deliver blocks
		wait(2 * window)
		wantGoroutines("Deliver blocked, windows ended", 1)

		done := make(chan struct{})
		go func() {
			defer close(done)
			m.Close()
			if !returned.Load() {
				t.Error("Close returned before Deliver did")
			}
		}()
		synctest.Wait()
		wantGoroutines("Close waiting", 2)
		close(release)
		<-done
		synctest.Wait()
		wantGoroutines("after Close", 0)
		wait(10 * window)
		wantGoroutines("later", 0)

		// Closed with its window open, a Manager starts nothing more.
		m, err = subscribe.New[int](&subscribe.Options{Window: window, Deliver: func(string) { t.Error("delivered") }})
		if err != nil {
			t.Fatal(err)
		}
		subscribeAll(t, m, 1, "test://a")
		m.Changed("test://a")
		m.Close()
		wait(10 * window)
		wantGoroutines("closed with its window open", 0)
	})
}

// TestSessionsLeaveNothing: after 10,000 sessions subscribe and end, the
// Manager holds nothing, and every URI watched was unwatched. Every tenth
// session watches more URIs than a small set holds.
func TestSessionsLeaveNothing(t *testing.T) {
	t.Parallel()
	const (
		sessions = 10_000
		workers  = 8
		big      = 20 // URIs of a tenth session's own: beyond the small-set size
	)
	var watches, unwatches atomic.Int64
	m := newManager[int](t, &subscribe.Options{
		Window:    time.Millisecond, // real time: deliveries run along
		Deliver:   func(string) {},
		OnWatch:   func(string) { watches.Add(1) },
		OnUnwatch: func(string) { unwatches.Add(1) },
	})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			uris := make([]string, 0, 3+big)
			for s := w; s < sessions; s += workers {
				own := "test://own/" + strconv.Itoa(s)
				uris = append(uris[:0], "test://shared", "test://group/"+strconv.Itoa(s%100), own)
				if s%10 == 0 {
					for i := range big {
						uris = append(uris, own+"/"+strconv.Itoa(i))
					}
				}
				for _, u := range uris {
					if err := m.Subscribe(s, u); err != nil {
						t.Error(err)
						return
					}
				}
				m.Changed(uris[s%len(uris)])
				if s%3 == 0 {
					m.Unsubscribe(s, uris[1])
				}
				m.Drop(s)
			}
		})
	}
	wg.Wait()
	wantStats(t, m, 0, 0, 0)
	// Each session's own URIs were watched first by it, the others perhaps.
	if own := int64(sessions + sessions/10*big); watches.Load() < own || watches.Load() != unwatches.Load() {
		t.Errorf("%d OnWatch calls, %d OnUnwatch calls; want as many, at least %d", watches.Load(), unwatches.Load(), own)
	}
}

// TestConcurrent mixes every operation from many goroutines, with
// deliveries in real time along (run it with -race), then ends every
// session and closes the Manager: nothing is left, and nothing is
// delivered once Close has returned.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	var watches, unwatches atomic.Int64
	var closed atomic.Bool
	var m *subscribe.Manager[int]
	m = newManager[int](t, &subscribe.Options{
		Window:        time.Millisecond,
		MaxPerSession: 5,
		Deliver: func(u string) {
			if closed.Load() {
				t.Errorf("Deliver(%q) after Close returned", u)
			}
			m.Watched(u)
		},
		OnWatch:   func(string) { watches.Add(1) },
		OnUnwatch: func(string) { unwatches.Add(1) },
	})
	const goroutines, sessions = 16, 50
	var uris []string
	for i := range 4 {
		for j := range 10 {
			uris = append(uris, fmt.Sprintf("test://%d/%d", i, j))
		}
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 2_000 {
				s, u := rng.IntN(sessions), uris[rng.IntN(len(uris))]
				switch rng.IntN(8) {
				case 0, 1, 2:
					if err := m.Subscribe(s, u); err != nil && !errors.Is(err, subscribe.ErrLimit) {
						t.Error(err)
					}
				case 3:
					m.Unsubscribe(s, u)
				case 4:
					m.Drop(s)
				case 5:
					m.Changed(u)
				case 6:
					m.ChangedPrefix(u[:len("test://0/")])
				default:
					m.Watched(u)
					m.Stats()
				}
			}
		})
	}
	wg.Wait()
	var closers sync.WaitGroup
	for range 2 {
		closers.Go(m.Close)
	}
	closers.Wait()
	closed.Store(true)
	for s := range sessions {
		m.Drop(s)
	}
	wantStats(t, m, 0, 0, 0)
	if watches.Load() != unwatches.Load() {
		t.Errorf("%d OnWatch calls, %d OnUnwatch calls; want as many", watches.Load(), unwatches.Load())
	}
}
