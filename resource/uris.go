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
// checked on its way into a page (checkedList), where a resource whose
// URI no client could send back, or no entry reads, or without a name is
// left out, and reported once for its source and reason to the logger.

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
// with every resource it lists checked as Add checks a static resource: a
// nil resource fails the page; a resource whose URI a client could not
// send back (see internal/uri.Check), whose URI no static resource or
// template reads (resolved as a read resolves it), or without a name is
// left out of the page, and reported once for the source and the reason.
// It is left out by setting its Value to nil in a copy of the items, so
// that the page's count of items, which tells whether there are more, is
// kept; the list's keep function drops nil values and counts them. A
// resource without a MIME type is given, in a copy, the one a read of it
// declares: its template's or static resource's.
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
	// Copies given the MIME type a read declares, made once for the page:
	// with room for every resource left, append never moves them.
	var withMIME []mcp.Resource
	for i, it := range items {
		res := it.Value
		if res == nil {
			return nil, fmt.Errorf("%s listed a nil resource (key %q)", s.r.sourceKind(s.name), it.Key)
		}
		mime, why, err := s.r.listedMIME(res)
		if why == listedOK && (res.MIMEType != "" || mime == "") {
			continue
		}
		if !copied { // the provider's own slice is not changed: it may be shared
			items, copied = slices.Clone(items), true
		}
		if why != listedOK {
			s.r.reportListed(ctx, s.name, why, it.Key, res.URI, err)
			items[i].Value = nil
			continue
		}
		if withMIME == nil {
			withMIME = make([]mcp.Resource, 0, len(items)-i)
		}
		withMIME = append(withMIME, *res)
		typed := &withMIME[len(withMIME)-1]
		typed.MIMEType = mime
		items[i].Value = typed
	}
	return items, nil
}

// listedMIME checks res, which a provider listed, as a read of it would
// be resolved (see resolveChecked): why is listedOK and mime the MIME
// type a read of it declares, or why says what is wrong (and err, for a
// bad URI, how).
func (r *Registry) listedMIME(res *mcp.Resource) (mime string, why listedReason, err error) {
	if e, ok := r.static.Get(res.URI); ok { // Add checked the URI
		if res.Name == "" {
			return "", listedNoName, nil
		}
		return e.res.MIMEType, listedOK, nil
	}
	if err := uri.Check(res.URI, r.opts.MaxURILength); err != nil {
		return "", listedBadURI, err
	}
	e := r.template(res.URI)
	if e == nil {
		return "", listedUnread, nil
	}
	if res.Name == "" {
		return "", listedNoName, nil
	}
	return e.tmpl.MIMEType, listedOK, nil
}

// A listedReason says why a resource a provider listed was left out.
type listedReason uint8

const (
	listedOK     listedReason = iota
	listedBadURI              // no client could send its URI back
	listedUnread              // no static resource or template reads its URI
	listedNoName              // it has no name
)

// message says what the source called kind listed, for the log.
func (why listedReason) message(kind string) string {
	switch why {
	case listedBadURI:
		return kind + " listed URIs no client could send back; they are left out of resources/list (build URIs with Registry.Expand)"
	case listedUnread:
		return kind + " listed URIs no resource or template reads; they are left out of resources/list"
	default:
		return kind + " listed resources without a name; they are left out of resources/list"
	}
}

// sourceKind names the source called name in a message: a provider or a
// template's instance list.
func (r *Registry) sourceKind(name string) string {
	if e, ok := r.templates.Get(name); ok && e.listsInstances {
		return fmt.Sprintf("the instance list of template %q", name)
	}
	return fmt.Sprintf("provider %q", name)
}

// listedReports remembers for which sources and reasons left-out
// resources were reported, so that each pair is reported once, however
// many resources it covers; past maxReported it stops remembering, and
// says so once.
type listedReports struct {
	mu       sync.Mutex
	reported map[listedReport]bool
	full     bool
}

type listedReport struct {
	source string
	why    listedReason
}

// maxReported bounds the sources and reasons a registry remembers.
const maxReported = 1024

// reportListed logs at Error, once for each source and reason, that
// source listed a resource (key, URI u) that is left out of lists for
// the reason why; err says what is wrong with a bad URI.
func (r *Registry) reportListed(ctx context.Context, source string, why listedReason, key, u string, err error) {
	l := &r.listed
	l.mu.Lock()
	k := listedReport{source, why}
	seen := l.reported[k]
	switch {
	case seen:
	case len(l.reported) < maxReported:
		if l.reported == nil {
			l.reported = make(map[listedReport]bool)
		}
		l.reported[k] = true
	case l.full:
		seen = true // no more room: already said so
	default:
		l.full = true
		l.mu.Unlock()
		r.opts.Logger.LogAttrs(ctx, slog.LevelError, "resource list: too many providers list resources the registry leaves out; no more are logged; they are still left out of lists")
		return
	}
	l.mu.Unlock()
	if seen {
		return
	}
	attrs := []slog.Attr{slog.String("source", source), slog.String("key", key), slog.String("uri", u)}
	if err != nil {
		attrs = append(attrs, slog.Any("error", invalidURI(u, err)))
	}
	r.opts.Logger.LogAttrs(ctx, slog.LevelError, "resource list: "+why.message(r.sourceKind(source))+"; logged once, for the first", attrs...)
}

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
