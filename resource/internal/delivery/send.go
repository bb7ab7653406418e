package delivery

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A queued notification is one go-sdk asked the sending middleware to
// send to a session, with the rest of the middleware chain, which sends
// it; or, for another server's session, one deliver queued, which the
// session's Updated sends. Its method and URI say which notifications are
// one.
type queued[G any] struct {
	method, uri string
	req         mcp.Request       // nil for another server's session
	next        mcp.MethodHandler // nil for another server's session
	grant       G                 // the subscription's, to ask Options.Allowed about
	granted     bool              // grant is set
	// plain is set for a resources/updated whose params are its URI
	// alone, as deliver made them, that a WritableStream may write.
	plain bool
}

// sendTimeout bounds one send, as go-sdk bounds each of its own
// notifications: a transport that heeds its context gives up then.
const sendTimeout = 10 * time.Second

// Step 4, queue: Queue takes a notification go-sdk is sending to s
// (resources/updated of uri, or list_changed with uri ""), to be sent by
// next from a sending goroutine, and reports whether it took it; after
// Close it takes none, and the caller sends it itself. A notification of
// the same method and URI already waiting is this one (Options.Coalesced
// is told): the new request takes its place, so that the newest is sent
// (a 2026-07-28 notification names its listen).
//
// go-sdk sends a notification to its sessions one after another, and a
// send waits for the session's transport: an in-memory or stdio
// connection whose reader stopped reading blocks it for good, and a
// streamable HTTP stream once its socket's buffers are full. Sending from
// sending goroutines (dispatch), one of which a stalled session keeps
// while the rest of its batch goes on from another, keeps one stalled
// client from holding up the others. What waits for a stalled session is at most one notification of
// each kind per URI: bounded by its subscriptions.
func (d *Delivery[G]) Queue(s *mcp.ServerSession, method, uri string, req mcp.Request, next mcp.MethodHandler) bool {
	d.mu.Lock()
	if d.ctx.Err() != nil {
		d.mu.Unlock()
		return false
	}
	rec := d.sessions[s]
	if rec == nil {
		rec = &record[G]{}
		d.sessions[s] = rec
	}
	q := queued[G]{method: method, uri: uri, req: req, next: next}
	if method == protocol.NotificationResourceUpdated {
		d.reached(rec, uri)
		q.grant, q.granted = d.grant(rec, uri)
		p, _ := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		q.plain = p != nil && p.URI == uri && len(p.Meta) == 0
	}
	rec.sendMu.Lock()
	replaced, start := d.push(rec, q)
	rec.sendMu.Unlock()
	if start {
		d.ready(sendJob[G]{Key{SDK: s}, rec})
	}
	d.mu.Unlock()
	if replaced && d.opts.Coalesced != nil {
		d.opts.Coalesced(uri)
	}
	return true
}

// push puts q on rec's queue, in the place of a notification of the same
// method and URI waiting there, if one is, and reports whether it was;
// and whether rec is to be handed to a sending goroutine (start), as no
// goroutine sends its queue yet. rec.sendMu must be held.
func (d *Delivery[G]) push(rec *record[G], q queued[G]) (replaced, start bool) {
	for i := rec.head; i < len(rec.queue); i++ {
		if rec.queue[i].method == q.method && rec.queue[i].uri == q.uri {
			rec.queue[i], replaced = q, true
			break
		}
	}
	if !replaced {
		rec.queue = append(rec.queue, q)
	}
	if !rec.sending {
		rec.sending, start = true, true
	}
	return replaced, start
}

// ready hands j to a sending goroutine: at once, or, while a fan-out
// through go-sdk is under way (gather), with the others that fan-out
// readies, in batches. d.mu must be held.
func (d *Delivery[G]) ready(j sendJob[G]) {
	if d.gathering == 0 {
		d.dispatch([]sendJob[G]{j})
		return
	}
	if d.gathered == nil {
		d.gathered = make([]sendJob[G], 0, batchSize)
	}
	d.gathered = append(d.gathered, j)
	if len(d.gathered) == batchSize {
		d.dispatch(d.gathered)
		d.gathered = nil
	}
}

// gather calls fanOut, which has go-sdk send to its sessions through
// the sending middleware (Queue), and hands the records it readied to
// sending goroutines in batches rather than one at a time.
func (d *Delivery[G]) gather(fanOut func()) {
	d.mu.Lock()
	d.gathering++
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.gathering--
		d.dispatch(d.gathered)
		d.gathered = nil
	}()
	fanOut()
}

// A sendJob is a record whose queue a sending goroutine is to send.
type sendJob[G any] struct {
	s   Key
	rec *record[G]
}

// senderIdle is how long a sending goroutine waits for another batch
// once it has sent one, before it ends.
const senderIdle = time.Second

// batchSize is the most records one batch holds: one fan-out readies
// records by the thousand, and handing each to a goroutine of its own
// would cost a goroutine switch per notification.
const batchSize = 64

// stallAfter is how long a sending goroutine may send one record of a
// batch before the rest of the batch goes to another goroutine: a
// healthy stream's notification takes microseconds.
const stallAfter = 5 * time.Millisecond

// A batch is records one sending goroutine sends in turn. A record whose
// send blocks (a client that stopped reading) would hold up those after
// it, so a timer watches the batch: when the goroutine has not moved on
// to another record since the timer last looked, the records not yet
// begun are dispatched again, to another goroutine.
type batch[G any] struct {
	mu    sync.Mutex
	jobs  []sendJob[G]
	next  int         // jobs[next:] wait
	seen  int         // next, when the timer last looked
	stall *time.Timer // nil for a batch of one record
}

// dispatch hands jobs to sending goroutines, in batches of at most
// batchSize: each to one that is idle, else a new one. A goroutine that
// has sent a batch waits a while for the next, rather than ending, so
// that a fan-out to thousands of sessions does not start, and grow the
// stack of, a goroutine for each.
func (d *Delivery[G]) dispatch(jobs []sendJob[G]) {
	for chunk := range slices.Chunk(jobs, batchSize) {
		b := &batch[G]{jobs: chunk}
		select {
		case d.idle <- b:
		default:
			go d.sender(b)
		}
	}
}

// sender sends b, then each batch dispatch hands it, until none comes
// for senderIdle or d is closed.
func (d *Delivery[G]) sender(b *batch[G]) {
	var idle *time.Timer
	var t sendContext
	defer t.end()
	for {
		d.sendBatch(b, &t)
		if idle == nil {
			idle = time.NewTimer(senderIdle)
		} else {
			idle.Reset(senderIdle)
		}
		select {
		case b = <-d.idle:
		case <-idle.C:
			return
		case <-d.ctx.Done():
			idle.Stop()
			return
		}
	}
}

// sendBatch sends b's records in turn, watched for a stall.
func (d *Delivery[G]) sendBatch(b *batch[G], t *sendContext) {
	if len(b.jobs) > 1 {
		b.mu.Lock()
		b.stall = time.AfterFunc(stallAfter, func() { d.unstall(b) })
		b.mu.Unlock()
		defer b.stall.Stop()
	}
	for {
		b.mu.Lock()
		if b.next == len(b.jobs) {
			b.mu.Unlock()
			return
		}
		j := b.jobs[b.next]
		b.jobs[b.next] = sendJob[G]{}
		b.next++
		b.mu.Unlock()
		d.send(j.s, j.rec, t)
	}
}

// unstall looks at b: if its goroutine has not moved on since the last
// look, the records not begun go to another goroutine; else it looks
// again after stallAfter.
func (d *Delivery[G]) unstall(b *batch[G]) {
	b.mu.Lock()
	if b.next == len(b.jobs) {
		b.mu.Unlock()
		return
	}
	if b.next != b.seen {
		b.seen = b.next
		b.stall.Reset(stallAfter)
		b.mu.Unlock()
		return
	}
	rest := slices.Clone(b.jobs[b.next:])
	clear(b.jobs[b.next:])
	b.jobs = b.jobs[:b.next]
	b.mu.Unlock()
	d.dispatch(rest)
}

// Step 5, still allowed, then send: send sends rec's queue to s in order
// until none is left, or d is closed (what is left is then dropped). A
// resources/updated of a subscription recorded with a grant is sent only
// if Options.Allowed still allows it. go-sdk's chain sends a go-sdk
// session's; another server's session sends its own (Session.Updated),
// and, if it is a Flusher, is flushed once its queue is empty. A go-sdk
// session with more than one notification waiting, whose GET stream a
// transport attached (AttachStream), has that stream's flushes held
// until its queue is empty: a session that fell behind gets what waited
// in one write, not one each. On a stream attached as a WritableStream,
// a plain resources/updated (queued.plain) is written by Updated, not
// go-sdk's chain, and flushed once the queue is empty.
//
// A sending goroutine's context bounds each send (sendContext).
func (d *Delivery[G]) send(s Key, rec *record[G], t *sendContext) {
	flusher, _ := s.Other.(Flusher) // another server's session, if it buffers
	var stream HeldStream           // a go-sdk session's attached GET stream, once looked up
	looked := s.SDK == nil          // stream was looked up, or there is none to look up
	var w WritableStream            // stream, if send writes plain notifications on it
	held := false                   // stream's flushes are held
	unsent := false                 // flusher or w was written to since it was flushed
	for {
		rec.sendMu.Lock()
		if rec.head == len(rec.queue) || d.ctx.Err() != nil {
			if unsent && d.ctx.Err() == nil {
				rec.sendMu.Unlock()
				unsent = false
				var err error
				if w != nil {
					err = w.FlushUpdated()
				} else {
					err = flusher.Flush()
				}
				if err != nil {
					d.opts.Logger.Warn("notifications not sent", "session_id", s.ID(), "error", err)
				}
				continue // more may have come while it flushed
			}
			if held {
				rec.sendMu.Unlock()
				held = false
				if err := stream.Release(); err != nil && d.ctx.Err() == nil {
					d.opts.Logger.Warn("notifications not sent", "session_id", s.ID(), "error", err)
				}
				continue // more may have come while it flushed
			}
			rec.emptyQueue()
			rec.sending = false
			rec.sendMu.Unlock()
			d.mu.Lock()
			d.release(s, rec)
			d.mu.Unlock()
			return
		}
		q := rec.queue[rec.head]
		rec.queue[rec.head] = queued[G]{} // let go of the request
		rec.head++
		more := rec.head < len(rec.queue)
		rec.sendMu.Unlock()
		if q.granted && !d.opts.Allowed(d.ctx, s, q.uri, q.grant) {
			continue
		}
		if !looked && (more || q.plain) {
			looked = true
			stream = d.heldStream(s.SDK.ID())
			w, _ = stream.(WritableStream)
		}
		var err error
		switch {
		case q.plain && w != nil:
			// As go-sdk would write it, without its connection's
			// encoding and locks.
			err = w.Updated(q.uri)
			unsent = true
		case q.next != nil:
			if more && !held && stream != nil {
				// A run of notifications go-sdk writes: flushed once,
				// after the last.
				stream.Hold()
				held = true
			}
			_, err = q.next(t.get(d.ctx), q.method, q.req)
		default:
			err = s.Other.Updated(t.get(d.ctx), q.uri)
			unsent = flusher != nil
		}
		switch {
		case err != nil && d.ctx.Err() == nil:
			d.opts.Logger.Warn("notification not sent", "method", q.method, "uri", q.uri, "session_id", s.ID(), "error", err)
		case err == nil && d.opts.Sent != nil:
			d.opts.Sent(q.method, q.uri)
		}
	}
}

// A sendContext is the context a sending goroutine bounds its sends
// with: made with a deadline sendTimeout ahead, and made again once less
// than half of that is left, so that each send has at least
// sendTimeout/2, and a fan-out to thousands of sessions does not make a
// timer for each notification, which would cost as much as a small send.
type sendContext struct {
	ctx      context.Context
	cancel   context.CancelFunc
	deadline time.Time
}

// get returns the context for the next send, within parent.
func (t *sendContext) get(parent context.Context) context.Context {
	if t.ctx == nil || time.Until(t.deadline) < sendTimeout/2 {
		t.end()
		t.deadline = time.Now().Add(sendTimeout)
		t.ctx, t.cancel = context.WithDeadline(parent, t.deadline)
	}
	return t.ctx
}

// end releases the context's timer.
func (t *sendContext) end() {
	if t.cancel != nil {
		t.cancel()
	}
}

// grant returns the grant rec's subscription to uri was made with, if
// there is one and Options.Allowed is to be asked. d.mu must be held.
func (d *Delivery[G]) grant(rec *record[G], uri string) (grant G, ok bool) {
	if d.opts.Allowed == nil || rec.grants == nil {
		return grant, false
	}
	id, known := d.uris.id(uri)
	if !known {
		return grant, false
	}
	grant, ok = rec.grants[id]
	return grant, ok
}
