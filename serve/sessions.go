package serve

// This file holds the caps on stateful sessions (clients before protocol
// 2026-07-28). The handler behind the edge opens a session for a POST
// without an Mcp-Session-Id header, and names it in the answer's
// Mcp-Session-Id header. The gate counts a session from that POST until
// it ends: the client deletes it, the handler answers 404 for it (it
// ended), or it has been idle for Options.SessionTimeout. For go-sdk's
// handler (NewGoSDKHandler), the gate also asks the server which
// sessions are open.
//
// At a cap, the gate makes room rather than refuse at once:
//
//  1. a session with no open stream and no request for
//     Options.ReclaimAfter is ended: the caller's own at its cap, the
//     longest idle of all at the total;
//  2. at the total, else, a session of the caller that holds the most is
//     ended, if it holds more than one session more than the newcomer;
//  3. else the request is refused: 429 at the caller's cap, 503 at the
//     total.
//
// Ending a session is the server's right, and its client knows how to
// go on (2025-06-18 and 2025-11-25, transports, Session Management):
// "The server MAY terminate the session at any time, after which it MUST
// respond to requests containing that session ID with HTTP 404 Not
// Found", and "When a client receives HTTP 404 in response to a request
// containing an Mcp-Session-Id, it MUST start a new session". So the
// handler behind the edge must answer 404 for a session the edge ended.

import (
	"context"
	"iter"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
)

// pruneEvery is how often at most a gate at a cap looks for sessions that
// ended: a session that ended without the client's word frees its place
// within it, once a request needs the place.
const pruneEvery = time.Second

// A sessionGate holds the sessions of one edge under its caps.
type sessionGate struct {
	maxPerCaller, max           int
	maxBytesPerCaller, maxBytes int64                   // of what sessions hold: their initialize requests
	idle                        time.Duration           // Options.SessionTimeout
	reclaim                     time.Duration           // Options.ReclaimAfter
	live                        func() iter.Seq[string] // the open sessions, if the handler says; nil if not
	end                         func(id string)         // ends a session in the handler

	mu       sync.Mutex
	sessions map[string]*session // open session ID → its owner
	callers  map[string]int      // open and opening sessions by caller
	opening  int                 // POSTs that may open a session, under way
	bytes    int64               // what open and opening sessions hold
	held     map[string]int64    // bytes by caller
	prunedAt time.Time
}

// A session is one the gate counts.
type session struct {
	caller  string
	size    int64     // the bytes of its initialize request
	seen    time.Time // its last request
	streams int       // its open GET streams
}

func newSessionGate(o *Options, live func() iter.Seq[string], end func(id string)) *sessionGate {
	return &sessionGate{
		maxPerCaller: o.MaxSessionsPerCaller, max: o.MaxSessions, idle: o.SessionTimeout, reclaim: o.ReclaimAfter,
		maxBytesPerCaller: o.MaxSessionBytesPerCaller, maxBytes: o.MaxSessionBytes, held: make(map[string]int64),
		live: live, end: end,
		sessions: make(map[string]*session), callers: make(map[string]int),
	}
}

// serve serves req, of a client before 2026-07-28, with next, under the
// caps: a POST that would open a session past them is refused with 429
// (the caller's cap) or 503 (the total). caller names req's caller.
func (g *sessionGate) serve(w http.ResponseWriter, req *http.Request, next http.Handler, caller func() string, log *refusals) {
	id := req.Header.Get(protocol.HeaderSessionID)
	if id == "" {
		if req.Method != http.MethodPost {
			next.ServeHTTP(w, req)
			return
		}
		c, size := caller(), max(req.ContentLength, 0)
		over, ended := g.reserve(c, size)
		for _, id := range ended {
			g.end(id)
			log.shed(req.Context(), "sessions", c)
		}
		if over.status != 0 {
			log.capped(req.Context(), over.kind, c, int(over.max))
			refuseCapped(w, over.status, protocol.MethodInitialize,
				"Too many sessions: the cap of "+over.kind+" ("+strconv.FormatInt(over.max, 10)+") is reached; end a session (DELETE) or try later", pruneEvery)
			return
		}
		next.ServeHTTP(w, req)
		g.opened(c, w.Header().Get(protocol.HeaderSessionID), size)
		return
	}
	stream := req.Method == http.MethodGet
	g.seen(id, stream, 1)
	if stream {
		defer g.seen(id, true, -1)
	}
	sw := &statusWriter{ResponseWriter: w}
	next.ServeHTTP(sw, req)
	if sw.status == http.StatusNotFound || req.Method == http.MethodDelete && sw.status/100 == 2 {
		g.closed(id) // it ended, or the client ended it
	}
}

// A sessionCap is the one a new session would go over: the status to refuse
// it with (0 for none), its name and its value.
type sessionCap struct {
	status int
	kind   string
	max    int64
}

// over returns the cap a new session of caller holding size bytes would
// go over. g.mu must be held.
func (g *sessionGate) over(caller string, size int64) sessionCap {
	switch {
	case caller != "" && g.callers[caller] >= g.maxPerCaller:
		return sessionCap{http.StatusTooManyRequests, "sessions per caller", int64(g.maxPerCaller)}
	case caller != "" && g.held[caller]+size > g.maxBytesPerCaller:
		return sessionCap{http.StatusTooManyRequests, "session bytes per caller", g.maxBytesPerCaller}
	case len(g.sessions)+g.opening >= g.max:
		return sessionCap{http.StatusServiceUnavailable, "sessions in all", int64(g.max)}
	case g.bytes+size > g.maxBytes:
		return sessionCap{http.StatusServiceUnavailable, "session bytes in all", g.maxBytes}
	}
	return sessionCap{}
}

// maxShed bounds how many sessions one newcomer may end to make room.
const maxShed = 8

// reserve counts a session caller may open, which holds size bytes, and
// returns the zero cap; or the cap that stops it. To make room it may
// forget sessions, ended, which the caller must then end in the handler.
func (g *sessionGate) reserve(caller string, size int64) (over sessionCap, ended []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.over(caller, size).status != 0 && time.Since(g.prunedAt) >= pruneEvery {
		g.prune()
	}
	for over = g.over(caller, size); over.status != 0; over = g.over(caller, size) {
		var id string
		switch {
		case len(ended) == maxShed:
		case over.status == http.StatusTooManyRequests:
			id = g.idlest(caller)
		default:
			if id = g.idlest(""); id == "" {
				id = g.heaviest(caller)
			}
		}
		if id == "" {
			return over, ended
		}
		g.forget(id)
		ended = append(ended, id)
	}
	g.opening++
	g.count(caller, size)
	return sessionCap{}, ended
}

// idlest returns the session of owner ("" for any caller) idle the
// longest, with no open stream, if it has been idle for g.reclaim; else
// "". g.mu must be held.
func (g *sessionGate) idlest(owner string) string {
	var id string
	oldest := time.Now().Add(-g.reclaim)
	for sid, s := range g.sessions {
		if (owner == "" || s.caller == owner) && s.streams == 0 && !s.seen.After(oldest) {
			id, oldest = sid, s.seen
		}
	}
	return id
}

// heaviest returns the session idle the longest of the caller that holds
// the most, if that caller holds more than one session more than
// newcomer; else "". g.mu must be held.
func (g *sessionGate) heaviest(newcomer string) string {
	var top string
	for c, n := range g.callers {
		if n > g.callers[top] || n == g.callers[top] && c < top {
			top = c
		}
	}
	if top == "" || g.callers[top] <= g.callers[newcomer]+1 {
		return ""
	}
	var id string
	var oldest time.Time
	for sid, s := range g.sessions {
		if s.caller == top && (id == "" || s.seen.Before(oldest)) {
			id, oldest = sid, s.seen
		}
	}
	return id
}

// opened ends the reservation of caller, of size bytes: the handler
// opened the session id, or none ("").
func (g *sessionGate) opened(caller, id string, size int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opening--
	if id != "" {
		if _, dup := g.sessions[id]; !dup {
			g.sessions[id] = &session{caller: caller, size: size, seen: time.Now()}
			return
		}
	}
	g.uncount(caller, size)
}

// seen notes a request of session id, and, if it is a GET stream, that
// the stream opens (delta 1) or ends (-1).
func (g *sessionGate) seen(id string, stream bool, delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s, ok := g.sessions[id]; ok {
		s.seen = time.Now()
		if stream {
			s.streams += delta
		}
	}
}

// closed forgets session id, which ended.
func (g *sessionGate) closed(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.forget(id)
}

// prune forgets the sessions idle for g.idle, and those the handler no
// longer lists. g.mu must be held.
func (g *sessionGate) prune() {
	now := time.Now()
	g.prunedAt = now
	var live map[string]bool
	if g.live != nil {
		live = make(map[string]bool, len(g.sessions))
		for id := range g.live() {
			live[id] = true
		}
	}
	for id, s := range g.sessions {
		if now.Sub(s.seen) >= g.idle || live != nil && !live[id] {
			g.forget(id)
		}
	}
}

// forget forgets session id. g.mu must be held.
func (g *sessionGate) forget(id string) {
	if s, ok := g.sessions[id]; ok {
		delete(g.sessions, id)
		g.uncount(s.caller, s.size)
	}
}

// count counts one session more of caller, holding size bytes. g.mu
// must be held.
func (g *sessionGate) count(caller string, size int64) {
	g.bytes += size
	if caller != "" {
		g.callers[caller]++
		g.held[caller] += size
	}
}

// uncount counts one session of caller fewer, which held size bytes. g.mu
// must be held.
func (g *sessionGate) uncount(caller string, size int64) {
	g.bytes -= size
	if caller == "" {
		return
	}
	if g.callers[caller]--; g.callers[caller] <= 0 {
		delete(g.callers, caller)
		delete(g.held, caller)
	} else {
		g.held[caller] -= size
	}
}

// A statusWriter remembers the status its handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes the response, for handlers that assert http.Flusher.
func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// deleteSession returns the function that ends a session of h, a handler
// of the streamable HTTP transport, as its client would: with a DELETE
// naming it. The answer is discarded.
func deleteSession(h http.Handler) func(id string) {
	return func(id string) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, "/", nil)
		if err != nil {
			return
		}
		req.Header.Set(protocol.HeaderSessionID, id)
		h.ServeHTTP(&discard{header: http.Header{}}, req)
	}
}

// A discard is an http.ResponseWriter that keeps nothing.
type discard struct{ header http.Header }

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}
