package resource

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/mcpres/mcpres/internal/uri"
	"github.com/mcpres/mcpres/resource/internal/delivery"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every handler runs the same steps in the same order, each a function
// below that returns nil or a *failure:
//
//	spend rate budget -> check URI -> resolve -> authorize -> call user function
//	  -> finish (fill defaults, MIME check, caching hints) -> access log
//
// A handler opens a call with begin, runs the steps its method needs, and
// closes the call with end, which turns its Decision into the answer, the
// log record and the access record (see errors.go). An Observer, if the
// registry has one, is told of the call at both ends (see observer.go).

// A call is one request on its way through the pipeline: what it asks,
// who asks, and what its access record needs.
type call struct {
	ctx        context.Context
	op         Operation
	method     string // the JSON-RPC method
	target     string // what the access record names: the URI, list method or template
	req        mcp.Request
	session    delivery.Key // go-sdk's session, or another server's (WithCaller); zero for none
	caller     *Caller      // what an adapter told of the caller (WithCaller); nil for go-sdk's requests
	identity   string
	start      time.Time // when the access record began; zero if access records are off
	withheld   int       // entries the Authorizer left out of a list or completion
	unlistable int       // resources providers listed that a list page left out
	obs        *Call     // what the Observer is told; nil without one
}

// begin opens a call of method for op on target. req is nil for a direct
// call without a request; it must be a nil interface then, not a typed
// nil. A call without a go-sdk session is one of the caller ctx names,
// if it names one (WithCaller).
func (r *Registry) begin(ctx context.Context, op Operation, method, target string, req mcp.Request, session *mcp.ServerSession) call {
	c := call{ctx: ctx, op: op, method: method, target: target, req: req, session: delivery.Key{SDK: session}}
	if session == nil {
		if c.caller = callerOf(ctx); c.caller != nil {
			c.session.Other = c.caller.Session
		}
	}
	c.start = r.accessLogStart(ctx)
	if req != nil {
		c.identity = r.opts.Identity(ctx, req)
	}
	r.observe(&c)
	return c
}

// open is the first step of every call: a closed registry answers nothing.
func (r *Registry) open() error {
	if r.closed.Load() {
		return errClosed
	}
	return nil
}

// spend takes one token of the call's budget in l; a nil l limits
// nothing.
func (r *Registry) spend(c *call, l *limiter) error {
	if l == nil {
		return nil
	}
	if ok, wait := l.allow(r.opts.RateKey(c.ctx, c.req, c.identity), time.Now()); !ok {
		return limited(wait)
	}
	return nil
}

// checkURI checks a URI a client sent: absolute RFC 3986, within
// Options.MaxURILength, without userinfo.
func (r *Registry) checkURI(u string) error {
	if err := uri.Check(u, r.opts.MaxURILength); err != nil {
		return invalid("invalid resource URI: %v", err)
	}
	return nil
}

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

// settings are what the options t was added with set.
func (t target) settings() *entrySettings {
	if t.static != nil {
		if t.static.settings == nil {
			return &noSettings
		}
		return t.static.settings
	}
	return &t.tmpl.entrySettings
}

// access is the Access to t, the target of the call's URI, for op.
func (t target) access(c *call, op Operation, uri string) Access {
	a := Access{Op: op, URI: uri, Identity: c.identity, Request: c.req}
	if t.tmpl != nil {
		a.Template, a.Vars = t.tmpl.tmpl.URITemplate, t.vars
	}
	return a
}

// matched tells the Observer, if any, the template t matched.
func (c *call) matched(t target) {
	if c.obs != nil && t.tmpl != nil {
		c.obs.Template = t.tmpl.tmpl.URITemplate
	}
}

// mimeChecked tells the Observer, if any, what the MIME check said of one
// content: a mismatch in any content is the read's.
func (c *call) mimeChecked(result string) {
	if c.obs != nil && c.obs.MIME != "mismatch" {
		c.obs.MIME = result
	}
}

// resolve finds what u names: an exact static resource first, then the
// most specific template that matches. A template match that binds an
// unsafe path, where the template asks for safe paths, names nothing.
func (r *Registry) resolve(u string) (target, error) {
	if e, ok := r.static.Get(u); ok {
		return target{static: e}, nil
	}
	r.mu.RLock()
	e, vars, ok := r.router.Lookup(u)
	r.mu.RUnlock()
	if !ok || (e.safePaths && !safePaths(vars)) {
		return target{}, errNotFound
	}
	return target{tmpl: e, vars: vars}, nil
}

// template returns the template resolve would find for u, which names no
// static resource, without the variables it binds; nil where resolve
// finds none. Unlike resolve it allocates nothing for a URI without
// percent-escapes that a template without WithSafePaths matches, so
// that checking every resource a provider lists costs a page little.
func (r *Registry) template(u string) *templateEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.router.Find(u)
	if ok && e.safePaths {
		// Only the variables tell whether the paths are safe: Lookup
		// chooses e again, under the same lock.
		_, vars, _ := r.router.Lookup(u)
		ok = safePaths(vars)
	}
	if !ok {
		return nil
	}
	return e
}

// resolveChecked is checkURI then resolve, but a URI that names a static
// resource exactly is resolved without the check: Add checked it.
func (r *Registry) resolveChecked(u string) (target, error) {
	if e, ok := r.static.Get(u); ok {
		return target{static: e}, nil
	}
	if err := r.checkURI(u); err != nil {
		return target{}, err
	}
	return r.resolve(u)
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

// authorize asks Options.Authorize about a: nil allows, else the denial,
// with the Authorizer's reason. A failing or panicking Authorizer denies,
// and is logged.
func (r *Registry) authorize(c *call, a Access) error {
	if r.opts.Authorize == nil {
		return nil
	}
	if reason := r.decide(c.ctx, c.session, a); reason != nil {
		return denied(reason)
	}
	return nil
}

// decide asks Options.Authorize, which must be set, about a, asked in a
// request of session (zero for none), and returns
// its reason to deny, or nil. An error other than ErrDenied, or a panic,
// is a failure of the Authorizer: it denies, and is logged at Error.
func (r *Registry) decide(ctx context.Context, session delivery.Key, a Access) (reason error) {
	defer func() {
		if p := recover(); p != nil {
			reason = fmt.Errorf("authorizer panicked: %v", p)
		}
		if reason != nil {
			r.logAuthorizerFailure(ctx, session, a, reason)
		}
	}()
	return r.opts.Authorize(ctx, a)
}

// callUser calls fn, the user's function for the call, turning a panic
// into an error that says where it happened.
func callUser[T any](what string, fn func() (T, error)) (res T, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero T
			res, err = zero, fmt.Errorf("%s panicked: %v\n%s", what, p, debug.Stack())
		}
	}()
	return fn()
}
