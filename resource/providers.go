package resource

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/subscribe"
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
// with keys the database orders bytewise: a text key, or an integer or
// time key made with cursor.IntKey or cursor.TimeKey (cursor.ParseIntKey
// turns after back into the integer, "" into the smallest). A key is
// often the resource's URI or the row's id; it is never shown to clients.
//
// Build each resource's URI with Registry.Expand, which percent-encodes
// it as clients send it. Each listed resource is checked as Add checks a
// static one. It is left out of the list if its URI is not one a client
// could send ("notes://gamma ray", or longer than Options.MaxURILength),
// if no static resource or template reads it, or if it has no name. The
// registry logs that once at Error for each list and reason, and counts
// it in the Observer's Call.Unlistable. A resource without a MIME type is
// listed with the one a read of it declares: its template's. A nil
// resource fails the page.
type ListFunc = func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error)

// WithInstances makes a template's instances part of resources/list:
// list names the resources it reads, in list's own key order. They come
// after the static resources and are paged with them (see
// Registry.ListResources). A resource list returns that the registry
// would not read, or without a name, is left out and logged once (see
// ListFunc); one without a MIME type is listed with the template's.
// AddTemplate refuses a nil list.
func WithInstances(list ListFunc) TemplateOption {
	return templateOption(func(e *entryConfig) error {
		if list == nil {
			return errors.New("nil instance list")
		}
		e.instances = list
		return nil
	})
}

// AddProvider adds a source of resources to resources/list, or replaces
// the one with the same name. Providers' resources come after the static
// resources, in the order of the providers' names (and of template
// instance lists, named by their URI template), each in its own key order.
//
// Reading them is up to templates (or static resources) that match their
// URIs; a provider only lists. A resource no template or static resource
// reads, or without a name, is left out of the list and logged once (see
// ListFunc); one without a MIME type is listed with its template's. After
// the data behind a provider changes, call NotifyListChanged.
//
// AddProvider returns an error, and changes nothing, if name is empty, if
// list is nil, if a template's instance list has that name, or if the
// registry is closed (ErrClosed).
func (r *Registry) AddProvider(name string, list ListFunc) error {
	if name == "" || list == nil {
		return errors.New("resource: AddProvider needs a name and a list function")
	}
	r.mu.Lock()
	if r.closed.Load() {
		r.mu.Unlock()
		return fmt.Errorf("resource: AddProvider %q: %w", name, ErrClosed)
	}
	if e, ok := r.templates.Get(name); ok && e.listsInstances {
		r.mu.Unlock()
		return fmt.Errorf("resource: AddProvider %q: a template's instance list has that name", name)
	}
	r.setSource(name, list)
	r.mu.Unlock()
	r.delivery.ListChanged()
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
		r.delivery.ListChanged()
	}
	return ok
}

// NotifyListChanged tells mounted servers' clients that resources/list
// has changed, as Add and Remove do: call it when the data behind a
// provider or an instance list changes. Calls within
// Options.ListChangedDelay yield one notification. With
// SubscriptionOptions.Bus the other replicas' sessions are told too.
func (r *Registry) NotifyListChanged() {
	r.delivery.ListChanged()
	r.publish(subscribe.Change{Kind: subscribe.ListChanged})
}

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
		sources = append(sources, cursor.Source[*mcp.Resource]{Name: name, Provider: checkedList{r: r, name: name, list: list}})
	}
	slices.SortFunc(sources[1:], func(a, b cursor.Source[*mcp.Resource]) int { return strings.Compare(a.Name, b.Name) })
	r.sources = sources
}
