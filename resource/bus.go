package resource

import (
	"sync"
	"time"

	"github.com/mcpres/mcpres/subscribe"
)

// listen starts taking the changes other replicas publish on the
// registry's bus, if it has one.
func (r *Registry) listen() error {
	bus := r.opts.Subscriptions.Bus
	if bus == nil {
		return nil
	}
	stop, err := bus.Listen(r.receive)
	if err != nil {
		return err
	}
	r.stopListening = stop
	return nil
}

// publish sends c to the other replicas, if the registry has a bus and
// is open.
func (r *Registry) publish(c subscribe.Change) {
	if bus := r.opts.Subscriptions.Bus; bus != nil && !r.closed.Load() {
		bus.Publish(c)
	}
}

// receive delivers a change another replica published to this replica's
// own subscribers, as the change methods do, without publishing it again.
// A change naming a template this registry does not hold is logged, once
// per template, and otherwise ignored: replicas should hold the same
// registrations.
func (r *Registry) receive(c subscribe.Change) {
	if r.opts.Observer != nil && c.Kind != subscribe.Resync {
		lag := time.Duration(-1)
		if !c.Sent.IsZero() {
			lag = time.Since(c.Sent)
		}
		r.opts.Observer.Event(Event{Kind: EventBusReceived, Lag: lag})
	}
	switch c.Kind {
	case subscribe.Updated:
		r.delivery.Changed(c.Value)
	case subscribe.UpdatedPrefix:
		r.delivery.ChangedPrefix(c.Value)
	case subscribe.UpdatedTemplate:
		if !r.changedTemplate(c.Value) && r.unknownTemplates.first(c.Value) {
			r.opts.Logger.Warn("resource: another replica reported a change to a template this registry does not hold; replicas should register the same templates",
				"template", c.Value)
		}
	case subscribe.ListChanged:
		r.delivery.ListChanged()
	case subscribe.Resync:
		r.resync(c.Value)
	}
}

// resync tells every session to read again what it watches, because the
// bus said this replica may have missed changes (why): one
// notifications/resources/updated per watched URI, coalesced with the
// others as usual, and list_changed to the sessions that take it, in
// every protocol era. After an outage a bus often says so several times
// within a moment (for its own connection, then for each other replica
// whose messages it finds a gap in), so resyncs are themselves
// coalesced: the first at once, and any number more within resyncEvery
// of it as one more when that interval ends, which covers whatever they
// reported. Each resync made is counted (ResyncStats, the Observer's
// EventResync) and logged at Warn once per episode: resyncs less than
// burst.DefaultQuiet (10 s) apart are one, and the next line counts those
// not logged.
func (r *Registry) resync(why string) {
	r.resyncMu.Lock()
	if r.resyncTimer != nil { // one is due at the interval's end; it covers this one
		r.resyncWhy = why
		r.resyncMu.Unlock()
		return
	}
	if wait := resyncEvery - time.Since(r.resyncAt); !r.resyncAt.IsZero() && wait > 0 {
		r.resyncWhy = why
		r.resyncTimer = time.AfterFunc(wait, r.trailingResync)
		r.resyncMu.Unlock()
		return
	}
	r.resyncAt = time.Now()
	r.resyncMu.Unlock()
	r.resyncNow(why)
}

// resyncEvery is the shortest time between two resyncs (see resync).
const resyncEvery = time.Second

// trailingResync makes the resync that resync put off.
func (r *Registry) trailingResync() {
	r.resyncMu.Lock()
	why := r.resyncWhy
	r.resyncTimer, r.resyncAt = nil, time.Now()
	r.resyncMu.Unlock()
	r.resyncNow(why)
}

// resyncNow tells every session to read again what it watches, and
// counts and logs it.
func (r *Registry) resyncNow(why string) {
	if r.closed.Load() {
		return
	}
	_, _, uris := r.delivery.Stats()
	r.delivery.ChangedPrefix("")
	r.delivery.ListChanged()
	r.resyncs.Add(1)
	r.resyncedURIs.Add(uint64(uris))
	if o := r.opts.Observer; o != nil {
		o.Event(Event{Kind: EventResync, Count: uris, Reason: why})
	}
	if begins, more := r.resyncLog.Refused("resync", time.Now()); begins {
		r.opts.Logger.Warn("resource: this replica may have missed changes other replicas published; every session was told to read again what it watches",
			"reason", why, "uris_notified", uris, "more_resyncs_in_previous_episode", more)
	}
}

// ResyncStats counts the times the bus said this replica may have
// missed changes (see subscribe.Resync), and the URIs whose watchers
// were then told to read them again, summed over those times.
func (r *Registry) ResyncStats() (resyncs, uris uint64) {
	return r.resyncs.Load(), r.resyncedURIs.Load()
}

// A reportedOnce remembers, up to maxReported, which values were
// reported, so that a log line is written once per value rather than per
// event; past the bound, every value counts as reported.
type reportedOnce struct {
	mu   sync.Mutex
	seen map[string]struct{}
}

// first reports whether v is reported for the first time.
func (o *reportedOnce) first(v string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.seen[v]; ok || len(o.seen) >= maxReported {
		return false
	}
	if o.seen == nil {
		o.seen = make(map[string]struct{})
	}
	o.seen[v] = struct{}{}
	return true
}
