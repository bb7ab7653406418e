package delivery

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/smallset"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A record is everything kept for one session: its subscriptions, the
// grant each was made with, its send queue, and how its end is watched.
// It exists from the session's first subscription until it ends (its end
// is watched from then on, as it was by go-sdk's own table), and while a
// notification waits for it. Guarded by Delivery.mu, but for the queue,
// guarded by sendMu (taken after Delivery.mu where both are): a session's
// goroutine takes only sendMu for each notification it sends (Queue,
// which holds Delivery.mu anyway, looks up its grant), and Delivery.mu
// once when its queue empties, so thousands of sessions sending at once
// do not queue on one lock for every send.
type record[G any] struct {
	uris    smallset.Set[uint32] // the IDs of the URIs it watches
	caller  string               // whose subscriptions they are (Subscription.Caller)
	grants  map[uint32]G         // by URI ID; nil if none was given
	pending map[uint32]bool      // subscriptions go-sdk does not hold yet: true if a change was missed
	sendMu  sync.Mutex
	queue   []queued[G] // queue[head:] are the notifications waiting, in order
	head    int
	sending bool // a goroutine sends the queue
	end     endState
}

// keptQueue is the most room an empty queue keeps for the next
// notifications: a session notified again and again then allocates
// nothing, and one that had a burst lets go of it.
const keptQueue = 4

// emptyQueue drops the notifications waiting. rec.sendMu must be held.
func (rec *record[G]) emptyQueue() {
	clear(rec.queue)
	rec.queue, rec.head = rec.queue[:0], 0
	if cap(rec.queue) > keptQueue {
		rec.queue = nil
	}
}

// An endState is how a session's end is watched (go-sdk behaviour 7 of
// resource/gosdk.go: go-sdk signals it only by returning from Wait; the
// session of another server, by closing its Done channel).
type endState uint8

const (
	unwatched endState = iota // its end is not watched: it never held a subscription, or it ended
	unseen                    // no sweep has seen a mounted server list it yet
	seen                      // a sweep has: it ended when none lists it
	waited                    // a goroutine waits for it (Wait, or Done)
)

// sweepEvery is how often the sweep compares subscribed sessions with
// those the mounted servers list.
const sweepEvery = time.Second

// A Subscription is what Subscribe records besides the session and URI.
type Subscription[G any] struct {
	// Grant, if Granted, is asked again before each notification (see
	// Options.Allowed).
	Grant   G
	Granted bool
	// Confirmed is false for a subscription go-sdk does not hold yet, and
	// whose holding Confirm will report: it is pending until then.
	Confirmed bool
	// Caller names who subscribes, for Options.MaxPerCaller: the first
	// subscription of a session names its caller for all the others.
	Caller string
}

// A LimitError is the error of a subscription refused by a cap: it
// wraps subscribe.ErrLimit and says which cap, and how high it is.
type LimitError struct {
	Cap   Cap
	Limit int
}

// A Cap is one of the caps a subscription must fit under.
type Cap uint8

const (
	CapSession     Cap = iota // Options.MaxPerSession
	CapCaller                 // Options.MaxPerCaller
	CapTotal                  // Options.Max
	CapCallerBytes            // Options.MaxBytesPerCaller
	CapTotalBytes             // Options.MaxBytes
)

func (e *LimitError) Error() string {
	switch e.Cap {
	case CapCallerBytes:
		return fmt.Sprintf("subscribed URIs too long: this caller's would exceed %d bytes across its sessions and listen streams, the most it may hold", e.Limit)
	case CapTotalBytes:
		return fmt.Sprintf("subscribed URIs too long: the server's would exceed %d bytes, the most it holds", e.Limit)
	case CapCaller:
		return fmt.Sprintf("too many subscriptions: this caller holds %d across its sessions and listen streams, the most it may", e.Limit)
	case CapTotal:
		return fmt.Sprintf("too many subscriptions: the server holds %d, the most it takes", e.Limit)
	}
	return fmt.Sprintf("too many subscriptions: this session (or listen stream) holds %d, the most it may", e.Limit)
}

func (e *LimitError) Unwrap() error { return subscribe.ErrLimit }

// limit returns the cap a new subscription of rec (nil for a session
// without one yet) by caller to a URI of size bytes would go over, or
// nil. d.mu must be held.
func (d *Delivery[G]) limit(rec *record[G], caller string, size int) error {
	mine := d.callers[caller]
	switch {
	case rec.len() >= d.opts.MaxPerSession:
		return &LimitError{Cap: CapSession, Limit: d.opts.MaxPerSession}
	case d.opts.Max > 0 && d.count >= d.opts.Max:
		return &LimitError{Cap: CapTotal, Limit: d.opts.Max}
	case d.opts.MaxBytes > 0 && d.bytes+size > d.opts.MaxBytes:
		return &LimitError{Cap: CapTotalBytes, Limit: d.opts.MaxBytes}
	case caller == "":
	case d.opts.MaxPerCaller > 0 && mine.count >= d.opts.MaxPerCaller:
		return &LimitError{Cap: CapCaller, Limit: d.opts.MaxPerCaller}
	case d.opts.MaxBytesPerCaller > 0 && mine.bytes+size > d.opts.MaxBytesPerCaller:
		return &LimitError{Cap: CapCallerBytes, Limit: d.opts.MaxBytesPerCaller}
	}
	return nil
}

// uncount counts n subscriptions of rec fewer, whose URIs hold size
// bytes. d.mu must be held.
func (d *Delivery[G]) uncount(rec *record[G], n, size int) {
	d.bytes -= size
	if rec.caller == "" {
		return
	}
	h := d.callers[rec.caller]
	h.count -= n
	h.bytes -= size
	if h.count <= 0 {
		delete(d.callers, rec.caller)
	} else {
		d.callers[rec.caller] = h
	}
}

// Subscribe records that s watches uri, as sub says. Subscribing again
// with a grant replaces the grant. It returns subscribe.ErrClosed after
// Close, and a *LimitError (which wraps subscribe.ErrLimit) if a new
// subscription would go over a cap; either way nothing changes.
//
// A new subscription not Confirmed is pending until Confirm: go-sdk
// holds a subscription, and so notifies it, only once its
// SubscribeHandler has returned (go-sdk behaviour 13 of resource/gosdk.go), so a change
// delivered in between would reach everyone but s. Such a change is
// reported again when the subscription is confirmed.
func (d *Delivery[G]) Subscribe(s Key, uri string, sub Subscription[G]) error {
	var shed Key
	var shedCaller string
	defer func() { d.closeShed(shed, shedCaller, sub.Caller) }()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return subscribe.ErrClosed
	}
	rec := d.record(s)
	id, known := d.uris.id(uri)
	if rec == nil || !known || !rec.uris.Has(id) {
		caller := sub.Caller
		if rec != nil && rec.uris.Len() > 0 {
			caller = rec.caller
		}
		err := d.limit(rec, caller, len(uri))
		if err != nil {
			// At a total, the caller that holds the most gives up a session
			// or listen stream, if it holds more than the newcomer would.
			if shed, shedCaller = d.shed(err, s, caller, len(uri)); !shed.IsZero() {
				err = d.limit(d.record(s), caller, len(uri))
			}
		}
		if err != nil {
			d.mu.Unlock()
			return err
		}
		rec = d.record(s)
		if rec == nil {
			rec = &record[G]{}
			d.setRecord(s, rec)
		}
		rec.caller = caller
		d.bytes += len(uri)
		if caller != "" {
			if d.callers == nil {
				d.callers = make(map[string]held)
			}
			h := d.callers[caller]
			h.count++
			h.bytes += len(uri)
			d.callers[caller] = h
		}
		var first bool
		if id, first = d.uris.watch(uri); first && d.opts.OnWatch != nil {
			d.hooks.Add(hookCall{uri: uri, watch: true})
		}
		if rec.uris.Len() == 0 {
			d.subscribed++
		}
		if rec.end == unwatched {
			d.watchEnd(s, rec)
		}
		rec.uris.Add(id)
		if s.Other != nil {
			d.watch(id, rec, s.Other)
		}
		d.count++
		if !sub.Confirmed {
			if rec.pending == nil {
				rec.pending = make(map[uint32]bool)
			}
			rec.pending[id] = false
			if d.pending == nil {
				d.pending = make(map[uint32][]*record[G])
			}
			d.pending[id] = append(d.pending[id], rec)
		}
	}
	if sub.Granted {
		if rec.grants == nil {
			rec.grants = make(map[uint32]G)
		}
		rec.grants[id] = sub.Grant
	}
	d.unlockAndCallHooks()
	d.counted()
	return nil
}

// len is how many URIs rec watches; a nil record, none.
func (rec *record[G]) len() int {
	if rec == nil {
		return 0
	}
	return rec.uris.Len()
}

// Unsubscribe forgets that s watches uri; it does nothing if s does not.
func (d *Delivery[G]) Unsubscribe(s Key, uri string) {
	d.mu.Lock()
	rec := d.record(s)
	id, known := d.uris.id(uri)
	if rec == nil || !known || !rec.uris.Has(id) {
		d.mu.Unlock()
		return
	}
	rec.uris.Remove(id)
	d.unwatchOther(id, rec)
	delete(rec.grants, id)
	d.settle(rec, id)
	d.unwatch(id)
	d.uncount(rec, 1, len(uri))
	if rec.uris.Len() == 0 {
		d.unsubscribed(s, rec)
	}
	d.unlockAndCallHooks()
	d.counted()
}

// Drop forgets every subscription of s: it ended.
func (d *Delivery[G]) Drop(s Key) {
	d.mu.Lock()
	if !d.drop(s) {
		d.mu.Unlock()
		return
	}
	d.unlockAndCallHooks()
	d.counted()
}

// drop forgets every subscription of s, and reports whether it held any.
// d.mu must be held.
func (d *Delivery[G]) drop(s Key) bool {
	rec := d.record(s)
	if rec == nil || rec.uris.Len() == 0 {
		return false
	}
	for id := range rec.pending {
		d.settle(rec, id)
	}
	size := 0
	rec.uris.Each(func(id uint32) {
		size += len(d.uris.byID[id])
		d.unwatchOther(id, rec)
		d.unwatch(id)
	})
	d.uncount(rec, rec.uris.Len(), size)
	rec.uris, rec.grants, rec.pending = smallset.Set[uint32]{}, nil, nil
	d.unsubscribed(s, rec)
	return true
}

// shed makes room at a total, which err says was reached, for a
// subscription of size bytes by caller on session s: the caller that
// holds the most (by count at the count's total, by bytes at the bytes')
// gives up its go-sdk session or listen stream that holds the most, if
// that caller would still hold more than caller does with the new
// subscription. It returns the session it dropped, which the caller
// closes once d.mu is released (closeShed), and its caller; or the zero
// Key. Sessions of other
// servers (Key.Other) are shed only if they are Closers.
// d.mu must be held.
func (d *Delivery[G]) shed(err error, s Key, caller string, size int) (Key, string) {
	le, ok := err.(*LimitError)
	if !ok || le.Cap != CapTotal && le.Cap != CapTotalBytes {
		return Key{}, ""
	}
	weight := func(h held) int {
		if le.Cap == CapTotalBytes {
			return h.bytes
		}
		return h.count
	}
	mine := d.callers[caller]
	mine.count, mine.bytes = mine.count+1, mine.bytes+size
	if caller != "" && (d.opts.MaxPerCaller > 0 && mine.count > d.opts.MaxPerCaller ||
		d.opts.MaxBytesPerCaller > 0 && mine.bytes > d.opts.MaxBytesPerCaller) {
		return Key{}, "" // the newcomer's own cap refuses it anyway
	}
	var top string
	for c, h := range d.callers {
		if c != caller && (top == "" || weight(h) > weight(d.callers[top]) || weight(h) == weight(d.callers[top]) && c < top) {
			top = c
		}
	}
	if top == "" || weight(d.callers[top]) <= weight(mine) {
		return Key{}, ""
	}
	var victim Key
	most := 0
	consider := func(k Key, rec *record[G]) {
		if rec.caller == top && k != s && rec.uris.Len() > most {
			victim, most = k, rec.uris.Len()
		}
	}
	for ss, rec := range d.sessions {
		consider(Key{SDK: ss}, rec)
	}
	for other, rec := range d.others {
		if _, ok := other.(Closer); ok {
			consider(Key{Other: other}, rec)
		}
	}
	if victim.IsZero() {
		return Key{}, ""
	}
	d.drop(victim)
	return victim, top
}

// closeShed closes the session victim, of victimCaller, that shed
// dropped for newcomer, if any: its client sees the session end (404), or
// its listen stream end. OnShed is told. d.mu must not be held.
func (d *Delivery[G]) closeShed(victim Key, victimCaller, newcomer string) {
	switch {
	case victim.SDK != nil:
		victim.SDK.Close()
	case victim.Other != nil:
		victim.Other.(Closer).Close()
	default:
		return
	}
	if d.opts.OnShed != nil {
		d.opts.OnShed(victim, victimCaller, newcomer)
	}
}

// Confirm says that go-sdk holds s's subscription to uri, which it
// notifies from now on. If a change to uri was delivered while the
// subscription was pending, and go-sdk did not send it to s (it held the
// subscription too late: see reached), it is reported again (Changed): s
// hears of it, and the URI's other watchers at most once more, at its
// window's end. It does nothing for a subscription that is not pending.
func (d *Delivery[G]) Confirm(s *mcp.ServerSession, uri string) {
	d.mu.Lock()
	missed := false
	if rec := d.sessions[s]; rec != nil && rec.pending != nil {
		if id, ok := d.uris.id(uri); ok {
			missed = d.settle(rec, id)
		}
	}
	d.mu.Unlock()
	if missed {
		d.Changed(uri)
	}
}

// settle ends rec's pending subscription to the URI id, if it is
// pending, and reports whether a change was missed meanwhile. d.mu must
// be held.
func (d *Delivery[G]) settle(rec *record[G], id uint32) (missed bool) {
	missed, pending := rec.pending[id]
	if !pending {
		return false
	}
	delete(rec.pending, id)
	if len(rec.pending) == 0 {
		rec.pending = nil
	}
	recs := d.pending[id]
	if i := slices.Index(recs, rec); i >= 0 {
		recs[i] = recs[len(recs)-1]
		recs[len(recs)-1] = nil
		recs = recs[:len(recs)-1]
	}
	if len(recs) == 0 {
		delete(d.pending, id)
	} else {
		d.pending[id] = recs
	}
	return missed
}

// missedWhilePending marks the pending subscriptions to uri, which is
// being delivered, as having missed a change. d.mu must be held.
func (d *Delivery[G]) missedWhilePending(uri string) {
	if len(d.pending) == 0 {
		return
	}
	id, ok := d.uris.id(uri)
	if !ok {
		return
	}
	for _, rec := range d.pending[id] {
		rec.pending[id] = true
	}
}

// reached notes that go-sdk sends rec's session a resources/updated of
// uri: if its subscription is pending, go-sdk held it in time, and the
// change it was marked as missing has reached it after all. d.mu must be
// held.
func (d *Delivery[G]) reached(rec *record[G], uri string) {
	if rec.pending == nil {
		return
	}
	if id, ok := d.uris.id(uri); ok {
		if _, pending := rec.pending[id]; pending {
			rec.pending[id] = false
		}
	}
}

// Ended reports that s, a Closer, has ended: its subscriptions and its
// record are dropped, as forget drops them.
func (d *Delivery[G]) Ended(s Key) { d.forget(s) }

// forget drops ended session s: its subscriptions, and its record unless
// notifications are still being sent to it (they fail, and the sending
// goroutine then releases it).
func (d *Delivery[G]) forget(s Key) {
	d.Drop(s)
	d.mu.Lock()
	if rec := d.record(s); rec != nil {
		rec.end = unwatched
		d.release(s, rec)
	}
	d.mu.Unlock()
}

// watch records that rec, the record of another server's session s,
// watches the URI id. d.mu must be held.
func (d *Delivery[G]) watch(id uint32, rec *record[G], s Session) {
	if d.watchers == nil {
		d.watchers = make(map[uint32]map[*record[G]]Session)
	}
	w := d.watchers[id]
	if w == nil {
		w = make(map[*record[G]]Session)
		d.watchers[id] = w
	}
	w[rec] = s
}

// unwatchOther forgets that rec watches the URI id, if it is the record
// of another server's session. d.mu must be held.
func (d *Delivery[G]) unwatchOther(id uint32, rec *record[G]) {
	w := d.watchers[id]
	if w == nil {
		return
	}
	delete(w, rec)
	if len(w) == 0 {
		delete(d.watchers, id)
	}
}

// unwatch counts one watcher of the URI id fewer, and queues OnUnwatch if
// it was the last. d.mu must be held.
func (d *Delivery[G]) unwatch(id uint32) {
	d.count--
	if uri, last := d.uris.unwatch(id); last && d.opts.OnUnwatch != nil {
		d.hooks.Add(hookCall{uri: uri, watch: false})
	}
}

// unsubscribed notes that rec, s's record, holds no more subscriptions,
// and drops it unless notifications wait. d.mu must be held.
func (d *Delivery[G]) unsubscribed(s Key, rec *record[G]) {
	d.subscribed--
	d.release(s, rec)
}

// release drops rec, s's record, if it holds nothing. d.mu must be held.
func (d *Delivery[G]) release(s Key, rec *record[G]) {
	if rec.uris.Len() > 0 || rec.end != unwatched || d.record(s) != rec {
		return
	}
	rec.sendMu.Lock()
	sending := rec.sending
	rec.sendMu.Unlock()
	if !sending {
		d.deleteRecord(s)
	}
}

// unlockAndCallHooks releases d.mu and makes the queued OnWatch and
// OnUnwatch calls in order, with no lock held. d.mu must be held.
func (d *Delivery[G]) unlockAndCallHooks() {
	d.hooks.UnlockAndRun(&d.mu, func(h hookCall) {
		if h.watch {
			d.opts.OnWatch(h.uri)
		} else {
			d.opts.OnUnwatch(h.uri)
		}
	})
}

// counted tells Options.Count the number of subscriptions, read and told
// under one lock, so that counts arrive in the order they were read.
func (d *Delivery[G]) counted() {
	if d.opts.Count == nil {
		return
	}
	d.countMu.Lock()
	defer d.countMu.Unlock()
	n, _, _ := d.Stats()
	d.opts.Count(n)
}

// watched reports whether any session watches uri. d.mu must be held.
func (d *Delivery[G]) watched(uri string) bool {
	_, ok := d.uris.ids[uri]
	return ok
}

// Stats counts the subscriptions, the sessions holding any, and the URIs
// watched.
func (d *Delivery[G]) Stats() (subscriptions, sessions, uris int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.count, d.subscribed, len(d.uris.ids)
}

// watchEnd starts watching for the end of s, whose record rec gained its
// first subscription: one sweep goroutine watches every such go-sdk
// session while there is any; a goroutine of its own waits for another
// server's session to close its Done channel. d.mu must be held.
func (d *Delivery[G]) watchEnd(s Key, rec *record[G]) {
	if _, ok := s.Other.(Closer); ok {
		rec.end = waited // its owner reports its end (Ended)
		return
	}
	if s.Other != nil {
		rec.end = waited
		done, closed := s.Other.Done(), d.ctx.Done()
		go func() {
			select {
			case <-done:
				d.forget(s)
			case <-closed: // Close drops every subscription
			}
		}()
		return
	}
	rec.end = unseen
	d.swept++
	if d.swept == 1 {
		if d.stopSweep == nil {
			d.stopSweep = make(chan struct{})
		}
		go d.sweep(d.stopSweep)
	}
}

// sweep, every sweepEvery, drops the subscriptions of the sessions a
// mounted server listed and lists no more, and hands those no sweep saw
// listed (one that ended within the interval, or of a server the registry
// is not mounted on) to a goroutine that waits for them. It returns when
// no session is left to sweep, or stop is closed.
func (d *Delivery[G]) sweep(stop chan struct{}) {
	t := time.NewTicker(sweepEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		live := make(map[*mcp.ServerSession]bool)
		for _, srv := range d.mounted() {
			for s := range srv.Sessions() {
				live[s] = true
			}
		}
		var ended []*mcp.ServerSession
		d.mu.Lock()
		for s, rec := range d.sessions {
			switch {
			case rec.end == unwatched || rec.end == waited:
			case live[s]:
				rec.end = seen
			case rec.end == seen:
				rec.end = unwatched // forget, below, drops it
				d.swept--
				ended = append(ended, s)
			default: // unseen, and not listed: ended already, or not ours to sweep
				rec.end = waited
				d.swept--
				go func() {
					s.Wait()
					d.forget(Key{SDK: s})
				}()
			}
		}
		done := d.swept == 0
		d.mu.Unlock()
		for _, s := range ended {
			d.forget(Key{SDK: s})
		}
		if done {
			// watchEnd starts another sweep for the next session: it sees
			// swept become 1 under the lock this one released.
			return
		}
	}
}

// A uriTable gives each watched URI a small ID, so that a session's
// subscriptions cost an ID each rather than a string, and counts its
// watchers. A URI no one watches leaves nothing behind; its ID is reused.
type uriTable struct {
	ids  map[string]watchedURI
	byID []string // by ID; "" for a free one
	free []uint32
}

// A watchedURI is a URI's ID and how many sessions watch it: in the map's
// value, where it costs no more room than the ID alone.
type watchedURI struct {
	id, count uint32
}

// id returns uri's ID, if anyone watches it.
func (t *uriTable) id(uri string) (uint32, bool) {
	w, ok := t.ids[uri]
	return w.id, ok
}

// watch counts one watcher more of uri and returns its ID.
func (t *uriTable) watch(uri string) (id uint32, first bool) {
	if w, ok := t.ids[uri]; ok {
		w.count++
		t.ids[uri] = w
		return w.id, false
	}
	if t.ids == nil {
		t.ids = make(map[string]watchedURI)
	}
	if n := len(t.free); n > 0 {
		id, t.free = t.free[n-1], t.free[:n-1]
		t.byID[id] = uri
	} else {
		id = uint32(len(t.byID))
		if n := len(t.byID); n == cap(t.byID) { // grow by a quarter, not double: a large table wastes little
			t.byID = slices.Grow(t.byID, max(16, n/4))
		}
		t.byID = append(t.byID, uri)
	}
	t.ids[uri] = watchedURI{id: id, count: 1}
	return id, true
}

// unwatch counts one watcher fewer of the URI id, and returns the URI and
// whether that was its last.
func (t *uriTable) unwatch(id uint32) (uri string, last bool) {
	uri = t.byID[id]
	w := t.ids[uri]
	if w.count--; w.count > 0 {
		t.ids[uri] = w
		return uri, false
	}
	delete(t.ids, uri)
	t.byID[id] = ""
	t.free = append(t.free, id)
	return uri, true
}
