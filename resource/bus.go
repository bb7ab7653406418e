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
	if r.opts.Observer != nil {
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
	}
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
