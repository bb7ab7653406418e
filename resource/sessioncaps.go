package resource

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpres/mcpres/internal/burst"
	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A sessionGate holds the stateful sessions NewHTTPHandler's go-sdk
// handler opens for server under the caps of SessionOptions: those of
// the registry mounted on server, or the defaults. go-sdk opens a session
// for every POST without an Mcp-Session-Id header, and says nothing when
// one ends (behaviour 7 of gosdk.go), so the gate counts a session from
// such a POST, learns its ID from the answer's header, forgets it when
// the client deletes it, and forgets the others that ended (timed out,
// closed by the server) by asking the server which are open, when a cap
// is reached, at most once every pruneEvery.
type sessionGate struct {
	server *mcp.Server

	mu       sync.Mutex
	owner    map[string]string // open session ID → its caller
	callers  map[string]int    // open and opening sessions by caller
	opening  int               // POSTs that may open a session, under way
	prunedAt time.Time

	refusals burst.Counter
}

// pruneEvery is how often at most a gate at a cap asks the server which
// sessions are open: a session that ended without the client's word
// frees its place within it, once a request needs the place.
const pruneEvery = time.Second

func newSessionGate(server *mcp.Server) *sessionGate {
	return &sessionGate{server: server, owner: make(map[string]string), callers: make(map[string]int)}
}

// open serves req, a POST without a session ID, with next, if the caps
// let its caller open one more session, and counts the session go-sdk
// opens for it; otherwise it answers 429 (the caller's cap) or 503 (the
// total) with a JSON-RPC error, and next never sees req.
func (g *sessionGate) open(w http.ResponseWriter, req *http.Request, next http.Handler) {
	r := registryOf(g.server)
	caps, logger := SessionOptions{}, slog.Default()
	if r != nil {
		caps, logger = r.opts.Sessions, r.opts.Logger
	}
	caps.MaxPerCaller = cmp.Or(caps.MaxPerCaller, DefaultMaxSessionsPerCaller)
	caps.Max = cmp.Or(caps.Max, DefaultMaxSessions)
	caller := httpCaller(req, r)
	if status, max := g.reserve(caller, caps); status != 0 {
		kind := "sessions per caller"
		if status == http.StatusServiceUnavailable {
			kind = "sessions in all"
		}
		logCapped(req.Context(), logger, &g.refusals, kind, caller, max)
		refuseSession(w, status, kind, max)
		return
	}
	next.ServeHTTP(w, req)
	g.opened(caller, w.Header().Get(protocol.HeaderSessionID))
}

// reserve counts a session caller may open, and returns 0; or, if a cap
// stops it, the HTTP status to refuse it with and the cap.
func (g *sessionGate) reserve(caller string, caps SessionOptions) (status, max int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	over := func() (int, int) {
		switch {
		case len(g.owner)+g.opening >= caps.Max:
			return http.StatusServiceUnavailable, caps.Max
		case caller != "" && g.callers[caller] >= caps.MaxPerCaller:
			return http.StatusTooManyRequests, caps.MaxPerCaller
		}
		return 0, 0
	}
	if status, _ := over(); status != 0 && time.Since(g.prunedAt) >= pruneEvery {
		g.prune()
	}
	if status, max := over(); status != 0 {
		return status, max
	}
	g.opening++
	if caller != "" {
		g.callers[caller]++
	}
	return 0, 0
}

// opened ends the reservation of caller: go-sdk opened the session id,
// or none ("").
func (g *sessionGate) opened(caller, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opening--
	if id != "" {
		if _, dup := g.owner[id]; !dup {
			g.owner[id] = caller
			return
		}
	}
	g.uncount(caller)
}

// closed forgets session id, which its client deleted.
func (g *sessionGate) closed(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if caller, ok := g.owner[id]; ok {
		delete(g.owner, id)
		g.uncount(caller)
	}
}

// prune forgets the sessions the server no longer lists. g.mu must be
// held.
func (g *sessionGate) prune() {
	g.prunedAt = time.Now()
	live := make(map[string]bool, len(g.owner))
	for s := range g.server.Sessions() {
		live[s.ID()] = true
	}
	for id, caller := range g.owner {
		if !live[id] {
			delete(g.owner, id)
			g.uncount(caller)
		}
	}
}

// uncount counts one session of caller fewer. g.mu must be held.
func (g *sessionGate) uncount(caller string) {
	if caller == "" {
		return
	}
	if g.callers[caller]--; g.callers[caller] <= 0 {
		delete(g.callers, caller)
	}
}

// httpCaller names the caller of req, which may open a session, as
// Options.RateKey names the caller of its requests: r's RateKey and
// Identity (the defaults without a registry) are asked about an
// initialize request that carries req's token and headers, and no
// session. A function that panics on it names no caller.
func httpCaller(req *http.Request, r *Registry) (caller string) {
	ctx := req.Context()
	probe := &mcp.ServerRequest[*mcp.InitializeParams]{Extra: &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(ctx), Header: req.Header}}
	if r == nil {
		return DefaultRateKey(ctx, probe, DefaultIdentity(ctx, probe))
	}
	defer func() {
		if recover() != nil {
			caller = ""
		}
	}()
	return r.callerOf(ctx, probe)
}

// refuseSession answers a request refused for the cap named kind, max,
// with status and a JSON-RPC error without id, as the transport allows
// ("The HTTP response body MAY comprise a JSON-RPC error response that
// has no id", 2025-11-25 and 2026-07-28, transports). Its code is
// CodeRateLimited, with retryAfterMs: the place may free up (the total)
// or the caller may close a session of its own.
func refuseSession(w http.ResponseWriter, status int, kind string, max int) {
	err := rateLimitedError(protocol.MethodInitialize, pruneEvery).(*jsonrpc.Error)
	err.Message = "Too many sessions: the cap of " + kind + " (" + strconv.Itoa(max) + ") is reached; end a session (DELETE) or try later"
	body, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{Error: err})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(status)
	w.Write(body)
}

// registries maps each mounted server to its registry, for the caps of
// NewHTTPHandler; a closed registry leaves it.
var registries sync.Map // *mcp.Server → *Registry

// registryOf returns the registry mounted on s, or nil.
func registryOf(s *mcp.Server) *Registry {
	r, _ := registries.Load(s)
	reg, _ := r.(*Registry)
	return reg
}

// withClientAddress records the address of req's client, as
// WithClientAddress without a header does, unless one is recorded
// already: the caps then tell anonymous callers apart.
func withClientAddress(req *http.Request) *http.Request {
	if ClientAddress(req.Context()) != "" {
		return req
	}
	addr := clientAddress(req, "")
	if addr == "" {
		return req
	}
	return req.WithContext(context.WithValue(req.Context(), clientAddressKey{}, addr))
}
