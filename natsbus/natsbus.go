// Package natsbus shares changes between the replicas of an mcpres server
// through NATS: a subscribe.Bus for resource.SubscriptionOptions.Bus.
//
//	bus, err := natsbus.Connect("nats://nats:4222", nil)
//	if err != nil {
//		log.Fatal(err) // a bad URL or option; an unreachable broker is not an error
//	}
//	defer bus.Close()
//	reg, err := resource.NewRegistry(&resource.Options{
//		Subscriptions: resource.SubscriptionOptions{Bus: bus},
//	})
//
// Every replica connects to the same NATS and subject (DefaultSubject,
// or Options.Subject: one per registry, such as one per service), and
// publishes there the changes its registry reports, as subscribe.Message
// JSON, several to a message when they come faster than they are sent.
// Each replica delivers the others' changes to its own subscribers;
// a replica's own messages come back to it and are skipped. Any other
// publisher may send a Message on the subject too (without "from": every
// replica then delivers it).
//
// Delivery is at most once, which is what MCP's update notifications need
// (see subscribe.Bus). Publish never waits for the network: changes are
// queued (Options.QueueSize) and sent by a goroutine of the Bus. The
// connection reconnects on its own, forever. While NATS is unreachable,
// Publish still returns at once, the replica's own subscribers are still
// notified (by the registry, not the bus), and changes for the other
// replicas are held in nats.go's reconnect buffer (8 MB by default) and
// sent on reconnection, or dropped once it is full; the outage is logged
// once when it begins and once when it ends, never per change. Connect
// succeeds while NATS is down, so a replica starts without its broker.
package natsbus

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpres/mcpres/internal/outbox"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/nats-io/nats.go"
)

// DefaultSubject is the subject replicas share changes on when
// Options.Subject is empty.
const DefaultSubject = "mcpres.changes"

// Options configures a Bus. The zero value, and a nil *Options, mean
// every default.
type Options struct {
	// Subject is the NATS subject the replicas of one registry share:
	// dot-separated non-empty tokens, without spaces or the wildcards *
	// and >. Empty means DefaultSubject.
	Subject string
	// Logger receives the outage lines and malformed messages. Nil means
	// slog.Default().
	Logger *slog.Logger
	// QueueSize caps the changes waiting to be sent; more are dropped
	// (and logged once). Zero means subscribe.DefaultQueueSize; negative
	// is an error.
	QueueSize int
	// NATS are further options for the connection (credentials, TLS, a
	// name), applied before the Bus's own: its reconnection policy and
	// its connection event handlers.
	NATS []nats.Option
}

// A Bus is a subscribe.Bus over NATS. Make one with Connect; Close it
// when the registry using it is closed.
type Bus struct {
	nc      *nats.Conn
	subject string
	id      string // in every message this Bus sends: its own are skipped
	log     *slog.Logger
	out     *outbox.Outbox

	mu        sync.Mutex
	listening bool
	closed    bool

	received, malformed atomic.Uint64
	slowLogged          atomic.Bool
}

// Stats counts what a Bus did.
type Stats struct {
	// Sent and Dropped count this replica's changes: handed to NATS, and
	// lost because the queue was full or NATS refused them.
	Sent, Dropped uint64
	// Received counts the other replicas' changes delivered to the
	// listener, and Malformed the messages skipped as not a
	// subscribe.Message.
	Received, Malformed uint64
}

// Connect returns a Bus on the NATS server at url (a comma-separated list
// of servers is accepted, as by nats.Connect). It returns an error for a
// malformed URL, a bad Options field, or a connection option NATS
// refuses; not for a server that cannot be reached, which the Bus keeps
// trying (see the package documentation).
func Connect(url string, opts *Options) (*Bus, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Subject = cmp.Or(o.Subject, DefaultSubject)
	if err := checkSubject(o.Subject); err != nil {
		return nil, err
	}
	if o.QueueSize < 0 {
		return nil, fmt.Errorf("natsbus: negative QueueSize %d", o.QueueSize)
	}
	if strings.TrimSpace(url) == "" {
		return nil, errors.New("natsbus: empty NATS URL")
	}
	b := &Bus{subject: o.Subject, id: newID(), log: cmp.Or(o.Logger, slog.Default())}
	b.out = outbox.New(b.send, outbox.Options{Size: o.QueueSize, Logger: b.log, Name: "natsbus"})
	natsOpts := append(append([]nats.Option(nil), o.NATS...),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if b.isClosed() {
				return // Close's own disconnection
			}
			if err == nil {
				err = errors.New("disconnected")
			}
			b.out.Down(fmt.Errorf("NATS: %w", err))
		}),
		nats.ReconnectHandler(func(*nats.Conn) { b.out.Up() }),
		nats.ConnectHandler(func(*nats.Conn) { b.out.Up() }), // a first connection made late
		nats.ErrorHandler(b.asyncError),
	)
	nc, err := nats.Connect(url, natsOpts...)
	if err != nil {
		b.out.Close()
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	b.nc = nc
	if !nc.IsConnected() {
		b.out.Down(fmt.Errorf("NATS at %s not reachable yet", url))
	}
	return b, nil
}

// checkSubject reports whether s is a subject a Bus may publish on.
func checkSubject(s string) error {
	for _, tok := range strings.Split(s, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, " \t\r\n*>") {
			return fmt.Errorf("natsbus: subject %q: want dot-separated tokens without spaces or wildcards", s)
		}
	}
	return nil
}

// newID returns a random identifier of 16 hex digits.
func newID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

// Publish queues c to be sent to the other replicas, and returns at once.
func (b *Bus) Publish(c subscribe.Change) { b.out.Put(c) }

// send publishes batch as one or more messages of at most the server's
// maximum payload. A change that alone exceeds it is dropped and logged.
func (b *Bus) send(batch []subscribe.Change) error {
	max := int(b.nc.MaxPayload())
	if max <= 0 {
		max = 1 << 20 // not connected yet: NATS's default
	}
	var firstErr error
	for len(batch) > 0 {
		data, n, err := b.encode(batch, max)
		if err != nil {
			return err
		}
		if n == 0 { // batch[0] alone is too large
			b.log.Error("natsbus: a change is larger than the NATS maximum payload; dropped", "kind", batch[0].Kind, "bytes", len(batch[0].Value), "max_payload", max)
			batch = batch[1:]
			continue
		}
		if err := b.nc.Publish(b.subject, data); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("NATS publish: %w", err)
		}
		batch = batch[n:]
	}
	return firstErr
}

// encode returns the message of as many of batch's first changes as fit
// in max bytes, and how many that is.
func (b *Bus) encode(batch []subscribe.Change, max int) ([]byte, int, error) {
	n := len(batch)
	for {
		data, err := subscribe.Message{From: b.id, Changes: batch[:n]}.AppendJSON(nil)
		if err != nil {
			return nil, 0, err
		}
		if len(data) <= max {
			return data, n, nil
		}
		if n == 1 {
			return nil, 0, nil
		}
		n /= 2
	}
}

// errListening and errClosed are Listen's refusals.
var (
	errListening = errors.New("natsbus: this Bus already has a listener")
	errClosed    = errors.New("natsbus: Bus closed")
)

// Listen subscribes to the subject and calls deliver with each change of
// every message another replica (or another publisher) sends, in order,
// one call at a time, until stop; when NATS is reachable, the server has
// the subscription when Listen returns. Messages this Bus sent are skipped, and
// malformed ones logged (the first, then every thousandth) and skipped.
// stop unsubscribes and waits for a deliver call under way. Listen
// returns an error if the Bus already has a listener, is closed, or NATS
// refuses the subscription.
func (b *Bus) Listen(deliver func(subscribe.Change)) (stop func(), err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return nil, errClosed
	case b.listening:
		return nil, errListening
	}
	var mu sync.Mutex // held while delivering; stop takes it
	stopped := false
	sub, err := b.nc.Subscribe(b.subject, func(msg *nats.Msg) {
		m, err := subscribe.ParseMessage(msg.Data)
		if err != nil {
			if n := b.malformed.Add(1); n == 1 || n%1000 == 0 {
				b.log.Warn("natsbus: skipped a malformed message", "subject", msg.Subject, "malformed_so_far", n, "error", err)
			}
			return
		}
		if m.From == b.id {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for _, c := range m.Changes {
			if stopped {
				return
			}
			b.received.Add(1)
			deliver(c)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: subscribing to %q: %w", b.subject, err)
	}
	if b.nc.IsConnected() {
		// The server has the subscription when Listen returns: a change
		// published afterwards is not missed. (While disconnected, it is
		// sent on reconnection.)
		b.nc.FlushTimeout(5 * time.Second)
	}
	b.listening = true
	var once sync.Once
	return func() {
		once.Do(func() {
			sub.Unsubscribe()
			mu.Lock()
			stopped = true
			mu.Unlock()
			b.mu.Lock()
			b.listening = false
			b.mu.Unlock()
		})
	}, nil
}

// asyncError logs what NATS reports outside any call: a listener too slow
// for the changes arriving (the first time), or a permission error.
func (b *Bus) asyncError(_ *nats.Conn, sub *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrSlowConsumer) {
		if b.slowLogged.CompareAndSwap(false, true) {
			b.log.Warn("natsbus: the listener does not keep up; NATS drops changes for it (logged once)", "subject", b.subject)
		}
		return
	}
	b.log.Error("natsbus: NATS error", "error", err)
}

func (b *Bus) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// Stats returns what b has sent, dropped and received so far.
func (b *Bus) Stats() Stats {
	o := b.out.Stats()
	return Stats{Sent: o.Sent, Dropped: o.Dropped, Received: b.received.Load(), Malformed: b.malformed.Load()}
}

// Close sends what is queued, once, and closes the connection, flushing
// it (for at most a second). It does not stop a listener: stop it first
// (a registry's Close does). Close may be called more than once, and
// returns nil.
func (b *Bus) Close() error {
	b.mu.Lock()
	was := b.closed
	b.closed = true
	b.mu.Unlock()
	if was {
		return nil
	}
	b.out.Close()
	if b.nc.IsConnected() {
		b.nc.FlushTimeout(time.Second)
	}
	b.nc.Close()
	return nil
}
