// Package subscribe keeps track of who watches which resource URI, and
// turns bursts of changes into few, targeted notifications.
//
// A Manager records subscriptions per session, enforces a per-session
// limit, forgets a session entirely when it ends, tells the data source
// when a URI gains its first watcher and loses its last (so it watches only
// what someone watches), and coalesces changes: Changed returns at once,
// and every URI changed within a window is delivered once, and only if
// someone watches it.
//
// The package knows nothing of MCP transports: delivery is a function the
// caller supplies (mcpres's resource package delivers through go-sdk's
// Server.ResourceUpdated, which reaches exactly the sessions subscribed to
// a URI in both protocol eras).
package subscribe

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for Options.
const (
	DefaultMaxPerSession = 1000
	DefaultWindow        = 100 * time.Millisecond
)

// ErrLimit is wrapped by Subscribe's error when a session already holds
// Options.MaxPerSession subscriptions.
var ErrLimit = errors.New("subscribe: too many subscriptions for this session")

// Options configures a Manager. The zero value is usable.
type Options struct {
	// MaxPerSession caps the URIs one session may watch. Zero means
	// DefaultMaxPerSession; negative means no cap.
	MaxPerSession int
	// Window is how long changes are gathered before delivery: any number
	// of changes to one URI within it yield one delivery. Zero means
	// DefaultWindow.
	Window time.Duration
	// Deliver is called with each watched URI that changed, once per
	// window, from the Manager's own goroutine (never from Changed). It
	// may block; changes arriving meanwhile wait for the next window.
	Deliver func(uri string)
	// OnWatch is called when a URI gains its first watcher, and OnUnwatch
	// when it loses its last: the data source can start and stop watching
	// it (polling, LISTEN, fsnotify). They are called with no lock held,
	// one at a time, in the order the URIs gained and lost their watchers,
	// so a hook may call back into the Manager. They are called by the
	// goroutine whose Subscribe, Unsubscribe or Drop caused them, unless
	// another goroutine is calling hooks at the time: that one then calls
	// them too, and the Subscribe (or Unsubscribe, Drop) returns without
	// waiting for them.
	OnWatch, OnUnwatch func(uri string)
}

// A Manager tracks subscriptions of sessions of type S (any comparable
// session handle). It is safe for concurrent use. Close stops its
// delivery.
type Manager[S comparable] struct {
	opts Options

	mu        sync.Mutex
	byURI     map[string]set[S]
	bySession map[S]set[string]
	count     int // subscriptions
	pending   map[string]struct{}
	timer     *time.Timer
	closed    atomic.Bool // set under mu; read without it by deliver

	hooks        []hookCall // OnWatch and OnUnwatch calls to make, in order
	hooksRunning bool       // a goroutine is making them

	flush sync.Mutex // one delivery at a time
}

// A hookCall is a call of OnWatch (watch) or OnUnwatch.
type hookCall struct {
	uri   string
	watch bool
}

// New returns a Manager configured by opts, which may be nil.
func New[S comparable](opts *Options) *Manager[S] {
	m := &Manager[S]{
		byURI:     make(map[string]set[S]),
		bySession: make(map[S]set[string]),
		pending:   make(map[string]struct{}),
	}
	if opts != nil {
		m.opts = *opts
	}
	if m.opts.MaxPerSession == 0 {
		m.opts.MaxPerSession = DefaultMaxPerSession
	}
	if m.opts.Window <= 0 {
		m.opts.Window = DefaultWindow
	}
	return m
}

// Subscribe records that session s watches uri. Subscribing again to a
// URI s already watches is not an error. It returns an error wrapping
// ErrLimit, and records nothing, if s already watches MaxPerSession URIs,
// and an error if uri is empty.
func (m *Manager[S]) Subscribe(s S, uri string) error {
	if uri == "" {
		return errors.New("subscribe: empty URI")
	}
	m.mu.Lock()
	uris := m.bySession[s]
	if uris.has(uri) {
		m.mu.Unlock()
		return nil
	}
	if max := m.opts.MaxPerSession; max > 0 && uris.len() >= max {
		m.mu.Unlock()
		return fmt.Errorf("%w (%d)", ErrLimit, max)
	}
	if uris.add(uri) {
		m.bySession[s] = uris
	}
	watchers, watched := m.byURI[uri]
	if watchers.add(s) {
		m.byURI[uri] = watchers
	}
	m.count++
	if !watched && m.opts.OnWatch != nil {
		m.hooks = append(m.hooks, hookCall{uri: uri, watch: true})
	}
	m.unlockAndCallHooks()
	return nil
}

// Unsubscribe records that s no longer watches uri. It is not an error if
// s did not watch it.
func (m *Manager[S]) Unsubscribe(s S, uri string) {
	m.mu.Lock()
	uris, ok := m.bySession[s]
	if ok && uris.has(uri) {
		uris.remove(uri)
		switch {
		case uris.len() == 0:
			delete(m.bySession, s)
		case uris.big == nil:
			m.bySession[s] = uris
		}
		m.unwatch(s, uri)
	}
	m.unlockAndCallHooks()
}

// Drop forgets session s and every subscription it holds: call it when the
// session ends.
func (m *Manager[S]) Drop(s S) {
	m.mu.Lock()
	if uris, ok := m.bySession[s]; ok {
		delete(m.bySession, s)
		uris.each(func(uri string) { m.unwatch(s, uri) })
	}
	m.unlockAndCallHooks()
}

// unwatch removes s from the watchers of uri, which it is among, and
// queues OnUnwatch if it was the last; a URI no one watches leaves
// nothing behind. m.mu must be held.
func (m *Manager[S]) unwatch(s S, uri string) {
	m.count--
	watchers := m.byURI[uri]
	watchers.remove(s)
	if watchers.len() > 0 {
		if watchers.big == nil {
			m.byURI[uri] = watchers
		}
		return
	}
	delete(m.byURI, uri)
	if m.opts.OnUnwatch != nil {
		m.hooks = append(m.hooks, hookCall{uri: uri, watch: false})
	}
}

// unlockAndCallHooks releases m.mu and then, unless another goroutine is
// already doing so, makes the queued hook calls in order, with no lock
// held. Hooks that a hook causes (by calling back into the Manager) are
// queued and made by this loop after it, so hooks never wait on each
// other. m.mu must be held.
func (m *Manager[S]) unlockAndCallHooks() {
	if m.hooksRunning || len(m.hooks) == 0 {
		m.mu.Unlock()
		return
	}
	m.hooksRunning = true
	i, finished := 0, false
	defer func() {
		if !finished { // a hook panicked: the next caller makes the rest
			m.mu.Lock()
			m.hooks = slices.Delete(m.hooks, 0, i+1)
			m.hooksRunning = false
			m.mu.Unlock()
		}
	}()
	for ; i < len(m.hooks); i++ {
		h := m.hooks[i]
		m.hooks[i] = hookCall{}
		m.mu.Unlock()
		if h.watch {
			m.opts.OnWatch(h.uri)
		} else {
			m.opts.OnUnwatch(h.uri)
		}
		m.mu.Lock()
	}
	m.hooks = m.hooks[:0]
	m.hooksRunning = false
	finished = true
	m.mu.Unlock()
}

// Changed reports that the resource at uri changed. It returns at once:
// if someone watches uri, a delivery is queued, and changes to the same
// URI before it goes out ride along.
func (m *Manager[S]) Changed(uri string) {
	m.mu.Lock()
	if _, watched := m.byURI[uri]; watched {
		m.queue(uri)
	}
	m.mu.Unlock()
}

// ChangedWhere reports that every watched resource whose URI match
// accepts changed: a subtree (ChangedPrefix) or the URIs of a template.
// It costs one call of match per watched URI, made with the Manager's
// lock held: match must not call the Manager.
func (m *Manager[S]) ChangedWhere(match func(uri string) bool) {
	m.mu.Lock()
	for uri := range m.byURI {
		if match(uri) {
			m.queue(uri)
		}
	}
	m.mu.Unlock()
}

// ChangedPrefix reports that every watched resource whose URI starts with
// prefix changed, such as everything under log://prod/.
func (m *Manager[S]) ChangedPrefix(prefix string) {
	m.ChangedWhere(func(uri string) bool { return strings.HasPrefix(uri, prefix) })
}

// queue adds uri to the pending deliveries and starts the window's timer
// if it is not running. m.mu must be held.
func (m *Manager[S]) queue(uri string) {
	if m.closed.Load() {
		return
	}
	m.pending[uri] = struct{}{}
	if m.timer == nil {
		m.timer = time.AfterFunc(m.opts.Window, m.deliver)
	}
}

// deliver sends the pending URIs that are still watched.
func (m *Manager[S]) deliver() {
	m.flush.Lock()
	defer m.flush.Unlock()
	m.mu.Lock()
	m.timer = nil
	var uris []string
	for uri := range m.pending {
		if _, watched := m.byURI[uri]; watched {
			uris = append(uris, uri)
		}
	}
	clear(m.pending)
	m.mu.Unlock()
	if m.opts.Deliver == nil {
		return
	}
	slices.Sort(uris)
	for _, uri := range uris {
		if m.closed.Load() {
			return
		}
		m.opts.Deliver(uri)
	}
}

// Watched reports whether anyone watches uri.
func (m *Manager[S]) Watched(uri string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.byURI[uri]
	return ok
}

// Stats counts what the Manager holds: the subscriptions, the sessions
// holding any, and the URIs anyone watches. After every session has been
// dropped all three are zero.
func (m *Manager[S]) Stats() (subscriptions, sessions, uris int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count, len(m.bySession), len(m.byURI)
}

// Close stops delivery: pending changes are dropped, and later ones
// ignored; a Deliver call under way when Close is called may finish, but
// no other starts. Subscriptions are kept (Stats still counts them), and
// OnWatch and OnUnwatch are still called.
func (m *Manager[S]) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed.Store(true)
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	clear(m.pending)
}

// smallSet is the size up to which a set is a slice: most sessions watch
// a few URIs and most URIs have a few watchers, and a map for each would
// cost several times the memory.
const smallSet = 16

// A set is a set of K: an unordered slice while it is small, a map when
// it grows. The zero value is an empty set. Sets are held by value in the
// Manager's maps, so a set whose slice changed is stored back (one whose
// map changed need not be).
type set[K comparable] struct {
	small []K
	big   map[K]struct{}
}

func (s *set[K]) len() int {
	if s.big != nil {
		return len(s.big)
	}
	return len(s.small)
}

func (s *set[K]) has(k K) bool {
	if s.big != nil {
		_, ok := s.big[k]
		return ok
	}
	return slices.Contains(s.small, k)
}

// add adds k, which s must not hold, and reports whether s itself
// changed (and must be stored back), rather than only its map.
func (s *set[K]) add(k K) (changed bool) {
	switch {
	case s.big != nil:
		s.big[k] = struct{}{}
		return false
	case len(s.small) < smallSet:
		s.small = append(s.small, k)
	default:
		s.big = make(map[K]struct{}, smallSet+1)
		for _, x := range s.small {
			s.big[x] = struct{}{}
		}
		s.big[k] = struct{}{}
		s.small = nil
	}
	return true
}

// remove removes k, which s must hold.
func (s *set[K]) remove(k K) {
	if s.big != nil {
		delete(s.big, k)
		return
	}
	i := slices.Index(s.small, k)
	if i < 0 {
		return
	}
	last := len(s.small) - 1
	s.small[i] = s.small[last]
	var zero K
	s.small[last] = zero // let go of what it refers to
	s.small = s.small[:last]
}

func (s *set[K]) each(f func(K)) {
	if s.big != nil {
		for k := range s.big {
			f(k)
		}
		return
	}
	for _, k := range s.small {
		f(k)
	}
}
