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
// Each replica delivers the others' changes to its own subscribers; a
// replica's own messages come back to it and are skipped. Any other
// publisher may send a Message on the subject too, such as
//
//	nats pub mcpres.changes '{"changes":[{"uri":"db://users/42"}]}'
//
// and, since it has no "from", every replica delivers it.
//
// Delivery is at most once, which is what MCP's update notifications need
// (see subscribe.Bus): a change may be lost, and is never delivered twice.
// A loss is not silent, though: whenever its listener may have missed
// changes, a Bus delivers it a subscribe.Resync, on which a registry
// tells every session to read again what it watches (Stats.Resyncs
// counts them). That is
//
//   - when its own connection to NATS dropped, or NATS was unreachable
//     when Listen was called: once connected, and once the server has the
//     subscription again (a round trip after nats.go sends it), so that
//     every change published from then on is delivered, and the reads the
//     Resync prompts see every change made before;
//   - when another replica's messages show a gap. Each Bus numbers its
//     messages (subscribe.Message.Seq), and skips a number for changes it
//     dropped or could not send, so that these, and a message NATS did
//     not deliver, show as a number missing (see subscribe.Sequences).
//     The Resync follows the changes of the message after the gap. A Bus
//     that dropped changes after its last message sent sends an empty
//     numbered message as soon as it can (once connected again, say), so
//     that the gap shows then, not at its next change, which may be long
//     to come;
//   - when a replica it had not heard from before an outage is first
//     heard from after it with a number above 1: it cannot tell what it
//     missed;
//   - when nats.go reports the listener too slow, and drops messages for
//     it.
//
// Messages without "from" and "seq", such as a database trigger's, are
// delivered, and their losses cannot be told.
//
// Publish never waits for the network: changes are queued
// (Options.QueueSize) and sent by a goroutine of the Bus. The connection
// reconnects on its own, forever. While NATS is unreachable, Publish
// still returns at once, and the replica's own subscribers are still
// notified (by the registry, not the bus). Its changes for the other
// replicas are held in nats.go's reconnect buffer, and sent on
// reconnection. Which other replicas receive them depends on the order in
// which they all reconnect: those subscribed on the server again by then
// do; those that reconnect later do not, but they had an outage of their
// own, and their Resync covers these changes too. Changes that do not fit
// in the buffer are dropped, counted in Stats.Dropped, and seen by the
// others as a gap once this replica is back. Changes still held when the
// Bus is closed, before NATS is back, are lost, and no other replica can
// tell.
//
// The reconnect buffer is nats.go's, 8 MB, rather than none, because it
// turns an outage of one replica's connection alone (a network fault, a
// restart of the server it uses in a NATS cluster, while the other
// replicas stay on theirs) into changes the others receive late, instead
// of a Resync that makes every session of every other replica read
// everything again. nats.ReconnectBufSize in Options.NATS sets another
// size; -1 disables it, and the changes published while NATS is
// unreachable are then dropped at once, and the others resync.
//
// The outage is logged once when it begins (at Warn) and once when it
// ends (at Info, with the count of this replica's changes dropped
// meanwhile, not those the other replicas missed), never per change.
// Connect succeeds while NATS is down, so a replica starts without its
// broker.
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
	"unicode"

	"github.com/mcpres/mcpres/internal/outbox"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/nats-io/nats.go"
)

// DefaultSubject is the subject replicas share changes on when
// Options.Subject is empty.
const DefaultSubject = "mcpres.changes"

// Options configures a Bus. Zero fields, and a nil *Options, mean their
// defaults.
type Options struct {
	// Subject is the NATS subject the replicas of one registry share:
	// dot-separated non-empty tokens, without white space or the
	// wildcards * and >. Empty means DefaultSubject; another subject is
	// an error from Connect.
	Subject string
	// Logger receives the outage lines, and the messages and changes
	// skipped as malformed. Nil means slog.Default().
	Logger *slog.Logger
	// QueueSize caps the changes waiting to be sent; more are dropped
	// (and that is logged once until the queue drains). Zero means
	// subscribe.DefaultQueueSize; negative is an error from Connect.
	QueueSize int
	// NATS are further options for the connection (credentials, TLS, a
	// name, nats.ReconnectBufSize: see the package documentation for
	// what its default does), applied before the Bus's own, which
	// override any they set: its reconnection policy (retry the first
	// connection, reconnect forever every 250 ms or so) and its
	// connection event handlers.
	NATS []nats.Option
}

// A Bus is a subscribe.Bus over NATS. Make one with Connect; Close it
// after the registry using it is closed. Its methods may be called from
// any goroutine.
type Bus struct {
	nc      *nats.Conn
	subject string
	id      string // in every message this Bus sends: its own are skipped
	log     *slog.Logger
	out     *outbox.Outbox
	buf     []byte // send's message; used by the outbox's goroutine only

	// The messages' numbers (Message.Seq), given by send and reveal.
	seqMu    sync.Mutex
	seq      outbox.Sequence
	numbered uint64 // the outbox's Dropped at the last number given
	gap      bool   // a number was given to a message not sent, and none sent since

	mu        sync.Mutex // serializes Listen and Close
	listening bool
	lis       atomic.Pointer[listener] // the listener, if any
	closed    atomic.Bool

	received, malformed   atomic.Uint64 // incoming: changes delivered, messages skipped
	resyncs               atomic.Uint64 // Resyncs delivered
	discarded, tooLarge   atomic.Uint64 // outgoing: malformed or after Close, larger than a message
	badLogged, slowLogged atomic.Bool
	asyncErrs             atomic.Uint64
	oversize              uint64 // changes send found too large, for its log; send's only
}

// Stats counts what a Bus did.
type Stats struct {
	// Sent counts this replica's changes handed to nats.go: sent, or,
	// while the server is unreachable, held in its reconnect buffer and
	// sent on reconnection (unless the Bus is closed first).
	Sent uint64
	// Dropped counts this replica's changes lost: the queue was full,
	// NATS refused them (a batch refused in part counts whole), a change
	// was malformed or alone larger than a NATS message, or it was
	// published after Close.
	Dropped uint64
	// Received counts the changes of the other replicas (and other
	// publishers) delivered to the listener.
	Received uint64
	// Malformed counts the messages on the subject skipped as not a
	// subscribe.Message.
	Malformed uint64
	// Resyncs counts the subscribe.Resync changes delivered to the
	// listener: the times it may have missed changes (see the package
	// documentation).
	Resyncs uint64
}

// Connect returns a Bus on the NATS server at url (a comma-separated list
// of servers is accepted, as by nats.Connect), which it connects to in
// the background. It returns a nil Bus and an error for a malformed URL,
// a bad Options field, or a connection option nats.go refuses; not for a
// server that cannot be reached, which the Bus keeps trying (see the
// package documentation).
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
	// nats.go runs these handlers one at a time, in the order of the
	// events: the outbox sees Down and Up in order.
	natsOpts := append(append([]nats.Option(nil), o.NATS...),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if l := b.lis.Load(); l != nil {
				l.outage()
			}
			if !b.closed.Load() { // not Close's own disconnection
				b.out.Down(fmt.Errorf("lost the connection to NATS: %w", cmp.Or(err, errDisconnected)))
			}
		}),
		// Called for the first connection when it fails (the Bus then
		// keeps trying), and for every failed attempt to reconnect: the
		// outbox logs only the first of an outage.
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			if !b.closed.Load() {
				b.out.Down(fmt.Errorf("cannot reach NATS: %w", cmp.Or(err, errDisconnected)))
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			b.connected("the connection to NATS was lost: changes other replicas published meanwhile may be missed")
		}),
		// A first connection made late: a listener started before it
		// missed what was published until then.
		nats.ConnectHandler(func(*nats.Conn) {
			b.connected("NATS was unreachable when the listener started: changes other replicas published until it connected may be missed")
		}),
		nats.ErrorHandler(b.asyncError),
	)
	nc, err := nats.Connect(url, natsOpts...)
	if err != nil {
		b.out.Close()
		return nil, fmt.Errorf("natsbus: %w", err)
	}
	b.nc = nc
	return b, nil
}

var errDisconnected = errors.New("disconnected")

// connected is called, on nats.go's goroutine for connection events,
// when the connection is made or made again. nats.go has by then sent
// the listener's subscription, and what Publish gave it meanwhile (its
// reconnect buffer). The Bus tells its listener (why) it may have missed
// changes, once the server has the subscription, and reveals to the
// other replicas any of its own messages lost.
func (b *Bus) connected(why string) {
	b.out.Up()
	b.seqMu.Lock()
	b.reveal()
	b.seqMu.Unlock()
	l := b.lis.Load()
	if l == nil || !l.reconnected() {
		return
	}
	// A round trip after the subscription: once it is back, every change
	// published from then on is delivered, so that the reads the Resync
	// prompts miss nothing. Should the connection drop again meanwhile,
	// the Resync is early, and another follows the next reconnection.
	_ = b.nc.FlushTimeout(5 * time.Second)
	l.resync(why)
}

// checkSubject returns an error unless s is a subject a Bus may use.
func checkSubject(s string) error {
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" || strings.ContainsAny(tok, "*>") || strings.ContainsFunc(tok, unicode.IsSpace) {
			return fmt.Errorf("natsbus: subject %q: want dot-separated non-empty tokens without white space or the wildcards * and >", s)
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

// Publish queues c to be sent to the other replicas, and returns at once,
// whether NATS is reachable or not. A change that is not well formed (see
// subscribe.Change.MarshalJSON), or one published after Close, is
// dropped: counted in Stats, and the first malformed one logged.
func (b *Bus) Publish(c subscribe.Change) {
	if c.Kind < subscribe.Updated || c.Kind > subscribe.ListChanged || (c.Kind == subscribe.ListChanged && c.Value != "") {
		b.discarded.Add(1)
		if b.badLogged.CompareAndSwap(false, true) {
			b.log.Error("natsbus: dropped a malformed change (logged once)", "kind", c.Kind, "value", c.Value)
		}
		return
	}
	if b.closed.Load() {
		b.discarded.Add(1)
		return
	}
	b.out.Put(c)
}

// defaultMaxPayload is the largest message send makes before the first
// connection has told the server's limit: small enough for any server.
// (nats.go checks no message against the limit before it knows it, and
// a server closes the connection that sends a message over its limit.)
const defaultMaxPayload = 64 << 10

// send publishes batch as one or more messages, each no larger than the
// server's maximum payload and numbered (see next). A change too large
// for a message by itself is dropped and logged (the first, then every
// thousandth), and a number skipped for it. It returns the first error
// of nats.go, if any, having tried every message.
func (b *Bus) send(batch []subscribe.Change) error {
	b.seqMu.Lock()
	defer b.seqMu.Unlock()
	limit := int(b.nc.MaxPayload())
	if limit <= 0 {
		limit = defaultMaxPayload
	}
	var firstErr error
	tooLarge := 0
	for len(batch) > 0 {
		n, err := b.encode(batch, limit, b.next())
		if err != nil {
			return err // unreachable: Publish takes well-formed changes only
		}
		if n == 0 {
			b.gap = true // its number is skipped
			tooLarge++
			if b.oversize++; b.oversize == 1 || b.oversize%1000 == 0 {
				b.log.Error("natsbus: dropped a change larger than the NATS maximum payload (logged for the first, then every thousandth)",
					"kind", batch[0].Kind, "bytes", len(batch[0].Value), "max_payload", limit, "too_large_so_far", b.oversize)
			}
			batch = batch[1:]
			continue
		}
		if err := b.nc.Publish(b.subject, b.buf); err != nil {
			b.gap = true
			if firstErr == nil {
				firstErr = fmt.Errorf("publishing to NATS: %w", err)
			}
		} else {
			b.gap = false
		}
		batch = batch[n:]
	}
	if b.gap && firstErr == nil {
		b.reveal() // the batch ended with a change too large
	}
	if cap(b.buf) > limit {
		b.buf = nil // kept for the next batch only if it is no larger than a message
	}
	if firstErr == nil {
		// The outbox counts the batch as sent: Stats moves these to
		// Dropped. (A failed batch counts as dropped whole already.)
		b.tooLarge.Add(uint64(tooLarge))
	}
	return firstErr
}

// next returns the number of the next message: one more than the last,
// or two more if changes were dropped since (see outbox.Sequence), so
// that the other replicas' listeners see a gap. b.seqMu must be held.
func (b *Bus) next() uint64 {
	b.numbered = b.out.Stats().Dropped
	return b.seq.Next(b.numbered)
}

// reveal sends an empty message with the next number, if a number was
// skipped since the last message sent (a change dropped, a message not
// sent): the other replicas' listeners then see the gap at once, rather
// than at this replica's next change, which may never come. b.seqMu must
// be held.
func (b *Bus) reveal() {
	if !b.gap && b.out.Stats().Dropped == b.numbered {
		return
	}
	if _, err := b.encode(nil, defaultMaxPayload, b.next()); err != nil {
		return // unreachable: no change to be malformed
	}
	b.gap = b.nc.Publish(b.subject, b.buf) != nil
}

// encode sets b.buf to the message numbered seq of as many of batch's
// first changes as fit in limit bytes, and returns how many that is: zero
// if batch[0] alone does not fit. A batch that does not fit is cut in
// proportion to its excess, again until the rest fits.
func (b *Bus) encode(batch []subscribe.Change, limit int, seq uint64) (int, error) {
	n := len(batch)
	sent := time.Now()
	for {
		data, err := subscribe.Message{From: b.id, Seq: seq, Sent: sent, Changes: batch[:n]}.AppendJSON(b.buf[:0])
		if err != nil {
			return 0, fmt.Errorf("natsbus: %w", err)
		}
		b.buf = data
		if len(data) <= limit {
			return n, nil
		}
		if n == 1 {
			return 0, nil
		}
		n = min(max(int(int64(n)*int64(limit)/int64(len(data))), 1), n-1)
	}
}

// Listen's refusals.
var (
	errListening = errors.New("natsbus: this Bus already has a listener")
	errClosed    = errors.New("natsbus: Bus closed")
)

// Listen subscribes to the subject and calls deliver with each change of
// every message another replica (or another publisher) sends, in order,
// and with a subscribe.Resync whenever the listener may have missed
// changes (see the package documentation), one call at a time, from
// goroutines of nats.go, until stop is called. When NATS is reachable,
// the server has the subscription when Listen returns; when it is not,
// the subscription is made on connection, and a Resync follows.
// Messages this Bus sent are skipped, and malformed ones skipped and
// logged (the first, then every thousandth). stop unsubscribes and waits
// for a deliver call under way to return; calling it again does nothing,
// and deliver must not call it. Listen returns a nil stop and an error if
// deliver is nil, the Bus already has a listener (until its stop) or is
// closed, or nats.go refuses the subscription.
func (b *Bus) Listen(deliver func(subscribe.Change)) (stop func(), err error) {
	if deliver == nil {
		return nil, errors.New("natsbus: Listen with a nil deliver")
	}
	b.mu.Lock()
	switch {
	case b.closed.Load():
		b.mu.Unlock()
		return nil, errClosed
	case b.listening:
		b.mu.Unlock()
		return nil, errListening
	}
	b.listening = true
	b.mu.Unlock()

	l := &listener{bus: b, deliver: deliver}
	// Held until the listener knows whether NATS is reachable: a
	// connection made meanwhile finds it out then (see connected).
	l.mu.Lock()
	b.lis.Store(l)
	sub, err := b.nc.Subscribe(b.subject, l.handle)
	if err != nil {
		l.stopped.Store(true)
		b.lis.CompareAndSwap(l, nil)
		l.mu.Unlock()
		b.mu.Lock()
		b.listening = false
		b.mu.Unlock()
		if errors.Is(err, nats.ErrConnectionClosed) {
			return nil, errClosed
		}
		return nil, fmt.Errorf("natsbus: subscribing to %q: %w", b.subject, err)
	}
	up := b.nc.IsConnected()
	if !up {
		// The subscription is made on connection; what is published
		// until then is lost to it.
		l.outage()
	}
	l.mu.Unlock()
	if up {
		// A round trip, so that a change published once Listen has
		// returned is not missed. Should it time out, the subscription
		// still takes effect when the server reads it.
		_ = b.nc.FlushTimeout(5 * time.Second)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.stopped.Store(true) // for the rest of a message being delivered, and those nats.go dequeued already
			_ = sub.Unsubscribe() // fails only once the connection is closed: no more messages then
			l.mu.Lock()           // waits for a deliver call under way
			l.mu.Unlock()
			b.lis.CompareAndSwap(l, nil)
			b.mu.Lock()
			b.listening = false
			b.mu.Unlock()
		})
	}, nil
}

// A listener delivers the changes of the messages its subscription
// receives, and a Resync when it may have missed some.
type listener struct {
	bus     *Bus
	deliver func(subscribe.Change)
	seqs    subscribe.Sequences

	mu      sync.Mutex // held while delivering, one call at a time; stop waits for it
	stopped atomic.Bool
	missed  atomic.Bool // not subscribed on the server for a while: a Resync is due on connection
}

// outage records that the listener is not subscribed on the server, from
// now until the connection is made again.
func (l *listener) outage() {
	l.seqs.Outage()
	l.missed.Store(true)
}

// reconnected reports whether the listener missed a time without its
// subscription, and forgets it.
func (l *listener) reconnected() bool {
	l.mu.Lock() // Listen holds it until it has recorded an outage
	defer l.mu.Unlock()
	return l.missed.Swap(false)
}

// resync delivers a Resync saying why, unless the listener is stopped.
func (l *listener) resync(why string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped.Load() {
		return
	}
	l.bus.resyncs.Add(1)
	l.deliver(subscribe.Change{Kind: subscribe.Resync, Value: why})
}

// handle is the subscription's message handler: nats.go calls it from
// one goroutine, a message at a time. A gap in the sender's numbers
// before the message is told, after its changes, with a Resync.
func (l *listener) handle(msg *nats.Msg) {
	b := l.bus
	m, err := subscribe.ParseMessage(msg.Data)
	if err != nil {
		if n := b.malformed.Add(1); n == 1 || n%1000 == 0 {
			b.log.Warn("natsbus: skipped a malformed message (logged for the first, then every thousandth)",
				"subject", msg.Subject, "malformed_so_far", n, "error", err)
		}
		return
	}
	if m.From == b.id {
		return // this replica's own: its subscribers were notified already
	}
	lost, why := l.seqs.Check(m)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range m.Changes {
		if l.stopped.Load() {
			return
		}
		b.received.Add(1)
		l.deliver(c)
	}
	if lost && !l.stopped.Load() {
		b.resyncs.Add(1)
		l.deliver(subscribe.Change{Kind: subscribe.Resync, Value: why})
	}
}

// asyncError logs what NATS reports outside any call: a listener too slow
// for the changes arriving (once per Bus: NATS then drops changes for
// it, and the listener is delivered a Resync), or another error, such as
// a permission refused (the first, then every thousandth).
func (b *Bus) asyncError(_ *nats.Conn, sub *nats.Subscription, err error) {
	if errors.Is(err, nats.ErrSlowConsumer) {
		if b.slowLogged.CompareAndSwap(false, true) {
			b.log.Warn("natsbus: the listener does not keep up; NATS drops changes for it (logged once)", "subject", b.subject)
		}
		// nats.go reports it once a spell: a change dropped later in the
		// spell shows as a gap at its sender's next message.
		if l := b.lis.Load(); l != nil && sub != nil {
			l.resync("the listener did not keep up, and NATS dropped changes for it")
		}
		return
	}
	if n := b.asyncErrs.Add(1); n == 1 || n%1000 == 0 {
		b.log.Error("natsbus: NATS reported an error (logged for the first, then every thousandth)",
			"subject", b.subject, "errors_so_far", n, "error", err)
	}
}

// Stats returns what b has sent, dropped, received and skipped so far.
func (b *Bus) Stats() Stats {
	o := b.out.Stats()
	tooLarge := b.tooLarge.Load()
	return Stats{
		Sent:      o.Sent - min(tooLarge, o.Sent),
		Dropped:   o.Dropped + tooLarge + b.discarded.Load(),
		Received:  b.received.Load(),
		Malformed: b.malformed.Load(),
		Resyncs:   b.resyncs.Load(),
	}
}

// Close sends what is queued, with one last attempt (and an empty
// numbered message, if changes were dropped after the last message sent,
// so that the other replicas see the gap), then flushes the
// connection (for at most a second, if NATS is reachable) and closes it.
// Later Publishes are dropped, and Listen returns an error. Close does
// not wait for a listener: stop it first (a registry's Close does); the
// connection's end stops its deliveries. Close may be called more than
// once, and returns nil.
func (b *Bus) Close() error {
	b.mu.Lock()
	was := b.closed.Swap(true)
	b.mu.Unlock()
	if was {
		return nil
	}
	b.out.Close()
	b.seqMu.Lock()
	b.reveal() // changes dropped at the end, if any
	b.seqMu.Unlock()
	if b.nc.IsConnected() {
		_ = b.nc.FlushTimeout(time.Second)
	}
	b.nc.Close()
	return nil
}
