package resource

import (
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sweepEvery is how often a sessionWatch looks for ended sessions among
// those of the servers the registry is mounted on.
const sweepEvery = time.Second

// A sessionWatch drops the subscriptions of sessions that end (go-sdk
// behaviour 7). go-sdk signals a session's end only by returning from its
// Wait, which would take a goroutine per session; instead one goroutine,
// while any session is watched, compares them every sweepEvery with the
// sessions the mounted servers list, and drops those that were listed and
// are no more. A session a sweep never saw listed (one that ended within
// the interval, or of a server the registry is not mounted on, whose
// SubscribeHandler is the registry's without Mount) is then left to a
// goroutine of its own that waits for it.
type sessionWatch struct {
	servers func() []*mcp.Server // the mounted servers; set by NewRegistry

	mu       sync.Mutex
	watching map[*mcp.ServerSession]watchState
	swept    int           // sessions the sweep watches (not waited)
	stop     chan struct{} // closed by forgetAll; nil before the first sweep
	closed   bool
}

// A watchState is how a session is watched.
type watchState uint8

const (
	unseen watchState = iota // no sweep has seen a mounted server list it yet
	seen                     // a sweep has: it ends when none lists it
	waited                   // a goroutine waits for it
)

// forgetOnEnd calls drop with s, at most once, when s ends, or in
// forgetAll.
func (w *sessionWatch) forgetOnEnd(s *mcp.ServerSession, drop func(*mcp.ServerSession)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if _, ok := w.watching[s]; ok {
		return
	}
	if w.watching == nil {
		w.watching = make(map[*mcp.ServerSession]watchState)
	}
	w.watching[s] = unseen
	w.swept++
	if w.swept == 1 {
		if w.stop == nil {
			w.stop = make(chan struct{})
		}
		go w.sweep(w.stop, drop)
	}
}

// forget drops s if it is still watched.
func (w *sessionWatch) forget(s *mcp.ServerSession, drop func(*mcp.ServerSession)) {
	w.mu.Lock()
	_, watched := w.watching[s]
	delete(w.watching, s)
	w.mu.Unlock()
	if watched {
		drop(s) // with no lock held: it may call OnUnwatch
	}
}

// sweep, every sweepEvery, drops the sessions a mounted server listed and
// lists no more, and hands those no sweep saw listed to a goroutine that
// waits for them; it returns when no session is left to sweep, or stop is
// closed.
func (w *sessionWatch) sweep(stop chan struct{}, drop func(*mcp.ServerSession)) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		live := make(map[*mcp.ServerSession]bool)
		for _, srv := range w.servers() {
			for s := range srv.Sessions() {
				live[s] = true
			}
		}
		var ended []*mcp.ServerSession
		w.mu.Lock()
		for s, state := range w.watching {
			switch {
			case state == waited:
			case live[s]:
				w.watching[s] = seen
			case state == seen:
				delete(w.watching, s)
				w.swept--
				ended = append(ended, s)
			default: // unseen, and not listed: ended already, or not ours to sweep
				w.watching[s] = waited
				w.swept--
				go func() {
					s.Wait()
					w.forget(s, drop)
				}()
			}
		}
		done := w.swept == 0
		w.mu.Unlock()
		for _, s := range ended {
			drop(s) // with no lock held: it may call OnUnwatch
		}
		if done {
			// forgetOnEnd starts another sweep for the next session: it
			// sees swept become 1 under the lock this one released.
			return
		}
	}
}

// forgetAll calls drop with every session watched, and watches no more:
// the sweep stops, and the goroutines still waiting end with their
// sessions, doing nothing.
func (w *sessionWatch) forgetAll(drop func(*mcp.ServerSession)) {
	w.mu.Lock()
	w.closed = true
	watched := w.watching
	w.watching = nil
	if w.stop != nil {
		close(w.stop)
	}
	w.mu.Unlock()
	for s := range watched {
		drop(s)
	}
}
