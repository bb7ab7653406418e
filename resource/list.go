package resource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpres/mcpres/cursor"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A ListFunc lists resources that are not registered one by one, such as
// the rows of a table or the files of a directory: it returns up to limit
// resources whose keys come after after ("" for the first), in strictly
// increasing key order (bytewise, as Go compares strings), with non-empty
// keys. Returning fewer than limit means there are no more. For a table it
// maps onto
//
//	SELECT id, … FROM t WHERE id > $after ORDER BY id LIMIT $limit
//
// (with ids zero-padded, or a text key, so that the database's order is
// the bytewise one). A key is often the resource's URI or the row's id;
// it is never shown to clients.
type ListFunc = func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error)

// WithInstances makes a template's instances part of resources/list:
// list names the resources it reads, in list's own key order. They come
// after the static resources and are paged with them (see
// Registry.ListResources). Add refuses it for static resources.
func WithInstances(list ListFunc) EntryOption {
	return func(e *entryConfig) error {
		if list == nil {
			return errors.New("nil instance list")
		}
		e.instances = list
		return nil
	}
}

// AddProvider adds a source of resources to resources/list, or replaces
// the one with the same name. Providers' resources come after the static
// resources, in the order of the providers' names (and of template
// instance lists, named by their URI template), each in its own key order.
//
// Reading them is up to templates (or static resources) that match their
// URIs; a provider only lists. After the data behind a provider changes,
// call NotifyListChanged.
//
// AddProvider returns an error, and changes nothing, if name is empty, if
// list is nil, or if a template's instance list has that name.
func (r *Registry) AddProvider(name string, list ListFunc) error {
	if name == "" || list == nil {
		return errors.New("resource: AddProvider needs a name and a list function")
	}
	r.mu.Lock()
	if e, ok := r.templates.Get(name); ok && e.listsInstances {
		r.mu.Unlock()
		return fmt.Errorf("resource: AddProvider %q: a template's instance list has that name", name)
	}
	r.setSource(name, list)
	r.mu.Unlock()
	r.notify.changed()
	return nil
}

// RemoveProvider removes the provider with the given name and reports
// whether there was one. Template instance lists go with their template
// (RemoveTemplates).
func (r *Registry) RemoveProvider(name string) bool {
	r.mu.Lock()
	_, ok := r.providers[name]
	if e, isTmpl := r.templates.Get(name); ok && isTmpl && e.listsInstances {
		ok = false
	}
	if ok {
		r.setSource(name, nil)
	}
	r.mu.Unlock()
	if ok {
		r.notify.changed()
	}
	return ok
}

// NotifyListChanged tells mounted servers' clients that resources/list
// has changed, as Add and Remove do: call it when the data behind a
// provider or an instance list changes. Calls within
// Options.ListChangedDelay yield one notification.
func (r *Registry) NotifyListChanged() { r.notify.changed() }

// setSource sets (or, with a nil list, removes) the named dynamic source
// and rebuilds the source list, which readers may hold: it is replaced,
// never changed in place. r.mu must be held.
func (r *Registry) setSource(name string, list ListFunc) {
	if list == nil {
		delete(r.providers, name)
	} else {
		r.providers[name] = list
	}
	sources := make([]cursor.Source[*mcp.Resource], 0, 1+len(r.providers))
	sources = append(sources, r.sources[0]) // the static resources, named ""
	for name, list := range r.providers {
		sources = append(sources, cursor.Source[*mcp.Resource]{Name: name, Provider: cursor.ProviderFunc[*mcp.Resource](list)})
	}
	slices.SortFunc(sources[1:], func(a, b cursor.Source[*mcp.Resource]) int { return strings.Compare(a.Name, b.Name) })
	r.sources = sources
}

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

func (e *staticEntry) describe() *mcp.Resource           { return e.res }
func (e *templateEntry) describe() *mcp.ResourceTemplate { return e.tmpl }

// The list methods, which bind cursors.
const (
	methodListResources = "resources/list"
	methodListTemplates = "resources/templates/list"
)

// ListResources answers resources/list: the static resources in URI
// order, then each provider's and template instance list's resources, in
// the order of their names and each in its own key order, Options.PageSize
// at a time. Its cursors are keyset positions, signed (Options.Cursors)
// and bound to resources/list, the caller's identity (Options.Identity)
// and Options.CursorScope: a walk never skips or repeats an entry that
// exists throughout it, whatever is added or removed meanwhile.
// nextCursor is omitted on the last page. With Options.Authorize set, the
// resources the caller may not see are left out, so a page may come back
// short (see Authorizer), and the result is private.
//
// A nil request or params, or a "" cursor, means the first page. A cursor
// this registry did not issue for resources/list and this scope, or one
// that has expired, is answered with -32602 "invalid cursor". A failing
// provider, or one that lists keys out of order or a nil resource, is
// answered with -32603, logged. The returned resources must not be
// modified.
func (r *Registry) ListResources(ctx context.Context, req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	var (
		c       string
		q       mcp.Request // nil, not a typed nil, for a direct call without a request
		session *mcp.ServerSession
	)
	if req != nil {
		q, session = req, req.Session
		if req.Params != nil {
			c = req.Params.Cursor
		}
	}
	r.mu.RLock()
	sources := r.sources
	r.mu.RUnlock()
	page, next, err := listPage(r, ctx, q, session, methodListResources, c, sources,
		func(page []*mcp.Resource) error {
			if slices.Contains(page, nil) {
				return errors.New("a provider listed a nil resource")
			}
			return nil
		},
		func(res *mcp.Resource, a Access) Access {
			t, _ := r.resolve(res.URI) // a listed URI no entry reads is decided on its own
			return t.access(a.Op, res.URI, a.Identity, a.Request)
		})
	if err != nil {
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
	var (
		c       string
		q       mcp.Request // nil, not a typed nil, for a direct call without a request
		session *mcp.ServerSession
	)
	if req != nil {
		q, session = req, req.Session
		if req.Params != nil {
			c = req.Params.Cursor
		}
	}
	sources := []cursor.Source[*mcp.ResourceTemplate]{{Provider: index[*templateEntry, *mcp.ResourceTemplate]{&r.templates, (*templateEntry).describe}}}
	page, next, err := listPage(r, ctx, q, session, methodListTemplates, c, sources, nil,
		func(t *mcp.ResourceTemplate, a Access) Access {
			a.Template = t.URITemplate
			return a
		})
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourceTemplatesResult{ResourceTemplates: page, NextCursor: next}
	r.opts.Cache.apply(&res.Cacheable)
	r.privateIfAuthorized(&res.Cacheable)
	return res, nil
}

// listPage returns one page of sources for the list method, from cursor c,
// and the next page's cursor: the cursor is bound to the caller of req
// (which may be nil), check (if not nil) vets the page, and, with an
// Authorizer, the entries it denies are left out (each decided as the
// Access access makes of it and a list Access of the caller) and audited.
// Its errors are ready to send.
func listPage[T any](r *Registry, ctx context.Context, req mcp.Request, session *mcp.ServerSession, method, c string,
	sources []cursor.Source[T], check func([]T) error, access func(T, Access) Access) ([]T, string, error) {
	start, auditing := r.auditing(ctx)
	identity := r.identity(ctx, req)
	page, next, err := cursor.Paginate(ctx, r.cursors, r.pageRequest(ctx, req, identity, method, c), sources)
	if err == nil && check != nil {
		err = check(page)
	}
	if err != nil {
		return nil, "", r.listError(ctx, session, method, err)
	}
	if r.opts.Authorize == nil {
		return page, next, nil
	}
	n := len(page)
	caller := Access{Op: OpList, Identity: identity, Request: req}
	page = slices.DeleteFunc(page, func(v T) bool { return r.authorize(ctx, access(v, caller)) != nil })
	if auditing && len(page) < n {
		r.audit(ctx, OpList, method, session, identity, decision{what: decisionFiltered, withheld: n - len(page)}, start)
	}
	return page, next, nil
}

// pageRequest is the cursor.Request for one page of method asked by
// identity; req may be nil. The cursor's scope is the identity and
// Options.CursorScope's answer, length-prefixed so that no two pairs give
// the same scope.
func (r *Registry) pageRequest(ctx context.Context, req mcp.Request, identity, method, c string) cursor.Request {
	pr := cursor.Request{Method: method, Cursor: c, Size: r.opts.PageSize, Scope: identity}
	if r.opts.CursorScope != nil && req != nil {
		pr.Scope = strconv.Itoa(len(identity)) + ":" + identity + r.opts.CursorScope(ctx, req)
	}
	return pr
}

// listError answers a failed page: -32602 for a bad cursor, else -32603,
// logged.
func (r *Registry) listError(ctx context.Context, session *mcp.ServerSession, method string, err error) error {
	if errors.Is(err, cursor.ErrInvalid) {
		return invalidParams("invalid cursor")
	}
	r.opts.Logger.LogAttrs(ctx, slog.LevelError, "resource list failed",
		slog.String("method", method), slog.String("session_id", sessionID(session)), slog.Any("error", err))
	return errInternal
}
