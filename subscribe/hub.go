package subscribe

import (
	"errors"
	"sync"
	"time"
)

// A Hub connects replicas that run in one process: each gets a Bus with
// Hub.Bus, and a change one publishes is delivered to every other one
// that listens. Each change arrives with Sent set to when it was
// published. It is what a test of several replicas uses, and what a
// program that runs several registries (one per tenant, say) may use to
// share changes between them without a broker.
//
// Delivery follows the Bus contract: never to the publisher, at most
// once, and at once, on a goroutine of the Hub's own per listener, so a
// slow listener delays neither the publisher nor the others. A listener
// whose queue holds QueueSize changes loses the next ones until it
// catches up (see Dropped), and is then delivered a Resync: it may have
// missed changes. The zero Hub is ready to use.
type Hub struct {
	// QueueSize caps the changes waiting for one listener. Zero means
	// DefaultQueueSize.
	QueueSize int

	mu        sync.Mutex
	endpoints []*hubBus
	dropped   uint64
}

// DefaultQueueSize is the number of changes a Hub holds for a listener
// that has not taken them yet, when Hub.QueueSize is zero.
const DefaultQueueSize = 10_000

// Bus returns a new Bus on h: what it publishes reaches every other Bus
// of h that listens.
func (h *Hub) Bus() Bus {
	b := &hubBus{hub: h}
	h.mu.Lock()
	h.endpoints = append(h.endpoints, b)
	h.mu.Unlock()
	return b
}

// Dropped returns the number of changes the Hub could not deliver
// because a listener's queue was full.
func (h *Hub) Dropped() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dropped
}

// A hubBus is one replica's Bus on a Hub.
type hubBus struct {
	hub *Hub

	// Guarded by hub.mu.
	queue   []Change
	missed  bool          // a change was dropped since the queue was last taken
	wake    chan struct{} // signalled when queue grows; nil when not listening
	stopped chan struct{} // closed when the delivering goroutine has returned
}

func (b *hubBus) Publish(c Change) {
	h := b.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	size := h.QueueSize
	if size <= 0 {
		size = DefaultQueueSize
	}
	c.Sent = time.Now()
	for _, e := range h.endpoints {
		if e == b || e.wake == nil {
			continue
		}
		if len(e.queue) >= size {
			h.dropped++
			e.missed = true
			continue
		}
		e.queue = append(e.queue, c)
		select {
		case e.wake <- struct{}{}:
		default:
		}
	}
}

// errListening is returned by a second Listen.
var errListening = errors.New("subscribe: this Bus already has a listener")

func (b *hubBus) Listen(deliver func(Change)) (stop func(), err error) {
	h := b.hub
	h.mu.Lock()
	if b.wake != nil {
		h.mu.Unlock()
		return nil, errListening
	}
	wake, done, stopped := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	b.wake, b.stopped = wake, stopped
	h.mu.Unlock()

	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			case <-wake:
			}
			h.mu.Lock()
			batch := b.queue
			if b.missed {
				// After what was queued: the listener's watchers read again
				// once it has caught up.
				batch = append(batch, Change{Kind: Resync, Value: "the Hub's queue for this listener was full: changes were dropped"})
				b.missed = false
			}
			b.queue = nil
			h.mu.Unlock()
			for _, c := range batch {
				select {
				case <-done:
					return
				default:
				}
				deliver(c)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-stopped
			h.mu.Lock()
			b.wake, b.queue, b.missed = nil, nil, false
			h.mu.Unlock()
		})
	}, nil
}
