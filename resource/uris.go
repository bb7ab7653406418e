package resource

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/internal/uri"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every URI the registry hands a client is one it accepts from a client:
// static resources are checked when they are added, instance URIs are
// best built with Expand, and what providers and instance lists return is
// checked on its way into a page (checkedList), where a URI no client
// could send back is left out and reported once to the logger.

// Expand returns the URI of the instance of the registered template
// uriTemplate whose variables have the given values, as name, value
// pairs: reg.Expand("notes://{collection}/{name}", "collection", "team",
// "name", "gamma ray") is "notes://team/gamma%20ray", percent-encoded as
// RFC 6570 says, the URI a client reads and subscribes to. Reserved
// expansions keep the template's shape (uritemplate.Template.ExpandURI):
// file:///{+path} with path "pages/[id]#1.md" is
// file:///pages/%5Bid%5D%231.md, not a URI with a fragment. A variable
// left out is undefined, and expands to nothing (RFC 6570 section 2.3).
// Build the URIs a provider or an instance list returns, and those given
// to Changed, with it.
//
// Expand returns an error wrapping ErrNotFound if no such template is
// registered, and another error if nameValues has an odd length, names a
// variable the template does not have (or one twice), holds a value that
// is not valid UTF-8 (or that a prefix modifier cannot cut), or if the
// URI is one the registry would refuse, or one the template does not
// match back (ErrInvalidURI).
func (r *Registry) Expand(uriTemplate string, nameValues ...string) (string, error) {
	e, ok := r.templates.Get(uriTemplate)
	if !ok {
		return "", fmt.Errorf("resource: Expand %q: no such template: %w", uriTemplate, ErrNotFound)
	}
	if len(nameValues)%2 != 0 {
		return "", fmt.Errorf("resource: Expand %q: %d arguments; want name, value pairs", uriTemplate, len(nameValues))
	}
	vars := make(map[string]uritemplate.Value, len(nameValues)/2)
	names := e.compiled.Varnames()
	for i := 0; i < len(nameValues); i += 2 {
		name := nameValues[i]
		if !slices.Contains(names, name) {
			return "", fmt.Errorf("resource: Expand %q: the template has no variable %q", uriTemplate, name)
		}
		if _, dup := vars[name]; dup {
			return "", fmt.Errorf("resource: Expand %q: variable %q given twice", uriTemplate, name)
		}
		vars[name] = uritemplate.StringValue(nameValues[i+1])
	}
	u, err := e.compiled.ExpandURI(vars)
	if err != nil {
		return "", fmt.Errorf("resource: Expand %q: %w", uriTemplate, err)
	}
	if err := uri.Check(u, r.opts.MaxURILength); err != nil {
		return "", fmt.Errorf("resource: Expand %q gives %q: %w: %v", uriTemplate, u, ErrInvalidURI, err)
	}
	// If its own template matches it, the registry routes it there or to
	// a more specific template: it reads back.
	if _, ok := e.compiled.Match(u); !ok {
		return "", fmt.Errorf("resource: Expand %q gives %q, which the template does not read back: %w", uriTemplate, u, ErrInvalidURI)
	}
	return u, nil
}

// checkedList is a provider's (or an instance list's) list function,
// with every resource it lists checked: a nil resource fails the page,
// and a resource whose URI a client could not send back (see
// internal/uri.Check) is reported once and left out of the page. It is
// left out by setting its Value to nil in a copy of the items, so that
// the page's count of items, which tells whether there are more, is
// kept; the list's keep function drops nil values.
type checkedList struct {
	r    *Registry
	name string // the source's: a provider's name or an instance list's template
	list ListFunc
}

func (s checkedList) List(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
	items, err := s.list(ctx, after, limit)
	if err != nil {
		return nil, err
	}
	copied := false
	for i, it := range items {
		if it.Value == nil {
			return nil, fmt.Errorf("%s listed a nil resource (key %q)", s.r.sourceKind(s.name), it.Key)
		}
		err := uri.Check(it.Value.URI, s.r.opts.MaxURILength)
		if err == nil {
			continue
		}
		s.r.reportListedURI(ctx, s.name, it.Value.URI, err)
		if !copied { // the provider's own slice is not changed: it may be shared
			items, copied = slices.Clone(items), true
		}
		items[i].Value = nil
	}
	return items, nil
}

// sourceKind names the source called name in a message: a provider or a
// template's instance list.
func (r *Registry) sourceKind(name string) string {
	if e, ok := r.templates.Get(name); ok && e.listsInstances {
		return fmt.Sprintf("the instance list of template %q", name)
	}
	return fmt.Sprintf("provider %q", name)
}

// listedURIs remembers which bad listed URIs were reported, so that each
// is reported once; past maxReported it stops remembering, and says so
// once.
type listedURIs struct {
	mu       sync.Mutex
	reported map[[2]string]bool // source, URI
	full     bool
}

// maxReported bounds the bad listed URIs a registry remembers.
const maxReported = 1024

// reportListedURI logs at Error, once for each source and URI, that source
// listed u, which err says no client could send, and that it was left out.
func (r *Registry) reportListedURI(ctx context.Context, source, u string, err error) {
	l := &r.listed
	l.mu.Lock()
	k := [2]string{source, u}
	seen := l.reported[k]
	switch {
	case seen:
	case len(l.reported) < maxReported:
		if l.reported == nil {
			l.reported = make(map[[2]string]bool)
		}
		l.reported[k] = true
	case l.full:
		seen = true // no more room: already said so
	default:
		l.full = true
		l.mu.Unlock()
		r.opts.Logger.LogAttrs(ctx, slog.LevelError, "resource list: too many invalid listed URIs; no more are logged; they are still left out of lists")
		return
	}
	l.mu.Unlock()
	if seen {
		return
	}
	r.opts.Logger.LogAttrs(ctx, slog.LevelError, "resource list: "+r.sourceKind(source)+" listed a URI no client could send back; it is left out of resources/list (build URIs with Registry.Expand)",
		slog.String("source", source), slog.String("uri", u), slog.Any("error", invalidURI(u, err)))
}

// listable is the keep function of a resources/list page: it drops the
// entries checkedList left out.
func listable(res *mcp.Resource) bool { return res != nil }

// canonical returns the URI the registry itself gives the instance t
// names (the template's expansion of the variables matched in u), if
// that differs from u and reads back to the same template: u is then an
// alias, such as db://users/%34%32 for db://users/42, which a client may
// read but whose subscribers would never hear of changes reported, as
// they are, under the canonical form. A static resource, or a template
// that cannot give its variables back (RFC 6570 round trips do not hold
// for every template), has no other form: ok is false.
func (r *Registry) canonical(t target, u string) (canon string, ok bool) {
	if t.tmpl == nil {
		return "", false
	}
	canon, err := t.tmpl.compiled.ExpandURI(t.vars.Map())
	if err != nil || canon == u || uri.Check(canon, r.opts.MaxURILength) != nil {
		return "", false
	}
	back, err := r.resolve(canon)
	if err != nil || back.tmpl != t.tmpl {
		return "", false
	}
	return canon, true
}

// invalidURI is the error for u, a URI from the server's own code that
// the URI check refused with err: it wraps ErrInvalidURI, and names the
// URI a client would send for u, if percent-encoding makes one.
func invalidURI(u string, err error) error {
	if fixed := uri.Encode(u); fixed != u && uri.Check(fixed, len(fixed)) == nil {
		return fmt.Errorf("%w: %v (a client would send %q; build URIs with Registry.Expand)", ErrInvalidURI, err, fixed)
	}
	return fmt.Errorf("%w: %v", ErrInvalidURI, err)
}
