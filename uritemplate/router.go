package uritemplate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpres/mcpres/internal/uri"
)

// ErrConflict is wrapped by the error Router.Add returns for a template
// that shares a URI with one already added, each binding some non-empty
// value there, when neither of the two is more specific (see Router,
// Precedence). The error names the two templates and a URI both match.
var ErrConflict = errors.New("uritemplate: conflicting templates")

// A Router finds, among any number of templates, the one most specific
// template that matches a URI. The zero Router is empty and ready to use.
//
// # Precedence
//
// Templates rank by the URIs they match, as net/http's ServeMux ranks
// its patterns. A template is more specific than another if every URI it
// matches the other matches too, and not the other way round; where both
// match a URI, the more specific wins, whichever was added first:
//
//   - file:///~/{name} beats file:///{+path} for file:///~/notes;
//   - x://{id}.json beats x://{id} for x://1.json, and x://{id} beats
//     x://{id}{?q} for x://1, which the second matches with q undefined;
//   - db://{id:3} beats db://{name} for db://abc (db://abcd matches only
//     the second), x://{.b} beats x://{a} for x://.v, x://{;b} beats
//     x://{a} for x://;b=1, x://{#b} beats x://{+a} for x://#v, and
//     x://f{/a} beats x://f{/a,b} for x://f/1.
//
// Add refuses, with ErrConflict, a template that shares a URI with one
// already added, each binding some non-empty value there, when neither is
// more specific: x://{a}.{b} and x://{a}-{b} (both match x://p-q.r),
// file:///{+dir}/raw{/name} and file:///{+dir}/src{/name} (both match
// file:///d/raw/src), x://{id}{?q} and x://{id}{/rest*} (both match
// x://1), x://{a} and x://{b}, and x://{a}{b} next to x://{a}: it matches
// exactly the URIs x://{a} matches, and could never be chosen. The error
// names a URI both match. A template that several others shadow together,
// each more specific (x://{/a,b} next to x://{/c} and x:///{d}/{e}), is
// accepted; Shadowed reports it.
//
// Templates that share only URIs at which one of them binds nothing (every
// variable undefined or empty), such as x:// for x://{a} and x://{?q}, do
// not conflict. For those URIs the one with the longer literal prefix
// wins, then the one whose parts, left to right, are narrower at the
// first place they differ (a literal character; the end; {x}, {.x}, {/x}
// or {;x}; {?x} or {&x}; an exploded {/x*}; {+x} or {#x}); then the one
// whose text sorts first. Lookup tries a longer literal prefix first, so
// Add also refuses a template more specific than one with a longer
// literal prefix, which could never win where both match.
//
// "Match" here is what Template.Match takes, {;…} expressions taking only
// the parameters they name. Add compares templates on an automaton of
// the URIs each matches that is exact but where Match checks what the
// automaton does not: that a value decodes to UTF-8, that a prefix
// modifier over 64 holds, that the uses of a variable the template
// repeats agree (see the package doc), and how the parameters of a {;…}
// or query with more than a few exploded variables combine. Add shows
// that every URI a template matches another matches too on the other's
// automaton, so only where that one takes no URI the other does not
// match: its own, or, where that is wider, one that takes fewer (a
// prefix modifier over 64 counted as 64); never that of a template that
// repeats a variable. So x://{a}/{a} is more specific than x://{a}/{b},
// but x://{a}/v and x://{a}/{a} conflict (both match x://v/v; x://w/v is
// only the first's, x://w/w only the second's). Where the automata share
// URIs but Add can neither find one that both templates match nor show
// that there is none, it refuses the template as a conflict rather than
// rank by guess: x://{a}{?a} next to x://{b}, whose automata share x://v.
//
// Lookups cost the same however many templates the Router holds: templates
// are indexed by their literal prefix (scheme included), so a lookup walks
// the URI once and tries only templates whose prefix it starts with.
//
// Add compares a template with those that share its literal prefix or
// extend it, about a microsecond each where they share no URI: adding n
// templates that all start with the same literal prefix costs n²/2
// comparisons. Routers of thousands of templates should give them
// distinct literal prefixes, as most do (db://users/{id},
// db://orders/{id}).
//
// A Router is safe for concurrent Lookups; Add and Remove must not run at
// the same time as any other method.
type Router[T any] struct {
	// MaxURILength caps the URIs Lookup considers, in bytes: longer ones
	// match nothing, before any matching work. Zero or negative means
	// 4096.
	MaxURILength int

	root  rnode[T]
	byRaw map[string]*route[T]
}

type route[T any] struct {
	t     *Template
	value T
	model *nfa
	// beats holds the routes of the same node that t is more specific
	// than, which it must come before.
	beats []*route[T]
}

// An rnode is a node of a radix tree over literal prefixes: the prefix of
// a node is the concatenation of the labels from the root to it.
type rnode[T any] struct {
	label    string
	children []*rnode[T]
	routes   []*route[T] // templates with exactly this prefix, in the order Lookup tries them
}

// Add adds t, with value v, to the router. Adding a template with the same
// text as one already added replaces that one's template and value.
//
// Add returns an error wrapping ErrConflict, and changes nothing, if t and
// a template already added share a URI at which each binds some non-empty
// value and neither is more specific (see Precedence): x://{a} and
// x://{b}, or x://{a}{b}, which matches the URIs x://{a} matches and
// could never be chosen; or if of two such templates the more specific
// has the shorter literal prefix (x://{.a}.z and x://.{b}). The error
// names a URI both match. It returns an error for a nil t.
func (r *Router[T]) Add(t *Template, v T) error {
	if t == nil {
		return errors.New("uritemplate: Router.Add of a nil template")
	}
	if old, ok := r.byRaw[t.raw]; ok {
		old.t, old.value = t, v
		return nil
	}
	rt := &route[T]{t: t, value: v, model: t.model()}
	above, same, below := r.related(t.prefix, rt.model)
	var beaten []*route[T] // routes of the same node that beat t
	for _, o := range same {
		switch k, uri := compare(t, o.t, rt.model, o.model); k {
		case clash, unsure, identical:
			return conflictError(t, o.t, k, uri)
		case aFirst:
			rt.beats = append(rt.beats, o)
		case bFirst:
			beaten = append(beaten, o)
		}
	}
	// Lookup tries a template with a longer literal prefix first: it must
	// not be less specific than one with a shorter prefix that it shares a
	// URI with.
	for _, o := range above {
		switch k, uri := compare(t, o.t, rt.model, o.model); k {
		case clash, unsure, identical:
			return conflictError(t, o.t, k, uri)
		case bFirst:
			return prefixError(o.t, t)
		}
	}
	for _, o := range below {
		switch k, uri := compare(t, o.t, rt.model, o.model); k {
		case clash, unsure, identical:
			return conflictError(t, o.t, k, uri)
		case aFirst:
			return prefixError(t, o.t)
		}
	}
	n := r.node(t.prefix, true)
	for _, o := range beaten {
		o.beats = append(o.beats, rt)
	}
	n.routes = append(n.routes, rt)
	n.sort()
	if r.byRaw == nil {
		r.byRaw = make(map[string]*route[T])
	}
	r.byRaw[t.raw] = rt
	return nil
}

// conflictError is the error for adding a, which clashes with b (or may:
// unsure) at uri.
func conflictError(a, b *Template, k rank, uri string) error {
	if k == identical {
		return fmt.Errorf("%w: %q and %q match the same URIs, so one could never be chosen; both match %s",
			ErrConflict, b.raw, a.raw, uri)
	}
	if k == unsure {
		return fmt.Errorf("%w: neither %q nor %q is more specific, and both may match URIs such as %s",
			ErrConflict, b.raw, a.raw, uri)
	}
	return fmt.Errorf("%w: neither %q nor %q is more specific, and both match %s", ErrConflict, b.raw, a.raw, uri)
}

// prefixError is the error for specific, more specific than general but
// with a shorter literal prefix, which Lookup would try after general.
func prefixError(specific, general *Template) error {
	uri, _ := witness(specific, general)
	return fmt.Errorf("%w: %q is more specific than %q but has the shorter literal prefix, which Lookup tries last; both match %s",
		ErrConflict, specific.raw, general.raw, uri)
}

// related returns the routes m may share a URI with, m being the model of
// a template with literal prefix prefix: those whose prefix is a proper
// prefix of prefix (above), those with exactly prefix (same), and those
// whose prefix starts with prefix and is longer (below), leaving out those
// whose prefix no text of m's starts with, and those above whose model
// no text starting with prefix is in.
func (r *Router[T]) related(prefix string, m *nfa) (above, same, below []*route[T]) {
	n, rest := &r.root, prefix
	for {
		if rest == "" {
			same = n.routes
			set := m.after(prefix)
			for _, c := range n.children {
				below = c.reaching(m, set, below)
			}
			return above, same, below
		}
		for _, o := range n.routes {
			if o.model.reaches(prefix) {
				above = append(above, o)
			}
		}
		var next *rnode[T]
		for _, c := range n.children {
			if strings.HasPrefix(rest, c.label) {
				next = c
				break
			}
			if strings.HasPrefix(c.label, rest) {
				// prefix ends inside c's label: c and what is under it
				// are below.
				set := m.after(prefix)
				for i := len(rest); i < len(c.label) && set != nil; i++ {
					set = m.stepOrNil(set, c.label[i])
				}
				if set == nil {
					return above, nil, nil
				}
				below = append(below, c.routes...)
				for _, d := range c.children {
					below = d.reaching(m, set, below)
				}
				return above, nil, below
			}
		}
		if next == nil {
			return above, nil, nil
		}
		n, rest = next, rest[len(next.label):]
	}
}

// reaching appends to routes those of n and of the nodes under it whose
// prefix m can go on with, set being m's states before n's label.
func (n *rnode[T]) reaching(m *nfa, set []bool, routes []*route[T]) []*route[T] {
	for i := 0; i < len(n.label) && set != nil; i++ {
		set = m.stepOrNil(set, n.label[i])
	}
	if set == nil {
		return routes
	}
	routes = append(routes, n.routes...)
	for _, c := range n.children {
		routes = c.reaching(m, set, routes)
	}
	return routes
}

// sort orders n.routes so that each comes before the routes it beats,
// and otherwise by shape (see compareShapes) and then by text: the order
// depends only on which templates n holds, never on the order they were
// added in.
func (n *rnode[T]) sort() {
	slices.SortFunc(n.routes, func(a, b *route[T]) int {
		if c := compareShapes(a.t.shape, b.t.shape); c != 0 {
			return c
		}
		return strings.Compare(a.t.raw, b.t.raw)
	})
	if !slices.ContainsFunc(n.routes, func(rt *route[T]) bool { return len(rt.beats) > 0 }) {
		return
	}
	// Kahn's algorithm, taking the first ready route in that order.
	waiting := make(map[*route[T]]int, len(n.routes))
	for _, rt := range n.routes {
		for _, b := range rt.beats {
			waiting[b]++
		}
	}
	sorted := make([]*route[T], 0, len(n.routes))
	done := make(map[*route[T]]bool, len(n.routes))
	for len(sorted) < len(n.routes) {
		i := slices.IndexFunc(n.routes, func(rt *route[T]) bool { return !done[rt] && waiting[rt] == 0 })
		if i < 0 {
			// A cycle: strict inclusion has none, so this cannot happen;
			// keep the rest in the first order rather than loop.
			i = slices.IndexFunc(n.routes, func(rt *route[T]) bool { return !done[rt] })
		}
		rt := n.routes[i]
		done[rt] = true
		sorted = append(sorted, rt)
		for _, b := range rt.beats {
			waiting[b]--
		}
	}
	n.routes = sorted
}

// Remove removes the template whose text is raw and reports whether there
// was one.
func (r *Router[T]) Remove(raw string) bool {
	rt, ok := r.byRaw[raw]
	if !ok {
		return false
	}
	delete(r.byRaw, raw)
	n := r.node(rt.t.prefix, false)
	n.routes = slices.DeleteFunc(n.routes, func(x *route[T]) bool { return x == rt })
	for _, o := range n.routes {
		o.beats = slices.DeleteFunc(o.beats, func(x *route[T]) bool { return x == rt })
	}
	n.sort()
	return true
}

// Len returns the number of templates in the router.
func (r *Router[T]) Len() int { return len(r.byRaw) }

// Lookup returns the value of the most specific template that matches
// uri, and the values that uri binds in it; ok is false if none matches
// or uri is longer than MaxURILength. A template matches only if each of
// its variables not exploded gets a scalar (see the package doc, Lists and
// scalars): t://teams/red,blue/notes skips t://teams/{team}/notes for
// the next template that matches it, if any.
func (r *Router[T]) Lookup(uri string) (value T, vars Values, ok bool) {
	rt := r.first(uri, func(t *Template) bool {
		vars, ok = t.Match(uri)
		return ok
	})
	if rt == nil {
		return value, Values{}, false
	}
	return rt.value, vars, true
}

// Find returns the value of the template Lookup would choose for uri,
// without the values uri binds in it. It returns the zero value and false
// where Lookup finds nothing: if no template matches uri (a value with a
// malformed percent-escape, or one that decodes to invalid UTF-8, matches
// none), or uri is longer than MaxURILength. It never panics.
//
// Find allocates nothing for a uri without percent-escapes matched by a
// template that uses each variable once, unless the match must try more
// than one split of the uri between two expressions, or binds more than 8
// variables or 16 strings.
func (r *Router[T]) Find(uri string) (value T, ok bool) {
	rt := r.first(uri, func(t *Template) bool { return t.matches(uri) })
	if rt == nil {
		return value, false
	}
	return rt.value, true
}

// first returns the route of the most specific template for which matches
// reports true of uri, or nil if there is none or uri is longer than
// MaxURILength. It tries templates with a longer literal prefix first,
// and those with the same prefix in the node's order.
func (r *Router[T]) first(uri string, matches func(*Template) bool) *route[T] {
	if len(uri) > cmpOr(r.MaxURILength, maxURILength) {
		return nil
	}
	var buf [16]*rnode[T]
	path := append(buf[:0], &r.root)
	n, rest := &r.root, uri
walk:
	for {
		if rest == "" {
			break
		}
		for _, c := range n.children {
			// Children's labels start with distinct bytes: at most one
			// can match.
			if c.label[0] == rest[0] && strings.HasPrefix(rest, c.label) {
				n, rest = c, rest[len(c.label):]
				path = append(path, n)
				continue walk
			}
		}
		break
	}
	for i := len(path) - 1; i >= 0; i-- {
		for _, rt := range path[i].routes {
			if matches(rt.t) {
				return rt
			}
		}
	}
	return nil
}

const maxURILength = uri.DefaultMaxLength

func cmpOr(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// node returns the node for prefix, creating it (and splitting edges) if
// create is set; otherwise it returns nil when there is none.
func (r *Router[T]) node(prefix string, create bool) *rnode[T] {
	n := &r.root
	for prefix != "" {
		var next *rnode[T]
		for _, c := range n.children {
			common := commonPrefix(c.label, prefix)
			if common == 0 {
				continue
			}
			if common < len(c.label) {
				if !create {
					return nil
				}
				// Split c: a new node for the shared part, c below it.
				mid := &rnode[T]{label: c.label[:common], children: []*rnode[T]{c}}
				c.label = c.label[common:]
				n.children[slices.Index(n.children, c)] = mid
				c = mid
			}
			next, prefix = c, prefix[common:]
			break
		}
		if next == nil {
			if !create {
				return nil
			}
			next = &rnode[T]{label: prefix}
			n.children = append(n.children, next)
			prefix = ""
		}
		n = next
	}
	return n
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// Specificity classes of a template's shape: a byte of at least 0x20 is a
// literal character; lower bytes are expressions, narrowest first. A
// shape that has ended ranks after a literal and before any expression:
// every expression can match the empty string, so a template going on
// with expressions only would otherwise shadow the one that has ended.
const (
	classEnd      = 1
	classNarrow   = 2 // {x} {.x} {/x} {;x}
	classQuery    = 3 // {?x} {&x}
	classExploded = 4 // {/x*} and the like
	classReserved = 5 // {+x} {#x}
)

// shapeOf returns the specificity shape of parts: their literal bytes, and
// a class byte for each expression.
func shapeOf(parts []part) []byte {
	var shape []byte
	for _, p := range parts {
		if p.expr == nil {
			shape = append(shape, p.lit...)
			continue
		}
		shape = append(shape, p.expr.class())
	}
	return shape
}

func (e *expr) class() byte {
	switch {
	case e.reserved:
		return classReserved
	case slices.ContainsFunc(e.vars, func(v varspec) bool { return v.explode }):
		return classExploded
	case e.op == '?' || e.op == '&':
		return classQuery
	}
	return classNarrow
}

// compareShapes orders two shapes of templates with the same literal
// prefix, most specific first; 0 means equally specific.
func compareShapes(a, b []byte) int {
	for i := 0; ; i++ {
		ca, cb := classAt(a, i), classAt(b, i)
		if ca != cb {
			return int(ca) - int(cb)
		}
		if ca == classEnd {
			return 0
		}
	}
}

func classAt(shape []byte, i int) byte {
	switch {
	case i >= len(shape):
		return classEnd
	case shape[i] >= 0x20:
		return 0 // a literal character
	}
	return shape[i]
}

// witness returns a URI that both a and b match, found among expansions
// of each with a few plain values, or with none, for an error message; ok
// is false if none of those is one.
func witness(a, b *Template) (uri string, ok bool) {
	for _, value := range []string{"v", "1", "", "(undefined)"} {
		for _, pair := range [][2]*Template{{a, b}, {b, a}} {
			from, other := pair[0], pair[1]
			vars := make(map[string]Value, len(from.names))
			for _, name := range from.names {
				if value != "(undefined)" {
					vars[name] = StringValue(value)
				}
			}
			u, err := from.ExpandURI(vars)
			if err != nil {
				continue
			}
			if _, ok := from.Match(u); !ok {
				continue
			}
			if _, ok := other.Match(u); ok {
				return u, true
			}
		}
	}
	return "", false
}

// Shadowed returns, sorted, the templates that can never be chosen: every
// URI one matches, templates tried before it match too. Add refuses a
// template shadowed by a single other (see Precedence); Shadowed finds
// those that several shadow together, such as x://{/a,b} next to
// x://{/a} and x:///{c}/{d}. Its cost grows with the number of templates
// that share URIs: call it in a test or once after adding them, not per
// request.
func (r *Router[T]) Shadowed() []string {
	var out []string
	var walk func(n *rnode[T], prefix string)
	walk = func(n *rnode[T], prefix string) {
		prefix += n.label
		for i, rt := range n.routes {
			set := rt.model.after(prefix)
			var ahead []*route[T]
			for _, o := range n.routes[:i] {
				if _, ok := rt.model.overlaps(o.model); ok {
					ahead = append(ahead, o)
				}
			}
			for _, c := range n.children {
				for _, o := range c.reaching(rt.model, set, nil) {
					if _, ok := rt.model.overlaps(o.model); ok {
						ahead = append(ahead, o)
					}
				}
			}
			if shadowed(rt, ahead) {
				out = append(out, rt.t.raw)
			}
		}
		for _, c := range n.children {
			walk(c, prefix)
		}
	}
	walk(&r.root, "")
	slices.Sort(out)
	return out
}

// shadowed reports whether every URI rt matches one of ahead matches.
func shadowed[T any](rt *route[T], ahead []*route[T]) bool {
	if len(ahead) == 0 {
		return false
	}
	// A plain expansion of rt that none of ahead matches settles it.
	for _, value := range []string{"v", "1", ""} {
		vars := make(map[string]Value, len(rt.t.names))
		for _, name := range rt.t.names {
			vars[name] = StringValue(value)
		}
		u, err := rt.t.ExpandURI(vars)
		if err != nil {
			continue
		}
		if _, ok := rt.t.Match(u); !ok {
			continue
		}
		if !slices.ContainsFunc(ahead, func(o *route[T]) bool { _, ok := o.t.Match(u); return ok }) {
			return false
		}
	}
	// A model wider than its template's Match could make rt seem
	// shadowed where it is not: see inside.
	var models []*nfa
	for _, o := range ahead {
		m := o.model
		if o.t.wide {
			m = o.t.narrowModel()
		}
		if m != nil {
			models = append(models, m)
		}
	}
	if len(models) == 0 {
		return false
	}
	_, ok := rt.model.within(union(models...))
	return ok
}
