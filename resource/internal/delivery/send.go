package delivery

import (
	"context"
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
}

// sendTimeout bounds one send, as go-sdk bounds each of its own
// notifications: a transport that heeds its context gives up then.
const sendTimeout = 10 * time.Second

// Step 4, queue: Queue takes a notification go-sdk is sending to s
// (resources/updated of uri, or list_changed with uri ""), to be sent by
// next from a goroutine of s's own, and reports whether it took it; after
// Close it takes none, and the caller sends it itself. A notification of
// the same method and URI already waiting is this one (Options.Coalesced
// is told): the new request takes its place, so that the newest is sent
// (a 2026-07-28 notification names its listen).
//
// go-sdk sends a notification to its sessions one after another, and a
// send waits for the session's transport: an in-memory or stdio
// connection whose reader stopped reading blocks it for good, and a
// streamable HTTP stream once its socket's buffers are full. Sending from
// the session's own goroutine, which runs while the session has
// notifications waiting, keeps one stalled client from holding up the
// others. What waits for a stalled session is at most one notification of
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
	}
	rec.sendMu.Lock()
	d.mu.Unlock()
	replaced := d.push(Key{SDK: s}, rec, q)
	rec.sendMu.Unlock()
	if replaced && d.opts.Coalesced != nil {
		d.opts.Coalesced(uri)
	}
	return true
}

// push puts q on rec's queue, in the place of a notification of the same
// method and URI waiting there, if one is, and reports whether it was;
// and starts the goroutine that sends the queue to s, unless it runs.
// rec.sendMu must be held.
func (d *Delivery[G]) push(s Key, rec *record[G], q queued[G]) (replaced bool) {
	for i := range rec.queue {
		if rec.queue[i].method == q.method && rec.queue[i].uri == q.uri {
			rec.queue[i], replaced = q, true
			break
		}
	}
	if !replaced {
		rec.queue = append(rec.queue, q)
	}
	if !rec.sending {
		rec.sending = true
		d.dispatch(sendJob[G]{s, rec})
	}
	return replaced
}

// A sendJob is a record whose queue a sending goroutine is to send.
type sendJob[G any] struct {
	s   Key
	rec *record[G]
}

// senderIdle is how long a sending goroutine waits for another record
// once it has sent one's queue, before it ends.
const senderIdle = time.Second

// dispatch hands j to a sending goroutine: one that is idle, else a new
// one. Every record being sent has a goroutine of its own, so a client
// that stops reading holds up no other; a goroutine that has sent one
// record's queue waits a while for the next, rather than ending, so
// that a fan-out to thousands of sessions does not start, and grow the
// stack of, a goroutine for each notification.
func (d *Delivery[G]) dispatch(j sendJob[G]) {
	select {
	case d.idle <- j:
	default:
		go d.sender(j)
	}
}

// sender sends j's queue, then the queue of each record dispatch hands
// it, until none comes for senderIdle or d is closed.
func (d *Delivery[G]) sender(j sendJob[G]) {
	var idle *time.Timer
	var t sendContext
	defer t.end()
	for {
		d.send(j.s, j.rec, &t)
		if idle == nil {
			idle = time.NewTimer(senderIdle)
		} else {
			idle.Reset(senderIdle)
		}
		select {
		case j = <-d.idle:
		case <-idle.C:
			return
		case <-d.ctx.Done():
			idle.Stop()
			return
		}
	}
}

// Step 5, still allowed, then send: send sends rec's queue to s in order
// until none is left, or d is closed (what is left is then dropped). A
// resources/updated of a subscription recorded with a grant is sent only
// if Options.Allowed still allows it. go-sdk's chain sends a go-sdk
// session's; another server's session sends its own (Session.Updated),
// and, if it is a Flusher, is flushed once its queue is empty.
//
// A sending goroutine's context bounds each send (sendContext).
func (d *Delivery[G]) send(s Key, rec *record[G], t *sendContext) {
	unsent := false // another server's session was sent to since it was flushed
	for {
		rec.sendMu.Lock()
		if len(rec.queue) == 0 || d.ctx.Err() != nil {
			if f, ok := s.Other.(Flusher); ok && unsent && d.ctx.Err() == nil {
				rec.sendMu.Unlock()
				unsent = false
				if err := f.Flush(); err != nil {
					d.opts.Logger.Warn("notifications not sent", "session_id", s.ID(), "error", err)
				}
				continue // more may have come while it flushed
			}
			rec.queue, rec.sending = nil, false
			rec.sendMu.Unlock()
			d.mu.Lock()
			d.release(s, rec)
			d.mu.Unlock()
			return
		}
		q := rec.queue[0]
		rec.queue[0] = queued[G]{} // let go of the request
		rec.queue = rec.queue[1:]
		rec.sendMu.Unlock()
		if q.granted && !d.opts.Allowed(d.ctx, s, q.uri, q.grant) {
			continue
		}
		ctx := t.get(d.ctx)
		var err error
		if q.next != nil {
			_, err = q.next(ctx, q.method, q.req)
		} else {
			err = s.Other.Updated(ctx, q.uri)
			unsent = true
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
