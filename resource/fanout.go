package resource

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A fanout sends each session its notifications/resources/updated and
// list_changed from a goroutine of that session's own, so that a session
// that does not take them holds up no other.
//
// go-sdk sends a notification to its sessions one after another, from the
// goroutine that called Server.ResourceUpdated (or that changed the
// resource list), each through the server's sending middleware (behaviour
// 10), and a send waits for the session's transport: an in-memory or stdio
// connection whose reader stopped reading blocks it for good, whatever the
// context says, and a streamable HTTP stream blocks it once the socket's
// buffers are full. One client that stops reading would then stall every
// notification of every session after it in go-sdk's loop, and every
// later one too. The sending middleware hands the send to the fanout
// instead and returns: the session's own goroutine makes it, and the next.
//
// A session's goroutine runs only while it has notifications to send. It
// holds at most one of each kind for each URI: a change to a URI already
// waiting to be sent to the session is that one (the session will read the
// resource after both). So what waits for a session that has stopped
// reading is bounded by its subscriptions, and its goroutine ends when its
// transport fails, at the latest when the session ends.
type fanout struct {
	ctx      context.Context // the registry's: sends end when it does
	logger   *slog.Logger
	observer Observer // told of each notification sent or coalesced; nil for none

	mu     sync.Mutex
	queues map[*mcp.ServerSession]*sendQueue // sessions with a goroutine sending
}

// A sendQueue is what waits to be sent to one session, in order: at most
// one send of each key, so a short slice a send looks through.
type sendQueue struct {
	sends []queuedSend
}

// A sendKey says which notifications are one: the method, and for
// resources/updated the URI.
type sendKey struct{ method, uri string }

// A queuedSend is a notification go-sdk asked the sending middleware to
// send, and the rest of the middleware chain, which sends it.
type queuedSend struct {
	key    sendKey
	req    mcp.Request
	next   mcp.MethodHandler
	before func(ctx context.Context, req mcp.Request) bool // false: drop it (see Registry.sendingMiddleware)
}

// sendTimeout bounds one send, as go-sdk bounds each of its own
// notifications: a transport that heeds its context gives up then.
const sendTimeout = 10 * time.Second

// send queues qs for session s and starts s's goroutine if it has none.
// A notification with qs's key already waiting is that one (the Observer
// is told it was coalesced): qs takes its place in the queue, so that the
// session is sent the newest request (a 2026-07-28 listen's notification
// names its listen). The goroutine sends each with a context of f.ctx,
// reports failures to f.logger, and tells the Observer of each
// notification sent.
func (f *fanout) send(s *mcp.ServerSession, qs queuedSend) {
	f.mu.Lock()
	q := f.queues[s]
	if q == nil {
		if f.queues == nil {
			f.queues = make(map[*mcp.ServerSession]*sendQueue)
		}
		q = &sendQueue{}
		f.queues[s] = q
		go f.run(s, q)
	}
	coalesced := false
	for i := range q.sends {
		if q.sends[i].key == qs.key {
			q.sends[i], coalesced = qs, true
			break
		}
	}
	if !coalesced {
		q.sends = append(q.sends, qs)
	}
	f.mu.Unlock()
	if coalesced && f.observer != nil {
		f.observer.Event(Event{Kind: EventCoalesced, URI: qs.key.uri})
	}
}

// run sends q's notifications to s in order until none is left, or f.ctx
// ends (the registry closed): what is left then is dropped.
func (f *fanout) run(s *mcp.ServerSession, q *sendQueue) {
	for {
		f.mu.Lock()
		if len(q.sends) == 0 || f.ctx.Err() != nil {
			delete(f.queues, s)
			f.mu.Unlock()
			return
		}
		qs := q.sends[0]
		q.sends[0] = queuedSend{} // let go of the request
		q.sends = q.sends[1:]
		f.mu.Unlock()

		if qs.before != nil && !qs.before(f.ctx, qs.req) {
			continue
		}
		ctx, cancel := context.WithTimeout(f.ctx, sendTimeout)
		_, err := qs.next(ctx, qs.key.method, qs.req)
		cancel()
		switch {
		case err != nil && f.ctx.Err() == nil:
			f.logger.Warn("notification not sent", "method", qs.key.method, "uri", qs.key.uri, "session_id", s.ID(), "error", err)
		case err == nil && f.observer != nil:
			f.observer.Event(Event{Kind: EventNotified, Method: qs.key.method, URI: qs.key.uri})
		}
	}
}
