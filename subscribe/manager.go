// Package subscribe keeps track of who watches which resource URI, and
// turns bursts of changes into few, targeted notifications.
//
// A Manager records subscriptions per session, enforces a per-session
// limit, forgets a session entirely when it ends, tells the data source
// when a URI gains its first watcher and loses its last (so it watches only
// what someone watches), and coalesces changes: Changed returns at once;
// a URI's first change after a quiet spell is delivered at once, and its
// changes in the window that follows, once, when the window ends; a URI is
// delivered only if someone watches it.
//
// New checks its Options and refuses values it would have to guess at;
// zero always means the documented default. Close ends a Manager's life:
// when it returns, no goroutine the Manager started is running, and no
// delivery is made after it.
//
// Several replicas of a server share changes through a [Bus]: each
// publishes the changes it reports and delivers the others' to its own
// watchers. A [Hub] connects replicas in one process; the nested modules
// natsbus and pgbus connect processes through NATS or Postgres.
//
// The package knows nothing of MCP transports: delivery is a function the
// caller supplies (mcpres's resource package delivers through go-sdk's
// Server.ResourceUpdated, which reaches exactly the sessions subscribed to
// a URI in both protocol eras).
package subscribe

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/hooks"
	"github.com/mcpres/mcpres/internal/smallset"
	"github.com/mcpres/mcpres/internal/window"
)

// Defaults and special values for Options.
const (
	// DefaultMaxPerSession is the cap on one session's subscriptions
	// when Options.MaxPerSession is zero.
	DefaultMaxPerSession = 1000
	// DefaultWindow is the coalescing window when Options.Window is zero.
	DefaultWindow = 100 * time.Millisecond
	// NoLimit as Options.MaxPerSession sets no cap.
	NoLimit = math.MaxInt
)

// ErrLimit is wrapped by Subscribe's error when a session already holds
// Options.MaxPerSession subscriptions.
var ErrLimit = errors.New("subscribe: too many subscriptions for this session")

// ErrClosed is returned by Subscribe once the Manager is closed.
var ErrClosed = errors.New("subscribe: Manager closed")

// errEmptyURI is returned by Subscribe for an empty URI.
var errEmptyURI = errors.New("subscribe: empty URI")

// Options configures a Manager. The zero value is ready to use, and New
// takes a nil *Options for it: every zero field means its documented
// default. New refuses negative numbers.
type Options struct {
	// MaxPerSession caps the URIs one session may watch. Zero means
	// DefaultMaxPerSession; NoLimit sets no cap. Negative is an error.
	MaxPerSession int
	// Window is the shortest time between two deliveries of one URI.
	// Each URI has its own: a change to a watched URI after a quiet spell
	// is delivered at once, and opens the URI's window; when the window
	// ends, the URI is delivered once more if it changed within it,
	// however many times, and its next window opens. A window in which it
	// did not change ends the spell: its next change is again delivered
	// at once. So a lone change waits for no window, whatever other URIs
	// do (only for the delivery under way, if Deliver is busy), and a
	// burst costs a URI one delivery at its start and at most one a
	// window. Windows are timed from when they open, not from when
	// Deliver returns: a slow Deliver shortens the gap between two
	// deliveries of a URI. Zero means DefaultWindow. Negative is an error.
	Window time.Duration
	// Deliver is called with each watched URI that changed, at most once
	// per delivery (see Window), in URI order, from a goroutine of the
	// Manager's own (never from Changed), one call at a time. It may
	// block: changes arriving meanwhile are gathered, and delivered as
	// soon as it returns if their window has ended by then. It may call the
	// Manager, except Close (which would wait for it). A URI no longer watched when its window
	// ends is not delivered. Nil means changes are not delivered (nor
	// gathered).
	Deliver func(uri string)
	// OnWatch is called when a URI gains its first watcher, and OnUnwatch
	// when it loses its last: the data source can start and stop watching
	// it (polling, LISTEN, fsnotify). Nil means no call. They are called
	// with no lock held, one at a time, in the order the URIs gained and
	// lost their watchers, so a hook may call back into the Manager. They
	// are called by the goroutine whose Subscribe, Unsubscribe or Drop
	// caused them, unless another goroutine is calling hooks at the time:
	// that one then calls them too, and the Subscribe (or Unsubscribe,
	// Drop) returns without waiting for them. After Close, Unsubscribe
	// and Drop still call OnUnwatch, so the data source can stop watching.
	OnWatch, OnUnwatch func(uri string)
	// OnCoalesce, if not nil, is called with a watched URI each time a
	// change to it costs no delivery of its own: it changed within its
	// window, which had seen a change already (so a burst of n changes
	// within one window costs n-1 calls). It is for telemetry: it is
	// called by the goroutine that reported the change, with no lock
	// held, before Changed (or ChangedWhere) returns, so it should be
	// quick.
	OnCoalesce func(uri string)
}

// A Manager tracks subscriptions of sessions of type S (any comparable
// session handle; its zero value is a session like any other). It is
// safe for concurrent use. The zero Manager is not usable: make one with
// New, and end it with Close.
type Manager[S comparable] struct {
	opts    Options
	windows *window.Windows // nil without Deliver

	mu        sync.Mutex
	watchers  map[string]int // by URI, how many sessions watch it; none: absent
	bySession map[S]uriSet   // the URIs each session watches, stored back after each change
	count     int            // subscriptions
	closed    bool
	hooks     hooks.Queue[hookCall] // OnWatch and OnUnwatch calls to make, in order
}

// A uriSet is the URIs one session watches (most watch few: a sorted
// slice while small).
type uriSet = smallset.Set[string]

// A hookCall is a call of OnWatch (watch) or OnUnwatch.
type hookCall struct {
	uri   string
	watch bool
}

// New returns a Manager configured by opts; a nil opts is the same as
// &Options{}, which means every default. A negative MaxPerSession or
// Window is an error, and New then returns a nil Manager. New starts no
// goroutine: a Manager starts one to deliver, which lasts as long as there
// is something to deliver, and one when windows end.
func New[S comparable](opts *Options) (*Manager[S], error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var errs []error
	if o.MaxPerSession < 0 {
		errs = append(errs, fmt.Errorf("subscribe: negative MaxPerSession %d (NoLimit sets no cap)", o.MaxPerSession))
	}
	if o.Window < 0 {
		errs = append(errs, fmt.Errorf("subscribe: negative Window %v", o.Window))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if o.MaxPerSession == 0 {
		o.MaxPerSession = DefaultMaxPerSession
	}
	if o.Window == 0 {
		o.Window = DefaultWindow
	}
	m := &Manager[S]{
		opts:      o,
		watchers:  make(map[string]int),
		bySession: make(map[S]uriSet),
	}
	if o.Deliver != nil {
		m.windows = window.New(&m.mu, o.Window, o.Deliver, m.watched)
	}
	return m, nil
}

// Subscribe records that session s watches uri. Subscribing again to a
// URI s already watches is not an error. Subscribe records nothing and
// returns ErrClosed once the Manager is closed, an error if uri is empty,
// and an error wrapping ErrLimit if s already watches MaxPerSession URIs.
func (m *Manager[S]) Subscribe(s S, uri string) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return ErrClosed
	}
	if uri == "" {
		m.mu.Unlock()
		return errEmptyURI
	}
	uris := m.bySession[s]
	if uris.Has(uri) {
		m.mu.Unlock()
		return nil
	}
	if max := m.opts.MaxPerSession; uris.Len() >= max {
		m.mu.Unlock()
		return fmt.Errorf("%w (%d)", ErrLimit, max)
	}
	uris.Add(uri)
	m.bySession[s] = uris
	m.watchers[uri]++
	m.count++
	if m.watchers[uri] == 1 && m.opts.OnWatch != nil {
		m.hooks.Add(hookCall{uri: uri, watch: true})
	}
	m.unlockAndCallHooks()
	return nil
}

// Unsubscribe records that s no longer watches uri. It does nothing if s
// does not watch it (an empty uri included). It works after Close too.
func (m *Manager[S]) Unsubscribe(s S, uri string) {
	m.mu.Lock()
	uris, ok := m.bySession[s]
	if ok && uris.Has(uri) {
		uris.Remove(uri)
		if uris.Len() == 0 {
			delete(m.bySession, s)
		} else {
			m.bySession[s] = uris
		}
		m.unwatch(uri)
	}
	m.unlockAndCallHooks()
}

// Drop forgets session s and every subscription it holds: call it when the
// session ends. It does nothing for a session that holds none. It works
// after Close too.
func (m *Manager[S]) Drop(s S) {
	m.mu.Lock()
	if uris, ok := m.bySession[s]; ok {
		delete(m.bySession, s)
		uris.Each(m.unwatch)
	}
	m.unlockAndCallHooks()
}

// unwatch counts one watcher of uri fewer, for a session that watched it
// and no longer does, and queues OnUnwatch if it was the last; a URI no
// one watches leaves nothing behind. (Which sessions watch a URI is not
// kept: delivery needs only whether anyone does, and a session's own URIs
// say what to count down when it goes.) m.mu must be held.
func (m *Manager[S]) unwatch(uri string) {
	m.count--
	if m.watchers[uri]--; m.watchers[uri] > 0 {
		return
	}
	delete(m.watchers, uri)
	if m.opts.OnUnwatch != nil {
		m.hooks.Add(hookCall{uri: uri, watch: false})
	}
}

// unlockAndCallHooks releases m.mu and makes the queued hook calls in
// order, with no lock held (see hooks.Queue). m.mu must be held.
func (m *Manager[S]) unlockAndCallHooks() {
	m.hooks.UnlockAndRun(&m.mu, func(h hookCall) {
		if h.watch {
			m.opts.OnWatch(h.uri)
		} else {
			m.opts.OnUnwatch(h.uri)
		}
	})
}

// Changed reports that the resource at uri changed, and whether anyone
// watches it. It returns at once: if someone watches uri, it is delivered
// at once if nothing changed in the window before, and otherwise when the
// window ends, together with every other change to it until then (see
// Options.Window). It does nothing for a URI no one watches (an empty one included),
// without Options.Deliver, or once the Manager is closed.
func (m *Manager[S]) Changed(uri string) (watched bool) {
	m.mu.Lock()
	coalesced := false
	if _, watched = m.watchers[uri]; watched && m.windows != nil {
		var now time.Time
		coalesced = m.windows.Changed(uri, &now)
	}
	m.mu.Unlock()
	if coalesced && m.opts.OnCoalesce != nil {
		m.opts.OnCoalesce(uri)
	}
	return watched
}

// ChangedWhere reports that every watched resource whose URI match
// accepts changed: a subtree (ChangedPrefix) or the URIs of a template.
// It costs one call of match per watched URI, made with the Manager's
// lock held: match must not call the Manager. A nil match accepts
// nothing. Like Changed, it does nothing once the Manager is closed.
func (m *Manager[S]) ChangedWhere(match func(uri string) bool) {
	if match == nil || m.windows == nil {
		return
	}
	var coalesced []string // for OnCoalesce, called with no lock held
	m.mu.Lock()
	var now time.Time // one change: the windows it opens all end at once
	for uri := range m.watchers {
		if match(uri) && m.windows.Changed(uri, &now) && m.opts.OnCoalesce != nil {
			coalesced = append(coalesced, uri)
		}
	}
	m.mu.Unlock()
	for _, uri := range coalesced {
		m.opts.OnCoalesce(uri)
	}
}

// ChangedPrefix reports that every watched resource whose URI starts with
// prefix changed, such as everything under log://prod/; the empty prefix
// means every watched resource. Like Changed, it does nothing once the
// Manager is closed.
func (m *Manager[S]) ChangedPrefix(prefix string) {
	m.ChangedWhere(func(uri string) bool { return strings.HasPrefix(uri, prefix) })
}

// Watched reports whether anyone watches uri. It works after Close too.
func (m *Manager[S]) Watched(uri string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.watched(uri)
}

// watched is Watched with m.mu held.
func (m *Manager[S]) watched(uri string) bool {
	_, ok := m.watchers[uri]
	return ok
}

// Stats counts what the Manager holds: the subscriptions, the sessions
// holding any, and the URIs anyone watches. After every session has been
// dropped all three are zero. It works after Close too.
func (m *Manager[S]) Stats() (subscriptions, sessions, uris int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.count, len(m.bySession), len(m.watchers)
}

// Close ends the Manager's life. It ends every URI's window and drops the
// changes pending in them; later changes are ignored, and Subscribe
// returns ErrClosed. If a Deliver call is under way, Close waits for it to
// return (so Deliver must not wait for Close's caller), and no other
// Deliver call starts, not even for URIs pending in the same delivery. When Close returns, no
// goroutine the Manager started is running, and none will start.
//
// Close must not be called by Deliver, nor by a hook that Deliver
// causes: it would wait for itself.
//
// Subscriptions are kept: Unsubscribe, Drop, Watched and Stats work as
// before, and Unsubscribe and Drop still call OnUnwatch, so that a caller
// can clean up. Close may be called any number of times, concurrently
// too; every call waits as the first does.
func (m *Manager[S]) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	if m.windows != nil {
		m.windows.Close()
	}
}
