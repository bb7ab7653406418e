// Package pgbus shares changes between the replicas of an mcpres server
// through Postgres LISTEN/NOTIFY, for deployments that have Postgres and
// no message broker: a subscribe.Bus for resource.SubscriptionOptions.Bus.
//
//	bus, err := pgbus.Open(ctx, "postgres://app@db/app", nil)
//	if err != nil {
//		log.Fatal(err) // a bad DSN, or the database refused the first connection
//	}
//	defer bus.Close()
//	reg, err := resource.NewRegistry(&resource.Options{
//		Subscriptions: resource.SubscriptionOptions{Bus: bus},
//	})
//
// Every replica opens a Bus on the same database and channel
// (DefaultChannel, or Options.Channel). A Bus holds two connections: one
// that sends the changes its registry reports, with pg_notify, several to
// a notification when they come faster than they are sent, and one that
// LISTENs and delivers the other replicas' changes. A replica's own
// notifications come back to it and are skipped.
//
// # Wire format
//
// A notification's payload is a subscribe.Message in JSON:
//
//	{"from":"9f86d081884c7d65","seq":42,"sent":"2026-11-25T10:00:00.123456Z","changes":[{"uri":"db://users/42"}]}
//
// where "from" is the sending Bus's id, random at Open, and "seq" numbers
// its messages from 1, one more for each message whether it was sent or
// not, and one more again when changes were dropped before they could be
// put in one: a listener that sees a number skipped knows it lost some.
// A Bus from before numbered messages refuses "seq", and skips such
// messages as malformed: upgrade every replica together. Anything else
// that can run SQL may publish, a trigger say, leaving "from" (and
// "seq", "sent") out so that every replica delivers it:
//
//	SELECT pg_notify('mcpres_changes', '{"changes":[{"uri":"db://users/42"}]}');
//
// NOTIFY refuses payloads of 8,000 bytes or more. A Bus splits a batch of
// changes into messages of at most MaxPayload bytes; a single change too
// large for one (a URI of 10 kB, say) is cut into chunks sent in one
// transaction, each a payload of its own:
//
//	#<from>:<seq>:<i>/<n>:<bytes i of the message's JSON>
//
// where from is the sending Bus's id, seq its count of chunked messages
// (not the message's number, which is inside the joined message), and i
// runs from 1 to n. The listener joins the n chunks of a (from, seq)
// before it parses the message. A chunked message lost in part is dropped
// whole; a listener holds at most a few unfinished ones, and at most
// maxChunked bytes of each.
//
// # Delivery
//
// At most once, which is what MCP's update notifications need (see
// subscribe.Bus), and never silently stale: when this replica may have
// missed changes, its listener is delivered a subscribe.Resync, and the
// registry has every session read again what it watches. Publish never
// waits for the database: changes are queued (Options.QueueSize) and
// sent by a goroutine of the Bus.
//
// A change is lost to the other replicas when this replica's queue is
// full or its send fails. Their listeners see the gap in its numbers and
// resync: at its next message, or as soon as its own listener is back
// after an outage during which its sends failed (it then sends an empty
// message to show the gap, for the replicas that saw no outage).
//
// When Postgres stops, restarts, or the network to it is cut:
//
//   - The listening connection fails at once (Postgres ends its sessions
//     as it stops), and the Bus logs the outage then, at Warn: "cannot
//     listen", and "broker unreachable" for the changes the others may
//     miss.
//   - Publish still returns at once, and the replica's own subscribers
//     are still notified (by the registry); the changes for the other
//     replicas are dropped and counted (Stats.Dropped).
//   - The listener tries to LISTEN again, at most a second apart. Once it
//     does, it delivers one Resync, since a notification sent while it
//     was away is lost for good (Postgres keeps none for a session that
//     is not listening), and the end of the outage is logged at Info with
//     the count of changes lost.
//   - The sending connection is not trusted after the outage: it is pinged
//     before its next use if the listener saw an outage or if it went
//     unused for a second, and replaced if the ping fails; a send refused
//     because the server had ended the session is made again, once, on a
//     new connection. The first change after Postgres is back is not lost
//     to a connection that died with the old server.
//
// Each outage is logged once when it begins and once when it ends, never
// per change. A Bus that has no listener notices an outage only when it
// next sends.
package pgbus

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mcpres/mcpres/internal/outbox"
	"github.com/mcpres/mcpres/subscribe"
)

// DefaultChannel is the channel replicas share changes on when
// Options.Channel is empty.
const DefaultChannel = "mcpres_changes"

// MaxPayload is the largest payload a Bus sends: NOTIFY refuses 8,000
// bytes or more.
const MaxPayload = 7999

// maxChunked bounds the size of a chunked message a listener joins, and
// maxPartial the unfinished ones it holds.
const (
	maxChunked = 1 << 20
	maxPartial = 8
)

// Backoff between attempts to reach the database, and how long one may
// take.
const (
	minBackoff     = 100 * time.Millisecond
	maxBackoff     = time.Second
	connectTimeout = 5 * time.Second
)

// pingAfter is how long the sending connection may go unused before it
// is pinged before its next use: Postgres may have ended its session
// meanwhile (a restart, an idle timeout), and a change sent on it would
// be lost.
const pingAfter = time.Second

// Options configures a Bus. The zero value, and a nil *Options, mean
// every default.
type Options struct {
	// Channel is the NOTIFY channel the replicas of one registry share:
	// letters, digits and underscores, not starting with a digit, at most
	// 63 bytes. Empty means DefaultChannel.
	Channel string
	// Logger receives the outage lines and malformed payloads. Nil means
	// slog.Default().
	Logger *slog.Logger
	// QueueSize caps the changes waiting to be sent; more are dropped
	// (and logged once). Zero means subscribe.DefaultQueueSize; negative
	// is an error.
	QueueSize int
}

// A Bus is a subscribe.Bus over Postgres LISTEN/NOTIFY. Make one with
// Open; Close it when the registry using it is closed.
type Bus struct {
	config  *pgx.ConnConfig
	channel string
	id      string
	log     *slog.Logger
	out     *outbox.Outbox

	// The sending side: the outbox's goroutine's, and Close's once it
	// has ended.
	sender  *pgx.Conn
	retryAt time.Time     // no connecting before
	backoff time.Duration // since the last connection that succeeded
	used    time.Time     // the sender's last round trip
	chunked uint64        // messages sent in chunks: the chunk headers' seq

	// The messages' numbers (Message.Seq), given by send and reveal.
	numMu    sync.Mutex
	numbers  outbox.Sequence
	numbered uint64 // the outbox's Dropped at the last number given
	gap      bool   // a number was given to a message not sent, and none sent since

	// What the listener tells the sender: its connection dropped, so
	// the sender's may have too (check it before using it); it listens
	// again, so the database is back (connect at once, backoff or not).
	suspect, reachable atomic.Bool

	mu        sync.Mutex
	listening bool
	closed    bool

	received, malformed, resyncs atomic.Uint64
}

// Stats counts what a Bus did.
type Stats struct {
	// Sent and Dropped count this replica's changes: notified, and lost
	// because the queue was full or the database unreachable.
	Sent, Dropped uint64
	// Received counts the other replicas' changes delivered to the
	// listener, and Malformed the payloads skipped as not a message.
	Received, Malformed uint64
	// Resyncs counts the subscribe.Resync changes delivered to the
	// listener: once each time it listened again after its connection
	// was lost, and once for each gap in a sender's numbers.
	Resyncs uint64
}

// Open returns a Bus on the database dsn names (a postgres:// URL or a
// key=value string, as pgx takes). It opens the sending connection before
// it returns, so that a wrong address or password is an error at start;
// later outages are survived (see the package documentation). It returns
// an error for a malformed DSN, a bad Options field, or a database that
// refuses the first connection within ctx.
func Open(ctx context.Context, dsn string, opts *Options) (*Bus, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Channel = cmp.Or(o.Channel, DefaultChannel)
	if err := checkChannel(o.Channel); err != nil {
		return nil, err
	}
	if o.QueueSize < 0 {
		return nil, fmt.Errorf("pgbus: negative QueueSize %d", o.QueueSize)
	}
	config, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgbus: %w", err)
	}
	b := &Bus{config: config, channel: o.Channel, id: newID(), log: cmp.Or(o.Logger, slog.Default())}
	if b.sender, err = pgx.ConnectConfig(ctx, config); err != nil {
		return nil, fmt.Errorf("pgbus: %w", err)
	}
	b.used = time.Now()
	b.out = outbox.New(b.send, outbox.Options{Size: o.QueueSize, Logger: b.log, Name: "pgbus"})
	return b, nil
}

// checkChannel reports whether s is a channel name a Bus accepts.
func checkChannel(s string) error {
	ok := len(s) <= 63
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("pgbus: channel %q: want letters, digits and underscores, not starting with a digit, at most 63 bytes", s)
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

// errBackingOff is send's error while it waits to try the database again.
var errBackingOff = errors.New("waiting before connecting again")

// send notifies batch, in one transaction, as numbered messages of at
// most MaxPayload bytes.
func (b *Bus) send(batch []subscribe.Change) error {
	b.numMu.Lock()
	defer b.numMu.Unlock()
	payloads, err := b.payloads(batch)
	if err == nil {
		err = b.sendPayloads(payloads)
	}
	b.gap = err != nil // the numbers given are skipped, or this message shows the gap
	return err
}

// sendPayloads notifies payloads on the sending connection, in one
// transaction. It does not use a connection that may have died unseen:
// it pings one that went unused for pingAfter, or whose listener lost its
// own connection, and opens another if the ping fails; and when the
// server had ended the session before the statement ran, it sends again,
// once, on a new connection. Either way the change is not lost to a dead
// connection.
func (b *Bus) sendPayloads(payloads [][]byte) error {
	if b.reachable.Swap(false) {
		b.retryAt = time.Time{}
	}
	if b.suspect.Swap(false) || time.Since(b.used) >= pingAfter {
		b.ping()
	}
	fresh := b.sender == nil
	if fresh {
		if err := b.connect(); err != nil {
			return err
		}
	}
	err := b.notify(payloads)
	if err != nil && !fresh && endedBefore(err) {
		b.closeSender()
		fresh = true
		if err = b.connect(); err == nil {
			err = b.notify(payloads)
		}
	}
	if err != nil {
		b.closeSender()
		return err
	}
	b.used = time.Now()
	if fresh {
		// The database is reachable: the end of an outage the listener
		// reported, if it has not listened again yet.
		b.out.Up()
	}
	return nil
}

// endedBefore reports whether err, from a statement on the sending
// connection, says that the statement did not run: nothing was sent
// (pgconn.SafeToRetry), or the server ended the session (a FATAL error,
// such as Postgres's shutting down or pg_terminate_backend), which
// aborts the statement's transaction. Sending again on a new connection
// then notifies nothing twice; only a server that ends the session right
// between committing and answering, a window of microseconds, would make
// it repeat a change, which costs the subscribers a read.
func endedBefore(err error) bool {
	var pgErr *pgconn.PgError
	return pgconn.SafeToRetry(err) ||
		errors.As(err, &pgErr) && strings.EqualFold(cmp.Or(pgErr.SeverityUnlocalized, pgErr.Severity), "FATAL")
}

// connect opens the sending connection, unless it is too soon after the
// last attempt that failed.
func (b *Bus) connect() error {
	if time.Now().Before(b.retryAt) {
		return errBackingOff
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, b.config)
	if err != nil {
		b.backoff = min(max(2*b.backoff, minBackoff), maxBackoff)
		b.retryAt = time.Now().Add(b.backoff)
		return err
	}
	b.sender, b.backoff, b.used = conn, 0, time.Now()
	return nil
}

// ping checks the sending connection, if there is one, and closes it if
// the server does not answer.
func (b *Bus) ping() {
	if b.sender == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := b.sender.Ping(ctx); err != nil {
		b.closeSender()
		return
	}
	b.used = time.Now()
}

// closeSender closes the sending connection, if there is one.
func (b *Bus) closeSender() {
	if b.sender != nil {
		b.sender.Close(context.Background())
		b.sender = nil
	}
}

// notify sends payloads on the sending connection, in one transaction.
func (b *Bus) notify(payloads [][]byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return notify(ctx, b.sender, b.channel, payloads)
}

// notify sends payloads on channel through conn, in one transaction.
func notify(ctx context.Context, conn *pgx.Conn, channel string, payloads [][]byte) error {
	if len(payloads) == 1 {
		_, err := conn.Exec(ctx, "SELECT pg_notify($1, $2)", channel, string(payloads[0]))
		return err
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var batch pgx.Batch
	for _, p := range payloads {
		batch.Queue("SELECT pg_notify($1, $2)", channel, string(p))
	}
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// payloads encodes batch as numbered messages of at most MaxPayload
// bytes, and a change too large for one message alone as one message in
// chunks. b.numMu must be held.
func (b *Bus) payloads(batch []subscribe.Change) ([][]byte, error) {
	var out [][]byte
	sent := time.Now()
	for len(batch) > 0 {
		n := len(batch)
		seq := b.next()
		for {
			data, err := subscribe.Message{From: b.id, Seq: seq, Sent: sent, Changes: batch[:n]}.AppendJSON(nil)
			if err != nil {
				return nil, err
			}
			if len(data) <= MaxPayload {
				out = append(out, data)
				break
			}
			if n == 1 {
				b.chunked++
				out = append(out, chunk(b.id, b.chunked, data)...)
				break
			}
			n /= 2
		}
		batch = batch[n:]
	}
	return out, nil
}

// next returns the number of the next message: one more than the last,
// or two more if changes were dropped since (see outbox.Sequence), so
// that the other replicas' listeners see a gap. b.numMu must be held.
func (b *Bus) next() uint64 {
	b.numbered = b.out.Stats().Dropped
	return b.numbers.Next(b.numbered)
}

// reveal sends on conn, if a number was skipped since the last message
// sent (a message not sent, changes dropped), an empty message with the
// next number: the other replicas' listeners then see the gap now,
// rather than at this replica's next change, which may never come. The
// listener calls it when it listens again after an outage, during which
// this replica's sends failed while the others may have heard nothing
// amiss (a network cut between this replica and Postgres only).
func (b *Bus) reveal(ctx context.Context, conn *pgx.Conn) {
	b.numMu.Lock()
	defer b.numMu.Unlock()
	if !b.gap && b.out.Stats().Dropped == b.numbered {
		return
	}
	p, err := subscribe.Message{From: b.id, Seq: b.next(), Sent: time.Now(), Changes: []subscribe.Change{}}.AppendJSON(nil)
	if err != nil {
		return // unreachable: no change to be malformed
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	b.gap = notify(ctx, conn, b.channel, [][]byte{p}) != nil
}

// chunk cuts a message into payloads of at most MaxPayload bytes, each
// #from:seq:i/n: followed by its part. Parts are cut between UTF-8
// characters, since a payload is text.
func chunk(from string, seq uint64, msg []byte) [][]byte {
	const room = MaxPayload - 64 // the header is shorter
	var parts [][]byte
	for len(msg) > 0 {
		end := min(room, len(msg))
		for end < len(msg) && !utf8.RuneStart(msg[end]) {
			end--
		}
		parts = append(parts, msg[:end])
		msg = msg[end:]
	}
	out := make([][]byte, len(parts))
	for i, part := range parts {
		header := fmt.Sprintf("#%s:%d:%d/%d:", from, seq, i+1, len(parts))
		out[i] = append([]byte(header), part...)
	}
	return out
}

// A chunkHeader is a parsed chunk header.
type chunkHeader struct {
	from string
	seq  uint64
	i, n int
}

// parseChunk splits a chunk payload into its header and part.
func parseChunk(p []byte) (chunkHeader, []byte, error) {
	var h chunkHeader
	rest, ok := bytes.CutPrefix(p, []byte("#"))
	if !ok {
		return h, nil, errors.New("not a chunk")
	}
	fields := bytes.SplitN(rest, []byte(":"), 4)
	if len(fields) != 4 {
		return h, nil, errors.New("chunk header: want #from:seq:i/n:")
	}
	h.from = string(fields[0])
	seq, err := strconv.ParseUint(string(fields[1]), 10, 64)
	if err != nil {
		return h, nil, fmt.Errorf("chunk header: seq: %w", err)
	}
	h.seq = seq
	is, ns, ok := strings.Cut(string(fields[2]), "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || i < 1 || n < 2 || i > n || n > maxChunked/(MaxPayload-64)+1 {
		return h, nil, fmt.Errorf("chunk header: bad part %q", fields[2])
	}
	h.i, h.n = i, n
	return h, fields[3], nil
}

// A joiner joins chunked messages.
type joiner struct {
	partial []*partialMessage // oldest first
}

type partialMessage struct {
	from  string
	seq   uint64
	n     int
	parts [][]byte
	size  int
}

// add adds a chunk, and returns the whole message once its last part has
// come. Parts come in order: a part out of order drops the message.
func (j *joiner) add(h chunkHeader, part []byte) (msg []byte, err error) {
	idx := -1
	for k, m := range j.partial {
		if m.from == h.from && m.seq == h.seq {
			idx = k
			break
		}
	}
	if idx < 0 {
		if h.i != 1 {
			return nil, fmt.Errorf("chunk %d/%d of a message whose first part was missed", h.i, h.n)
		}
		if len(j.partial) == maxPartial {
			j.partial = j.partial[1:] // the oldest is never finished
		}
		j.partial = append(j.partial, &partialMessage{from: h.from, seq: h.seq, n: h.n})
		idx = len(j.partial) - 1
	}
	m := j.partial[idx]
	drop := func() { j.partial = append(j.partial[:idx], j.partial[idx+1:]...) }
	if h.n != m.n || h.i != len(m.parts)+1 || m.size+len(part) > maxChunked {
		drop()
		return nil, fmt.Errorf("chunk %d/%d out of order or too large", h.i, h.n)
	}
	m.parts = append(m.parts, bytes.Clone(part))
	m.size += len(part)
	if len(m.parts) < m.n {
		return nil, nil
	}
	drop()
	return bytes.Join(m.parts, nil), nil
}

// errListening and errClosed are Listen's refusals.
var (
	errListening = errors.New("pgbus: this Bus already has a listener")
	errClosed    = errors.New("pgbus: Bus closed")
)

// Listen opens the listening connection, LISTENs on the channel, and
// calls deliver with each change the other replicas (or other
// publishers) notify, in order, and with a subscribe.Resync when this
// replica may have missed some (see Delivery in the package
// documentation), one call at a time, from a goroutine of its own, until
// stop; stop waits for that goroutine. When Listen returns, the channel
// is listened to, unless the database could not be reached: the Bus then
// logs so and keeps trying, and delivers a Resync once it listens.
// Payloads this Bus sent are skipped; malformed ones are logged (the
// first, then every thousandth) and skipped. Listen returns an error if
// the Bus already has a listener or is closed.
func (b *Bus) Listen(deliver func(subscribe.Change)) (stop func(), err error) {
	b.mu.Lock()
	switch {
	case b.closed:
		b.mu.Unlock()
		return nil, errClosed
	case b.listening:
		b.mu.Unlock()
		return nil, errListening
	}
	b.listening = true
	b.mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{bus: b, deliver: deliver}
	first := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.run(ctx, first)
	}()
	select {
	case <-first:
	case <-time.After(connectTimeout):
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			b.mu.Lock()
			b.listening = false
			b.mu.Unlock()
		})
	}, nil
}

// A listener is the goroutine behind Listen.
type listener struct {
	bus     *Bus
	deliver func(subscribe.Change)
	joiner  joiner
	seqs    subscribe.Sequences
	down    bool // an outage was logged, and has not ended
}

// resyncLost is the reason of the Resync a listener delivers when it
// listens again after an outage.
const resyncLost = "connection to Postgres lost: changes published meanwhile may be missed"

// run listens until ctx is done, connecting again after any failure;
// first is closed after the first attempt.
//
// An outage begins when the listening connection fails, or cannot be
// opened: run logs it then, at once, tells the outbox (so that the
// other replicas' loss is logged now, not at the next change), and the
// sender, whose connection has likely died too. It ends when run listens
// again: it then delivers a Resync, since what was notified meanwhile is
// lost for good.
func (l *listener) run(ctx context.Context, first chan struct{}) {
	b := l.bus
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		conn, err := l.listen(ctx)
		if first != nil {
			close(first)
			first = nil
		}
		if err == nil {
			if l.down {
				l.down = false
				l.joiner = joiner{} // their other parts were missed
				b.reachable.Store(true)
				b.out.Up()
				b.log.Info("pgbus: listening again; changes notified while the listener was away were missed, and every watcher is told to read again", "channel", b.channel)
				l.resync(resyncLost)
				b.reveal(ctx, conn)
			}
			backoff = 0
			err = l.receive(ctx, conn)
			conn.Close(context.Background())
		}
		if ctx.Err() != nil {
			return
		}
		if !l.down {
			l.down = true
			l.seqs.Outage()
			b.suspect.Store(true)
			b.log.Warn("pgbus: cannot listen; the other replicas' changes are missed until the database is back", "channel", b.channel, "error", err)
			b.out.Down(err)
		}
		backoff = min(max(2*backoff, minBackoff), maxBackoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// resync delivers a Resync saying why.
func (l *listener) resync(why string) {
	l.bus.resyncs.Add(1)
	l.deliver(subscribe.Change{Kind: subscribe.Resync, Value: why})
}

// listen connects and LISTENs on the channel.
func (l *listener) listen(ctx context.Context) (*pgx.Conn, error) {
	b := l.bus
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, b.config)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(cctx, "LISTEN "+pgx.Identifier{b.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, err
	}
	return conn, nil
}

// receive delivers what conn is notified of until it fails or ctx is
// done.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) error {
	b := l.bus
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Channel != b.channel {
			continue
		}
		payload := []byte(n.Payload)
		if strings.HasPrefix(n.Payload, "#") {
			h, part, err := parseChunk(payload)
			if err != nil {
				l.malformed(err, n.Payload)
				continue
			}
			if h.from == b.id {
				continue
			}
			if payload, err = l.joiner.add(h, part); err != nil {
				l.malformed(err, n.Payload)
				continue
			}
			if payload == nil {
				continue // more parts to come
			}
		}
		m, err := subscribe.ParseMessage(payload)
		if err != nil {
			l.malformed(err, n.Payload)
			continue
		}
		if m.From == b.id {
			continue
		}
		lost, why := l.seqs.Check(m)
		for _, c := range m.Changes {
			b.received.Add(1)
			l.deliver(c)
		}
		if lost {
			l.resync(why)
		}
	}
}

// malformed counts a skipped payload, and logs the first and every
// thousandth.
func (l *listener) malformed(err error, payload string) {
	if n := l.bus.malformed.Add(1); n == 1 || n%1000 == 0 {
		if len(payload) > 120 {
			payload = payload[:120] + "…"
		}
		l.bus.log.Warn("pgbus: skipped a malformed notification", "channel", l.bus.channel, "malformed_so_far", n, "error", err, "payload", payload)
	}
}

// Stats returns what b has sent, dropped and received so far.
func (b *Bus) Stats() Stats {
	o := b.out.Stats()
	return Stats{Sent: o.Sent, Dropped: o.Dropped, Received: b.received.Load(), Malformed: b.malformed.Load(), Resyncs: b.resyncs.Load()}
}

// Close sends what is queued, once, and closes the sending connection.
// It does not stop a listener: stop it first (a registry's Close does).
// Close may be called more than once, and returns nil.
func (b *Bus) Close() error {
	b.mu.Lock()
	was := b.closed
	b.closed = true
	b.mu.Unlock()
	if was {
		return nil
	}
	b.out.Close() // its goroutine has ended: b.sender is ours
	b.closeSender()
	return nil
}
