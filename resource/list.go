package resource

import (
	"context"
	"errors"
	"strconv"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource/internal/delivery"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// index lists a sorted index of registry entries as a cursor.Provider of
// what each entry describes: the static resources' metadata, or the
// templates'.
type index[E, T any] struct {
	entries  *cursor.Sorted[E]
	describe func(E) T
}

func (x index[E, T]) List(ctx context.Context, after string, limit int) ([]cursor.Item[T], error) {
	items, _ := x.entries.List(ctx, after, limit)
	out := make([]cursor.Item[T], len(items))
	for i, it := range items {
		out[i] = cursor.Item[T]{Key: it.Key, Value: x.describe(it.Value)}
	}
	return out, nil
}

// listable is the valid function of a resources/list page: it drops the
// entries checkedList left out.
func listable(res *mcp.Resource) bool { return res != nil }

func (e *staticEntry) describe() *mcp.Resource           { return &e.res }
func (e *templateEntry) describe() *mcp.ResourceTemplate { return e.tmpl }

// ListResources answers resources/list: the static resources in URI
// order, then each provider's and template instance list's resources, in
// the order of their names and each in its own key order, Options.PageSize
// at a time. Its cursors are keyset positions, signed (Options.Cursors)
// and bound to resources/list, the caller's identity (Options.Identity)
// and Options.CursorScope: a walk never skips or repeats an entry that
// exists throughout it, whatever is added or removed meanwhile.
// nextCursor is omitted on the last page. Cursors are encrypted: they
// reveal nothing of the position (package cursor).
//
// With Options.Authorize set, the result is private and holds only
// resources the caller may see: a page passes over the others and looks
// ahead for one more allowed entry before it promises a next page, so
// that the number of pages, their sizes and their cursors' positions do
// not depend on entries the caller may not see, as long as one page
// scans at most Options.ScanBudget entries. Past the budget the page ends
// short (possibly empty) with a cursor after the last entry scanned: the
// walk still shows each allowed entry once, but in more pages.
//
// A provider's or instance list's resource is checked as Add checks a
// static resource (see ListFunc): one the registry would not read, or
// without a name, is left out, as if it were not listed, logged once at
// Error for its list and the reason, and counted in the Observer's
// Call.Unlistable. One without a MIME type is listed with its template's.
//
// A nil request or params, or a "" cursor, means the first page. A cursor
// this registry did not issue for resources/list and this scope, or one
// that has expired, is answered with -32602 "invalid cursor". A failing
// provider, or one that lists keys out of order or a nil resource, is
// answered with -32603, logged. The returned resources must not be
// modified.
func (r *Registry) ListResources(ctx context.Context, req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	c, pos := beginList(r, ctx, protocol.MethodListResources, req, func(p *mcp.ListResourcesParams) string { return p.Cursor })
	r.mu.RLock()
	sources := r.sources
	r.mu.RUnlock()
	var valid func(*mcp.Resource) bool
	if len(sources) > 1 { // providers' resources, which checkedList may leave out
		valid = listable
	}
	page, next, err := listPage(r, &c, pos, sources, valid, resourceAccess)
	if err = r.end(&c, err); err != nil {
		return nil, err
	}
	res := &mcp.ListResourcesResult{Resources: page, NextCursor: next}
	r.opts.Cache.apply(&res.Cacheable)
	r.privateIfAuthorized(&res.Cacheable)
	return res, nil
}

// ListResourceTemplates answers resources/templates/list: the templates in
// URI-template order, Options.PageSize at a time, with cursors as
// ListResources (bound to resources/templates/list). The returned
// templates must not be modified.
func (r *Registry) ListResourceTemplates(ctx context.Context, req *mcp.ListResourceTemplatesRequest) (*mcp.ListResourceTemplatesResult, error) {
	c, pos := beginList(r, ctx, protocol.MethodListTemplates, req, func(p *mcp.ListResourceTemplatesParams) string { return p.Cursor })
	sources := []cursor.Source[*mcp.ResourceTemplate]{{Provider: index[*templateEntry, *mcp.ResourceTemplate]{&r.templates, (*templateEntry).describe}}}
	page, next, err := listPage(r, &c, pos, sources, nil, templateAccess)
	if err = r.end(&c, err); err != nil {
		return nil, err
	}
	res := &mcp.ListResourceTemplatesResult{ResourceTemplates: page, NextCursor: next}
	r.opts.Cache.apply(&res.Cacheable)
	r.privateIfAuthorized(&res.Cacheable)
	return res, nil
}

// beginList opens a call of a list method for req, which may be nil, and
// returns it with the request's cursor, which cursorOf reads from its
// params, if it has any.
func beginList[P mcp.Params](r *Registry, ctx context.Context, method string, req *mcp.ServerRequest[P], cursorOf func(P) string) (call, string) {
	if req == nil {
		return r.begin(ctx, OpList, method, method, nil, nil), ""
	}
	c := r.begin(ctx, OpList, method, method, req, req.Session)
	var none P
	if any(req.Params) == any(none) {
		return c, ""
	}
	return c, cursorOf(req.Params)
}

// listPage runs the steps of a list method: one page of sources from
// cursor pos, and the next page's cursor. The cursor is bound to the
// call's caller. valid, if not nil, says which entries may be listed at
// all; the others are passed over, and counted in c.unlistable. With an
// Authorizer, the page holds only entries it allows too (each decided as
// the Access that access makes of it and caller, the caller's Access to
// the list), and counts the others in c.withheld. Entries are passed over
// within Options.ScanBudget (cursor.PaginateFiltered).
func listPage[T any](r *Registry, c *call, pos string, sources []cursor.Source[T],
	valid func(T) bool, access func(*Registry, Access, T) Access) ([]T, string, error) {
	if err := r.open(); err != nil {
		return nil, "", err
	}
	req := r.pageRequest(c, pos)
	var f *listFilter[T]
	var keep func(T) bool
	if valid != nil || r.opts.Authorize != nil {
		f = &listFilter[T]{r: r, ctx: c.ctx, session: c.session.SDK, valid: valid}
		if r.opts.Authorize != nil {
			f.access, f.caller = access, Access{Op: OpList, Identity: c.identity, Request: c.req}
		}
		keep = f.keep
		req.Scan = r.opts.ScanBudget
	}
	page, next, err := cursor.PaginateFiltered(c.ctx, r.cursors, req, sources, keep)
	if errors.Is(err, cursor.ErrInvalid) {
		f := invalid("invalid cursor")
		f.cause = err // why, for the log only: the client learns nothing more
		return nil, "", f
	}
	if err != nil {
		return nil, "", failed("resource list failed", err)
	}
	if f != nil {
		c.withheld, c.unlistable = f.refused, f.invalid
	}
	if c.obs != nil {
		c.obs.Entries = len(page)
	}
	return page, next, nil
}

// A listFilter decides which entries of a list may be listed at all, and
// which of them its caller may see, and counts the others.
type listFilter[T any] struct {
	r       *Registry
	ctx     context.Context
	session *mcp.ServerSession // go-sdk's; another server's is named in ctx
	caller  Access
	access  func(*Registry, Access, T) Access // nil: no Authorizer
	valid   func(T) bool                      // nil: every entry may be listed
	invalid int                               // entries valid refused
	refused int                               // entries the Authorizer refused
}

func (f *listFilter[T]) keep(v T) bool {
	if f.valid != nil && !f.valid(v) {
		f.invalid++ // not the Authorizer's to decide: not counted as withheld
		return false
	}
	if f.access != nil && f.r.decide(f.ctx, delivery.Key{SDK: f.session}, f.access(f.r, f.caller, v)) != nil {
		f.refused++
		return false
	}
	return true
}

// resourceAccess is the Access to show res in resources/list: as a read of
// it would be decided.
func resourceAccess(r *Registry, caller Access, res *mcp.Resource) Access {
	caller.URI = res.URI
	if t, err := r.resolve(res.URI); err == nil && t.tmpl != nil { // a listed URI no entry reads is decided on its own
		caller.Template, caller.Vars = t.tmpl.tmpl.URITemplate, t.vars
	}
	return caller
}

// templateAccess is the Access to show t in resources/templates/list.
func templateAccess(_ *Registry, caller Access, t *mcp.ResourceTemplate) Access {
	caller.Template = t.URITemplate
	return caller
}

// pageRequest is the cursor.Request for the page of c's list method from
// cursor pos. The cursor's scope is the caller's identity and
// Options.CursorScope's answer, length-prefixed so that no two pairs give
// the same scope.
func (r *Registry) pageRequest(c *call, pos string) cursor.Request {
	pr := cursor.Request{Method: c.method, Cursor: pos, Size: r.opts.PageSize, Scope: c.identity}
	if r.opts.CursorScope != nil && c.req != nil {
		pr.Scope = strconv.Itoa(len(c.identity)) + ":" + c.identity + r.opts.CursorScope(c.ctx, c.req)
	}
	return pr
}
