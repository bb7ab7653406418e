package serve

// This file holds the caps on event streams: the 2026-07-28
// subscriptions/listen streams one caller holds open, and the streams of
// every caller together, listens and the GET streams of older sessions.
// A stream is open until the handler returns. A listen is a POST whose
// Mcp-Method header names subscriptions/listen; the edge has checked the
// header against the body.
//
// At the total, the gate closes the oldest stream of the caller that
// holds the most, if it holds more than one stream more than the
// newcomer: it cancels that request's context, and the handler ends the
// stream. Else the newcomer gets 503.

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/internal/reqmeta"
)

// A streamGate counts the open streams, by caller.
type streamGate struct {
	max, maxListensPerCaller int

	mu       sync.Mutex
	open     int                             // open streams, of every caller
	byCaller map[string]map[*stream]struct{} // open streams, of both kinds, but the caller ""'s
	listens  map[string]int                  // open listens
}

// A stream is one open event stream.
type stream struct {
	caller string
	listen bool
	opened time.Time
	cancel context.CancelFunc
	closed bool // by the gate, to make room
}

// The reasons take refuses a stream.
const (
	admitted = iota
	overListens
	overTotal
)

func newStreamGate(o *Options) *streamGate {
	return &streamGate{max: o.MaxStreams, maxListensPerCaller: o.MaxListensPerCaller,
		byCaller: make(map[string]map[*stream]struct{}), listens: make(map[string]int)}
}

// isListen reports whether req, of 2026-07-28 or later, opens a listen
// stream.
func isListen(req *http.Request) bool {
	return req.Method == http.MethodPost && req.Header.Get(protocol.HeaderMethod) == protocol.MethodListen
}

// serve serves req, a stream of caller (a listen, or a session's GET
// stream), with next, under the caps. A listen over the caller's cap is
// refused with 429, as a session over the caller's cap is, and the
// request's id, so that the client can tell which listen; a stream over
// the total, with 503.
func (g *streamGate) serve(w http.ResponseWriter, req *http.Request, next http.Handler, caller string, listen bool, log *refusals) {
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	s := &stream{caller: caller, listen: listen, opened: time.Now(), cancel: cancel}
	why, closed := g.take(s)
	if closed != nil {
		closed.cancel()
		log.shed(ctx, "streams", caller)
	}
	switch why {
	case overListens:
		log.capped(ctx, "listen streams per caller", caller, g.maxListensPerCaller)
		body, _ := io.ReadAll(req.Body) // the edge read it already
		refuseCappedID(w, http.StatusTooManyRequests, reqmeta.ID(body), protocol.MethodListen,
			"Too many listen streams: this caller holds "+strconv.Itoa(g.maxListensPerCaller)+" subscriptions/listen streams open, the most it may; close one first", time.Second)
		return
	case overTotal:
		log.capped(ctx, "streams in all", caller, g.max)
		method := "GET"
		if listen {
			method = protocol.MethodListen
		}
		refuseCapped(w, http.StatusServiceUnavailable, method,
			"Too many streams: the cap of streams in all ("+strconv.Itoa(g.max)+") is reached; try later", pruneEvery)
		return
	}
	defer g.give(s)
	next.ServeHTTP(w, req.WithContext(ctx))
}

// take counts s, and returns admitted; or why it is refused. To make room
// it may close another stream, closed, whose context the caller must
// then cancel. The caller "" is held by the total only.
func (g *streamGate) take(s *stream) (why int, closed *stream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s.listen && s.caller != "" && g.listens[s.caller] >= g.maxListensPerCaller {
		return overListens, nil
	}
	if g.open >= g.max {
		if closed = g.heaviest(s.caller); closed == nil {
			return overTotal, nil
		}
		g.remove(closed)
		closed.closed = true
	}
	g.open++
	if s.caller != "" {
		mine := g.byCaller[s.caller]
		if mine == nil {
			mine = make(map[*stream]struct{})
			g.byCaller[s.caller] = mine
		}
		mine[s] = struct{}{}
		if s.listen {
			g.listens[s.caller]++
		}
	}
	return admitted, closed
}

// heaviest returns the oldest stream of the caller that holds the most,
// if it holds more than one stream more than newcomer; else nil. g.mu
// must be held.
func (g *streamGate) heaviest(newcomer string) *stream {
	var top string
	for c, streams := range g.byCaller {
		if n := len(streams); n > len(g.byCaller[top]) || n == len(g.byCaller[top]) && c < top {
			top = c
		}
	}
	if top == "" || len(g.byCaller[top]) <= len(g.byCaller[newcomer])+1 {
		return nil
	}
	var oldest *stream
	for s := range g.byCaller[top] {
		if oldest == nil || s.opened.Before(oldest.opened) {
			oldest = s
		}
	}
	return oldest
}

// give counts s no more, once its handler returned.
func (g *streamGate) give(s *stream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !s.closed {
		g.remove(s)
	}
}

// remove forgets s. g.mu must be held.
func (g *streamGate) remove(s *stream) {
	g.open--
	if s.caller == "" {
		return
	}
	if mine := g.byCaller[s.caller]; len(mine) <= 1 {
		delete(g.byCaller, s.caller)
	} else {
		delete(mine, s)
	}
	if s.listen {
		if g.listens[s.caller]--; g.listens[s.caller] <= 0 {
			delete(g.listens, s.caller)
		}
	}
}
