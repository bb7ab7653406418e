// Package outbox is the sending half shared by mcpres's broker buses
// (natsbus, pgbus): a bounded queue that Publish fills without blocking,
// and one goroutine that sends what it holds, in batches, to the broker.
// A change that cannot be sent is dropped and counted; an outage is
// logged once when it starts and once when it ends, never per change.
package outbox

import (
	"cmp"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpres/mcpres/subscribe"
)

// Options configures an Outbox. Zero fields mean their defaults.
type Options struct {
	// Size caps the changes waiting to be sent; a change beyond it is
	// dropped. Zero or less means subscribe.DefaultQueueSize (the buses
	// refuse a negative size before they get here).
	Size int
	// MaxBatch caps the changes handed to one send. Zero means no cap:
	// a send takes everything queued.
	MaxBatch int
	// Logger receives the outage lines. Nil means slog.Default().
	Logger *slog.Logger
	// Name starts every log line, such as "natsbus".
	Name string
}

// Stats counts what an Outbox did.
type Stats struct {
	Sent    uint64 // changes handed to a send that succeeded
	Dropped uint64 // changes lost: the queue was full, or their send failed
}

// An Outbox queues changes and sends them from a goroutine of its own.
// Make one with New; Close stops it.
type Outbox struct {
	send func([]subscribe.Change) error
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	queue    []subscribe.Change
	closed   bool
	down     bool   // the broker is known to be unreachable
	bySend   bool   // down because a send failed (not because Down was called)
	full     bool   // the queue overflowed and has not drained since
	lost     uint64 // dropped since the outage began
	stats    Stats
	parked   bool // the sender waits on wake: Put must signal it
	wake     chan struct{}
	finished chan struct{}
}

// The sender's pace. After a quiet spell it is parked, and the first
// change wakes it at once. While changes keep coming it looks for more
// every tick instead of being woken for each: waking a goroutine can cost
// the caller of Put microseconds, a tick costs it nothing. It parks again
// after idleAfter without a change.
const (
	tick      = time.Millisecond
	idleAfter = 100 * time.Millisecond
)

// New returns an Outbox that sends with send, which is called from one
// goroutine at a time with a non-empty batch; an error from send means
// the batch was not sent: it is dropped, and the outage reported (see
// Down). New starts the sending goroutine.
func New(send func([]subscribe.Change) error, opts Options) *Outbox {
	if opts.Size <= 0 {
		opts.Size = subscribe.DefaultQueueSize
	}
	o := &Outbox{
		send:     send,
		opts:     opts,
		log:      cmp.Or(opts.Logger, slog.Default()),
		parked:   true,
		wake:     make(chan struct{}, 1),
		finished: make(chan struct{}),
	}
	go o.run()
	return o
}

// Put queues c to be sent. It never blocks: when the queue is full, or
// the Outbox closed, c is dropped and counted (a full queue is logged once
// until it drains).
func (o *Outbox) Put(c subscribe.Change) {
	o.mu.Lock()
	if o.closed {
		o.stats.Dropped++
		o.mu.Unlock()
		return
	}
	if len(o.queue) >= o.opts.Size {
		o.stats.Dropped++
		o.lost++
		warn := !o.full
		o.full = true
		o.mu.Unlock()
		if warn {
			o.log.Warn(o.opts.Name+": too many changes waiting to be sent; dropping changes until the queue drains (the other replicas miss them)",
				"queue", o.opts.Size)
		}
		return
	}
	o.queue = append(o.queue, c)
	signal := o.parked
	o.parked = false
	o.mu.Unlock()
	if signal {
		o.wake <- struct{}{} // never blocks: only a parked sender is signalled, once
	}
}

// Down reports that the broker is unreachable, for err. The first report
// of an outage is logged at Warn; later ones are not, until Up. An outage
// reported by Down ends only with Up; one that a failed send began also
// ends with the next send that succeeds.
func (o *Outbox) Down(err error) { o.goDown(err, false, 0) }

// goDown records an outage, reported by a failed send (bySend) that lost
// lost changes, or by Down.
func (o *Outbox) goDown(err error, bySend bool, lost int) {
	o.mu.Lock()
	first := !o.down
	switch {
	case first:
		o.down, o.lost, o.bySend = true, 0, bySend
	case !bySend:
		o.bySend = false // the bus says so: only Up ends it
	}
	o.stats.Dropped += uint64(lost)
	o.lost += uint64(lost)
	o.mu.Unlock()
	if first {
		o.log.Warn(o.opts.Name+": broker unreachable; this replica's subscribers are still notified, the other replicas' may miss changes until it is back",
			"error", err)
	}
}

// Up reports that the broker is reachable. After Down it logs, at Info,
// that the outage ended and how many changes were lost meanwhile.
func (o *Outbox) Up() {
	o.mu.Lock()
	was, lost := o.down, o.lost
	o.down, o.bySend = false, false
	o.mu.Unlock()
	if was {
		o.log.Info(o.opts.Name+": broker reachable again", "lost", lost)
	}
}

// Stats returns what o has sent and dropped so far.
func (o *Outbox) Stats() Stats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.stats
}

// Close stops o: changes still queued are sent with one last attempt,
// then the goroutine ends, and Close returns when it has. Later Puts are
// dropped. Close may be called more than once.
func (o *Outbox) Close() {
	o.mu.Lock()
	was := o.closed
	o.closed = true
	signal := o.parked && !was
	o.parked = false
	o.mu.Unlock()
	if signal {
		o.wake <- struct{}{}
	}
	<-o.finished
}

func (o *Outbox) run() {
	defer close(o.finished)
	for range o.wake {
		for idle := time.Duration(0); ; {
			o.mu.Lock()
			batch := o.take()
			closed := o.closed
			if len(batch) == 0 && (closed || idle >= idleAfter) {
				o.parked = true
				o.mu.Unlock()
				if closed {
					return
				}
				break
			}
			o.mu.Unlock()
			if len(batch) == 0 {
				time.Sleep(tick)
				idle += tick
				continue
			}
			idle = 0
			o.sendBatch(batch)
		}
	}
}

// take removes and returns the next batch. o.mu must be held.
func (o *Outbox) take() []subscribe.Change {
	n := len(o.queue)
	if n == 0 {
		o.full = false
		return nil
	}
	if o.opts.MaxBatch > 0 && n > o.opts.MaxBatch {
		n = o.opts.MaxBatch
	}
	batch := o.queue[:n:n]
	if n == len(o.queue) {
		o.queue = nil
	} else {
		o.queue = o.queue[n:]
	}
	return batch
}

func (o *Outbox) sendBatch(batch []subscribe.Change) {
	if err := o.send(batch); err != nil {
		o.goDown(err, true, len(batch))
		return
	}
	o.mu.Lock()
	o.stats.Sent += uint64(len(batch))
	up := o.down && o.bySend
	o.mu.Unlock()
	if up {
		o.Up()
	}
}
