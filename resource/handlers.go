package resource

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/mcpres/mcpres/internal/uri"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The handlers below are what Mount serves. Each takes and returns go-sdk
// types, so a server that routes requests itself can call them directly.
// Every error they return is a *jsonrpc.Error ready to send.

// A target is what a URI resolved to: a static resource, or a template and
// the variables it matched.
type target struct {
	static *staticEntry
	tmpl   *templateEntry
	vars   Vars
}

func (t target) mimeType() string {
	if t.static != nil {
		return t.static.res.MIMEType
	}
	return t.tmpl.tmpl.MIMEType
}

func (t target) cache() *Cache {
	if t.static != nil {
		return t.static.cache
	}
	return t.tmpl.cache
}

// resolve finds what u names: an exact static resource first, then the
// most specific template that matches. A template match that binds an
// unsafe path, where the template asks for safe paths, names nothing.
func (r *Registry) resolve(u string) (target, bool) {
	if e, ok := r.static.Get(u); ok {
		return target{static: e}, true
	}
	r.mu.RLock()
	e, vars, ok := r.router.Lookup(u)
	r.mu.RUnlock()
	if !ok || (e.safePaths && !safePaths(vars)) {
		return target{}, false
	}
	return target{tmpl: e, vars: vars}, true
}

// safePaths reports whether every value vars holds passes
// uritemplate.CheckPath.
func safePaths(vars Vars) bool {
	for _, name := range vars.Template().Varnames() {
		for _, v := range vars.List(name) {
			if uritemplate.CheckPath(v) != nil {
				return false
			}
		}
	}
	return true
}

// ReadResource answers resources/read. It spends one of the session's
// read tokens, if Options.RateLimits limits reads (CodeRateLimited if
// there is none left); checks the URI (-32602 saying why if it is not an
// absolute RFC 3986 URI, is longer than Options.MaxURILength, or carries
// userinfo); resolves it (a static resource, else the most specific
// matching template); asks Options.Authorize, if set; calls the read
// function; fills in each content's URI and MIME type where the read
// function left them empty (the declared type, else mimetype.Detect);
// checks each content against its MIME type under Options.MIME (see
// MIMEPolicy); and sets the caching hint. Each read is written to the
// audit log (see AuditOptions).
//
// An unknown URI, one the Authorizer denies, or a read function that
// reports ErrNotFound, is answered as described at NotFoundCode, all
// alike. A read function that fails, panics, or returns no contents is
// answered with -32603 "Internal error"; the detail is logged with the
// session ID and URI.
func (r *Registry) ReadResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if req == nil || req.Params == nil {
		return nil, invalidParams("resources/read needs params with a uri")
	}
	start, auditing := r.auditing(ctx)
	identity := r.identity(ctx, req)
	res, d, err := r.read(ctx, req, identity)
	if auditing {
		r.audit(ctx, OpRead, req.Params.URI, req.Session, identity, d, start)
	}
	return res, err
}

// read answers resources/read for ReadResource, and says what it decided.
func (r *Registry) read(ctx context.Context, req *mcp.ReadResourceRequest, identity string) (*mcp.ReadResourceResult, decision, error) {
	u := req.Params.URI
	if err := r.reads.spend("resources/read", req.Session, identity); err != nil {
		return nil, decision{what: decisionLimited}, err
	}
	if err := r.checkRequestURI(u); err != nil {
		return nil, decision{what: decisionInvalid}, err
	}
	t, ok := r.resolve(u)
	if !ok {
		return nil, decision{what: decisionNotFound}, r.notFoundError(req.ProtocolVersion(), u)
	}
	if err := r.authorize(ctx, t.access(OpRead, u, identity, req)); err != nil {
		return nil, decision{what: decisionDenied, reason: err}, r.notFoundError(req.ProtocolVersion(), u)
	}
	got, err := r.callRead(ctx, req, t)
	switch {
	case isNotFound(err):
		return nil, decision{what: decisionNotFound}, r.notFoundError(req.ProtocolVersion(), u)
	case err != nil:
		if _, ok := err.(*jsonrpc.Error); ok {
			return nil, decision{what: decisionFailed}, err // a deliberate protocol error from the read function
		}
		r.logFailure(ctx, req, "resource read failed", slog.Any("error", err))
		return nil, decision{what: decisionFailed}, errInternal
	case got == nil || len(got.Contents) == 0:
		r.logFailure(ctx, req, "resource read returned no contents; return resource.ErrNotFound for a missing resource")
		return nil, decision{what: decisionFailed}, errInternal
	}
	res, err := r.finishRead(ctx, req, got, t)
	if err != nil {
		return nil, decision{what: decisionFailed}, err
	}
	return res, decision{what: decisionAllowed}, nil
}

// callRead calls the target's read function, turning a panic into an error.
func (r *Registry) callRead(ctx context.Context, req *mcp.ReadResourceRequest, t target) (res *mcp.ReadResourceResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("read function panicked: %v\n%s", p, debug.Stack())
		}
	}()
	if t.static != nil {
		return t.static.read(ctx, req)
	}
	return t.tmpl.read(ctx, req, t.vars)
}

// finishRead returns a copy of res with each content's URI and MIME type
// filled in, checked against its MIME type under Options.MIME, and the
// caching hint set. The read function's result is not modified: it may be
// shared between calls.
func (r *Registry) finishRead(ctx context.Context, req *mcp.ReadResourceRequest, res *mcp.ReadResourceResult, t target) (*mcp.ReadResourceResult, error) {
	u := req.Params.URI
	out := *res
	out.Contents = make([]*mcp.ResourceContents, len(res.Contents))
	declared := t.mimeType()
	for i, c := range res.Contents {
		if c == nil {
			r.logFailure(ctx, req, "resource read returned a nil content entry")
			return nil, errInternal
		}
		c = fillContent(c, u, declared)
		if err := r.checkContent(ctx, req, c); err != nil {
			return nil, err
		}
		out.Contents[i] = c
	}
	if out.TTLMs == 0 && out.CacheScope == "" {
		c := r.opts.Cache
		if ec := t.cache(); ec != nil {
			c = *ec
		}
		c.apply(&out.Cacheable)
	} else if out.CacheScope == "" {
		out.CacheScope = string(Public)
	}
	r.privateIfAuthorized(&out.Cacheable)
	return &out, nil
}

// privateIfAuthorized sets c's scope to private if the registry has an
// Authorizer: a result another caller might not be allowed must not be
// served to them from a shared cache.
func (r *Registry) privateIfAuthorized(c *mcp.Cacheable) {
	if r.opts.Authorize != nil {
		c.CacheScope = string(Private)
	}
}

// checkRequestURI checks a URI a client sent: -32602 saying why if it is
// not an absolute RFC 3986 URI within Options.MaxURILength without
// userinfo.
func (r *Registry) checkRequestURI(u string) error {
	if err := uri.Check(u, r.opts.MaxURILength); err != nil {
		return invalidParams("invalid resource URI: %v", err)
	}
	return nil
}

func (r *Registry) logFailure(ctx context.Context, req *mcp.ReadResourceRequest, msg string, attrs ...slog.Attr) {
	attrs = append(attrs, slog.String("uri", req.Params.URI), slog.String("session_id", sessionID(req.Session)))
	r.opts.Logger.LogAttrs(ctx, slog.LevelError, msg, attrs...)
}

func sessionID(s *mcp.ServerSession) string {
	if s == nil {
		return ""
	}
	return s.ID()
}
