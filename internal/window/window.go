// Package window coalesces changes to keys (resource URIs) in time
// windows: the first change to a key after a quiet spell is delivered at
// once, and the changes within the window that follows, however many,
// once when it ends. It is the timing half of a subscription manager,
// shared by package subscribe's Manager and the resource package's
// delivery; neither knows the other.
//
// A Windows knows nothing of who watches a key: its owner asks it to
// deliver only keys someone watches, and it asks the owner again before
// each delivery. It is guarded by its owner's mutex, so that a change
// costs the owner one lock, not two.
package window

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Windows delivers changed keys, one window per key. The zero value is not
// usable: make one with New, and end it with Close.
type Windows struct {
	length  time.Duration
	deliver func(key string)
	watched func(key string) bool

	mu       *sync.Mutex         // the owner's
	pending  map[string]struct{} // keys to deliver now
	flushing bool                // a goroutine delivers pending (see flush)
	waiting  bool                // the delivering goroutine waits for more (wake)
	wake     chan struct{}       // tells the waiting goroutine to deliver; room for one
	stop     chan struct{}       // closed by Close
	closed   atomic.Bool         // set under mu; read without it between deliveries

	// The open windows: by key, and in the order they end, which is the
	// order they opened (or were extended) in, since all are as long;
	// timer fires when the first ends, and is nil when none is open.
	windows map[string]*window
	ends    []*window // ends[head:] are open
	head    int
	timer   *time.Timer

	// goroutines counts the timer function that is pending or running
	// and the delivering goroutine, the only goroutines a Windows starts:
	// Close waits for them. Each is added under mu before closed is set.
	goroutines sync.WaitGroup
}

// A window is one key's: its change at its start was delivered then, and
// a change within it is delivered when it ends.
type window struct {
	key     string
	end     time.Time
	changed bool // within the window: deliver at its end
}

// New returns Windows of the given length (which must be positive),
// guarded by the owner's mutex mu. It calls deliver with each changed
// key, at most once a window, in key order, from a goroutine of its own,
// one call at a time, with mu released: deliver may call the owner, but
// not Close. Before each batch it asks watched, with mu held, whether
// anyone still watches each key, and skips those no one does. New starts
// no goroutine.
func New(mu *sync.Mutex, length time.Duration, deliver func(key string), watched func(key string) bool) *Windows {
	return &Windows{
		mu:      mu,
		length:  length,
		deliver: deliver,
		watched: watched,
		pending: make(map[string]struct{}),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		windows: make(map[string]*window),
	}
}

// Changed reports a change to key, which someone watches: it is
// delivered at once if it has no open window, which it then opens from
// *now (Changed sets *now to the time if it is zero, so that the windows
// one change opens end together, and a change within a window, the common
// case in a burst, reads no clock), and otherwise when its window ends.
// It reports whether the change was coalesced: the window had seen a
// change already. It does nothing once w is closed. The owner's mutex
// must be held.
func (w *Windows) Changed(key string, now *time.Time) (coalesced bool) {
	if w.closed.Load() {
		return false
	}
	if win := w.windows[key]; win != nil {
		coalesced = win.changed
		win.changed = true
		return coalesced
	}
	if now.IsZero() {
		*now = time.Now()
	}
	w.pending[key] = struct{}{}
	w.open(key, *now)
	w.arm(*now)
	w.flush()
	return false
}

// open opens a window for key from now. It ends after every window open,
// since all are as long: it goes last. w.mu must be held.
func (w *Windows) open(key string, now time.Time) {
	win := &window{key: key, end: now.Add(w.length)}
	w.windows[key] = win
	if w.head > 0 && w.head >= len(w.ends)/2 { // reuse the room the ended ones left
		n := copy(w.ends, w.ends[w.head:])
		clear(w.ends[n:])
		w.ends, w.head = w.ends[:n], 0
	}
	w.ends = append(w.ends, win)
}

// arm sets the timer for the end of the first open window, if there is
// one and the timer is not set. w.mu must be held.
func (w *Windows) arm(now time.Time) {
	if w.timer == nil && w.head < len(w.ends) {
		w.goroutines.Add(1)
		w.timer = time.AfterFunc(w.ends[w.head].end.Sub(now), w.windowsEnd)
	}
}

// windowsEnd runs on a goroutine of its own when the first open window
// ends. Each window that has ended by now and saw a change is delivered
// and opens again from now; one that saw none closes, and the key's next
// change is delivered at once (see Changed).
func (w *Windows) windowsEnd() {
	defer w.goroutines.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = nil
	if w.closed.Load() {
		return
	}
	now := time.Now()
	for w.head < len(w.ends) && !w.ends[w.head].end.After(now) {
		win := w.ends[w.head]
		w.ends[w.head] = nil
		w.head++
		delete(w.windows, win.key)
		if win.changed {
			w.pending[win.key] = struct{}{}
			w.open(win.key, now)
		}
	}
	w.arm(now)
	w.flush()
}

// flush has the delivering goroutine deliver the pending keys: wakes
// it if it waits, starts it if it has ended, and leaves it be if it is
// delivering already (it goes on with those added meanwhile). w.mu must
// be held.
func (w *Windows) flush() {
	if w.flushing || len(w.pending) == 0 {
		return
	}
	w.flushing = true
	if w.waiting {
		w.waiting = false
		w.wake <- struct{}{} // the one waiting has taken the last
		return
	}
	w.goroutines.Add(1)
	go w.deliverPending()
}

// delivererIdle is how long the delivering goroutine waits for more keys
// once it has delivered those pending, before it ends: a stream of
// changes, each delivered at once, then does not start (and grow the
// stack of) a goroutine for each.
const delivererIdle = time.Second

// deliverPending delivers the pending keys that are still watched, in
// order, and then any that became pending meanwhile, until none is left;
// then waits for flush to wake it, for delivererIdle, and ends. It ends at
// once when w is closed. No goroutine waits on a lock for long: the
// Windows stay responsive (and testable with testing/synctest, where a
// goroutine blocked on a mutex would stall the fake clock).
func (w *Windows) deliverPending() {
	defer w.goroutines.Done()
	var idle *time.Timer
	defer func() {
		if idle != nil {
			idle.Stop()
		}
	}()
	w.mu.Lock()
	for {
		w.deliverLocked()
		w.flushing = false
		if w.closed.Load() {
			w.mu.Unlock()
			return
		}
		w.waiting = true
		w.mu.Unlock()
		if idle == nil {
			idle = time.NewTimer(delivererIdle)
		} else {
			idle.Reset(delivererIdle)
		}
		select {
		case <-w.wake:
			w.mu.Lock()
			continue
		case <-idle.C:
		case <-w.stop:
		}
		w.mu.Lock()
		if !w.waiting { // flush woke it meanwhile
			<-w.wake
			continue
		}
		w.waiting = false
		w.mu.Unlock()
		return
	}
}

// deliverLocked delivers the pending keys, and those that become pending
// meanwhile, until none is left or w is closed. w.mu must be held; it is
// released during each delivery.
func (w *Windows) deliverLocked() {
	for len(w.pending) > 0 && !w.closed.Load() {
		var keys []string
		for key := range w.pending {
			if w.watched(key) {
				keys = append(keys, key)
			}
		}
		clear(w.pending)
		w.mu.Unlock()
		slices.Sort(keys)
		for _, key := range keys {
			if w.closed.Load() {
				break
			}
			w.deliver(key)
		}
		w.mu.Lock()
	}
}

// Close ends every window and drops the changes pending in them; later
// changes are ignored. If a delivery is under way, Close waits for it to
// return, and no other starts. When Close returns, no goroutine w started
// is running, and none will start. Close must not be called by deliver,
// nor with the owner's mutex held. It may be called any number of times,
// concurrently too.
func (w *Windows) Close() {
	w.mu.Lock()
	if !w.closed.Swap(true) {
		close(w.stop)
	}
	if w.timer != nil {
		if w.timer.Stop() { // its function will not run
			w.goroutines.Done()
		}
		w.timer = nil
	}
	clear(w.pending)
	clear(w.windows)
	clear(w.ends)
	w.ends, w.head = w.ends[:0], 0
	w.mu.Unlock()
	w.goroutines.Wait()
}
