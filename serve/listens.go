package serve

// This file holds the cap on the 2026-07-28 subscriptions/listen streams
// one caller holds open. A listen is a POST whose Mcp-Method header names
// subscriptions/listen; the edge has checked the header against the
// body. Its stream is open until the handler returns.

import (
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/internal/reqmeta"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A listenGate counts the open listen streams of each caller.
type listenGate struct {
	maxPerCaller int

	mu sync.Mutex
	n  map[string]int
}

// isListen reports whether req, of 2026-07-28 or later, opens a listen
// stream.
func isListen(req *http.Request) bool {
	return req.Method == http.MethodPost && req.Header.Get(protocol.HeaderMethod) == protocol.MethodListen
}

// serve serves req, a listen of caller, with next, unless caller holds
// the most listen streams it may: then it answers -32602 with the
// request's id, as a server refuses a listen it will not open. The
// caller "" is not counted.
func (g *listenGate) serve(w http.ResponseWriter, req *http.Request, next http.Handler, caller string, log *refusals) {
	if !g.take(caller) {
		log.capped(req.Context(), "listen streams per caller", caller, g.maxPerCaller)
		body, _ := io.ReadAll(req.Body) // the edge read it already
		refuse(w, http.StatusOK, reqmeta.ID(body), jsonrpc.CodeInvalidParams,
			"cannot listen: this caller holds "+strconv.Itoa(g.maxPerCaller)+" subscriptions/listen streams open, the most it may; close one first", nil)
		return
	}
	defer g.give(caller)
	next.ServeHTTP(w, req)
}

// take counts one more stream for caller, unless it holds the most.
func (g *listenGate) take(caller string) bool {
	if caller == "" {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n[caller] >= g.maxPerCaller {
		return false
	}
	if g.n == nil {
		g.n = make(map[string]int)
	}
	g.n[caller]++
	return true
}

// give counts one stream of caller fewer.
func (g *listenGate) give(caller string) {
	if caller == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n[caller]--; g.n[caller] <= 0 {
		delete(g.n, caller)
	}
}
