// Package delivery takes a registry's changes to the sessions that watch
// them: everything between "a change was reported" and "a session got its
// notification", in one place, with one record per session.
//
// A change travels in five steps, each in one file, read top-down:
//
//  1. Report (changes.go). The registry reports a changed URI (Changed),
//     a set of them (ChangedWhere: a prefix, a template), or a changed
//     list (ListChanged); so do the other replicas, through the bus. A URI
//     no session watches stops here.
//  2. Window (changes.go, with package internal/window). A URI's first
//     change after a quiet spell goes on at once; its changes within the
//     window that follows go on once, when the window ends. list_changed
//     waits for its own delay.
//  3. Fan out (changes.go). A due URI is handed to go-sdk's
//     Server.ResourceUpdated on every mounted server, and list_changed to
//     Options.Announce. go-sdk knows which of its sessions subscribed, and,
//     for a 2026-07-28 listen, the listen's request ID that names the
//     notification and routes it to the listen's stream; nothing else can
//     build that request. go-sdk passes each session's request to the
//     registry's sending middleware, which gives it to Queue.
//  4. Queue (send.go). The session's record keeps at most one
//     notification of each kind for each URI, in order. The records a
//     fan-out readied go to sending goroutines in batches of up to 64,
//     each sent in turn by its goroutine until its queue is empty: one
//     goroutine switch per batch, not per notification. A session whose
//     send blocks (a client that stops reading) keeps its goroutine;
//     the rest of its batch goes on from another within 10 ms, so it
//     holds up no other session longer than that.
//  5. Still allowed, then send (send.go). Before a resources/updated goes
//     out, Options.Allowed is asked again about the grant the subscription
//     was made with; a withdrawn one is not sent. The rest of go-sdk's
//     chain sends it, bounded as go-sdk bounds its own sends; a run of
//     them to a session whose GET stream a transport attached
//     (held.go) is flushed once, after the last. On a stream attached
//     as a WritableStream, a resources/updated whose params are the URI
//     alone is written by send itself, as go-sdk would write it.
//
// A session's record (sessions.go) holds its subscriptions, their grants,
// its send queue and how its end is watched; nothing else in mcpres keeps
// anything per session. Subscriptions are recorded and refused there
// (Subscribe, the per-session limit), and forgotten when the session ends.
// go-sdk holds a subscription only once the registry has recorded it: a
// change delivered in between that go-sdk did not send to the new
// subscriber is reported again when go-sdk's answer to the subscription
// has gone out (Confirm), so that none is lost; the report costs the
// URI's other watchers at most one more notification.
//
// A session of another server than go-sdk's, which an adapter serves the
// registry on (resource.WithCaller), is a Session: it is recorded as a
// go-sdk session is, but step 3 queues its notifications itself, from its
// record, step 5 sends them with its Updated, and its subscriptions are
// forgotten when its Done channel closes. list_changed reaches such a
// server through the function it attached (Attach).
//
// The package is internal to resource: it works on go-sdk's sessions and
// requests and on the registry's grants, which the leaf package subscribe
// (a Manager for any session type, for use without a registry) knows
// nothing of. Both share the windows (internal/window) and the ordered
// OnWatch and OnUnwatch calls (internal/hooks).
package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/hooks"
	"github.com/mcpres/mcpres/internal/window"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures a Delivery. A zero MaxPerSession or Window means the
// default of package subscribe, a zero ListChangedDelay no delay (the
// registry passes its own default); nil functions mean no call.
type Options[G any] struct {
	// MaxPerSession caps the URIs one session may watch: zero means
	// subscribe.DefaultMaxPerSession, subscribe.NoLimit none.
	MaxPerSession int
	// MaxPerCaller caps the subscriptions of one caller (Subscription's
	// Caller) across all its sessions, and Max those of every session;
	// zero sets no cap (the registry passes its defaults). The caller ""
	// is not capped on its own.
	MaxPerCaller, Max int
	// MaxBytesPerCaller and MaxBytes cap the same as MaxPerCaller and
	// Max do, by the bytes of the subscriptions' URIs (len(uri) each)
	// rather than by their number; zero sets no cap.
	MaxBytesPerCaller, MaxBytes int
	// Window is the shortest time between two deliveries of one URI: zero
	// means subscribe.DefaultWindow.
	Window time.Duration
	// ListChangedDelay is how long ListChanged waits, gathering more.
	ListChangedDelay time.Duration
	// OnWatch and OnUnwatch are called when a URI gains its first watcher
	// and loses its last, in order, with no lock held.
	OnWatch, OnUnwatch func(uri string)
	// OnShed, if not nil, is told, with no lock held, that the session
	// victim, of caller victimCaller, was ended at a total to make room
	// for newcomer.
	OnShed func(victim Key, victimCaller, newcomer string)
	// Allowed is asked, before a resources/updated goes to a session
	// whose subscription was recorded with a grant, whether the grant
	// still holds. It is called with no lock held.
	Allowed func(ctx context.Context, s Key, uri string, grant G) bool
	// Announce tells a mounted server's sessions that the list changed.
	Announce func(*mcp.Server)
	// Coalesced is told of each change that costs no notification of its
	// own; Sent of each notification sent; Count of the number of
	// subscriptions after each change, in order.
	Coalesced func(uri string)
	Sent      func(method, uri string)
	Count     func(subscriptions int)
	// Logger receives a warning for each notification not sent. Nil
	// means slog.Default().
	Logger *slog.Logger
}

// A Session is a client's session on another server than go-sdk's, as an
// adapter presents it (see resource.Session, which has the same methods).
type Session interface {
	// ID names the session in logs; "" for none.
	ID() string
	// Updated sends the client notifications/resources/updated of uri.
	Updated(ctx context.Context, uri string) error
	// Done is closed when the session ends.
	Done() <-chan struct{}
}

// A Closer is a Session that can be ended from the server's side, and
// whose end its owner reports itself (Ended): a total sheds it like a
// go-sdk session (see Subscribe), and no goroutine waits on its Done.
// The registry's own 2026-07-28 listen streams are Closers.
type Closer interface {
	Session
	// Close ends the session; it returns at once.
	Close()
}

// A Flusher is a Session whose Updated may leave notifications in a
// buffer: Flush sends them. send calls it once the session's queue is
// empty, so that a burst of notifications costs one write.
type Flusher interface {
	Flush() error
}

// A Key names the session a subscription is for: a go-sdk session (SDK)
// or another server's (Other). At most one is set; neither, for a
// request without a session.
type Key struct {
	SDK   *mcp.ServerSession
	Other Session
}

// IsZero reports whether k names no session.
func (k Key) IsZero() bool { return k.SDK == nil && k.Other == nil }

// ID is the ID of k's session, for logs; "" for none.
func (k Key) ID() string {
	switch {
	case k.SDK != nil:
		return k.SDK.ID()
	case k.Other != nil:
		return k.Other.ID()
	}
	return ""
}

// A Delivery records subscriptions and delivers changes to go-sdk
// sessions, and to other servers' (Session). Make one with New; Close
// ends it.
type Delivery[G any] struct {
	opts    Options[G]
	windows *window.Windows

	// ctx is the one notifications are sent with; Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	// idle takes a batch of records to send from dispatch to a sending
	// goroutine that waits for one (send.go).
	idle chan *batch[G]

	mu       sync.Mutex
	closed   bool
	uris     uriTable                          // every watched URI, by ID
	sessions map[*mcp.ServerSession]*record[G] // with subscriptions or notifications waiting
	others   map[Session]*record[G]            // the same, of other servers than go-sdk's; nil if none yet
	// watchers holds, by URI ID, the Session each record of others that
	// watches it is for: a change is queued for just those.
	watchers   map[uint32]map[*record[G]]Session
	count      int             // subscriptions
	bytes      int             // their URIs' bytes, len(uri) each
	subscribed int             // sessions holding any
	callers    map[string]held // by caller, but ""
	// pending holds, by URI ID, the records whose subscription to it
	// go-sdk does not hold yet (see Subscribe): a delivery marks just
	// those, and there are none most of the time.
	pending map[uint32][]*record[G]
	// gathering counts the fan-outs through go-sdk under way (gather),
	// and gathered holds the records they readied, to be dispatched
	// together.
	gathering  int
	gathered   []sendJob[G]
	hooks      hooks.Queue[hookCall]
	servers    []*mcp.Server // mounted
	attached   []*func()     // other servers' list_changed (Attach)
	swept      int           // records whose end the sweep watches
	stopSweep  chan struct{} // closed by Close; nil before the first sweep
	listTimer  *time.Timer   // set while a list_changed is pending
	listFiring sync.WaitGroup

	countMu sync.Mutex // orders Count calls

	streamsMu sync.Mutex
	streams   map[string]HeldStream // go-sdk sessions' GET streams, by session ID (AttachStream)
}

// held is what one caller holds: its subscriptions, and their URIs'
// bytes.
type held struct{ count, bytes int }

// A hookCall is a call of OnWatch (watch) or OnUnwatch.
type hookCall struct {
	uri   string
	watch bool
}

// New returns a Delivery configured by opts. It returns an error naming
// a negative MaxPerSession or Window.
func New[G any](opts Options[G]) (*Delivery[G], error) {
	var errs []error
	if opts.MaxPerSession < 0 {
		errs = append(errs, fmt.Errorf("negative MaxPerSession %d (subscribe.NoLimit sets no cap)", opts.MaxPerSession))
	}
	if opts.Window < 0 {
		errs = append(errs, fmt.Errorf("negative Window %v", opts.Window))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.MaxPerSession == 0 {
		opts.MaxPerSession = subscribe.DefaultMaxPerSession
	}
	if opts.Window == 0 {
		opts.Window = subscribe.DefaultWindow
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	d := &Delivery[G]{opts: opts, sessions: make(map[*mcp.ServerSession]*record[G]), idle: make(chan *batch[G])}
	d.windows = window.New(&d.mu, opts.Window, d.deliver, d.watched)
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d, nil
}

// Mount adds s to the servers that changes are delivered to and whose
// sessions' ends are watched.
func (d *Delivery[G]) Mount(s *mcp.Server) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !slices.Contains(d.servers, s) {
		d.servers = append(d.servers, s)
	}
}

// Attach adds listChanged to what ListChanged tells, as it tells a
// mounted server: an adapter's way to send list_changed on a server that
// is not go-sdk's. detach removes it.
func (d *Delivery[G]) Attach(listChanged func()) (detach func()) {
	fn := &listChanged
	d.mu.Lock()
	d.attached = append(d.attached, fn)
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if i := slices.Index(d.attached, fn); i >= 0 {
			d.attached = slices.Delete(d.attached, i, i+1)
		}
	}
}

// record returns k's record, nil if it has none. d.mu must be held.
func (d *Delivery[G]) record(k Key) *record[G] {
	if k.SDK != nil {
		return d.sessions[k.SDK]
	}
	return d.others[k.Other]
}

// setRecord makes rec k's record. d.mu must be held.
func (d *Delivery[G]) setRecord(k Key, rec *record[G]) {
	if k.SDK != nil {
		d.sessions[k.SDK] = rec
		return
	}
	if d.others == nil {
		d.others = make(map[Session]*record[G])
	}
	d.others[k.Other] = rec
}

// deleteRecord forgets k's record. d.mu must be held.
func (d *Delivery[G]) deleteRecord(k Key) {
	if k.SDK != nil {
		delete(d.sessions, k.SDK)
		return
	}
	delete(d.others, k.Other)
}

// mounted returns the mounted servers.
func (d *Delivery[G]) mounted() []*mcp.Server {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.servers)
}

// Close ends delivery: the windows and a pending list_changed are
// dropped, notifications waiting are dropped and those being sent are
// cancelled, and every subscription is forgotten (OnUnwatch is called for
// each URI). It waits for a delivery or announcement under way to return.
// Subscribe then returns subscribe.ErrClosed. Close is idempotent.
func (d *Delivery[G]) Close() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.closed = true
	if d.listTimer != nil {
		d.listTimer.Stop()
		d.listTimer = nil
	}
	if d.stopSweep != nil {
		close(d.stopSweep)
	}
	var all []Key
	for s, rec := range d.sessions {
		if rec.uris.Len() > 0 {
			all = append(all, Key{SDK: s})
		}
	}
	for s, rec := range d.others {
		if rec.uris.Len() > 0 {
			all = append(all, Key{Other: s})
		}
	}
	d.mu.Unlock()
	// A delivery or announcement under way still queues what go-sdk
	// sends (Queue refuses only once ctx is cancelled): a client that
	// stopped reading cannot hold Close up through go-sdk's inline send.
	// Then the sending goroutines drop what waits.
	d.listFiring.Wait()
	d.windows.Close()
	d.cancel()
	for _, s := range all {
		d.Drop(s)
	}
}
