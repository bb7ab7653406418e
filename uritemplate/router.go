package uritemplate

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpres/mcpres/internal/uri"
)

// ErrConflict is wrapped by the error Router.Add returns for a template
// that would match exactly the URIs another template matches, equally
// specifically, so that one of the two could never be chosen. The error
// names the two templates and, where it finds one, a URI both match.
var ErrConflict = errors.New("uritemplate: templates match the same URIs equally specifically")

// A Router finds, among any number of templates, the one most specific
// template that matches a URI. The zero Router is empty and ready to use.
//
// # Precedence
//
// Templates are compared part by part, left to right, after expansion
// shapes: at the first place they differ,
//
//  1. a literal character beats a variable, so a longer literal prefix
//     wins: file:///~/{name} beats file:///{+path} for file:///~/notes,
//     whichever was added first;
//  2. a narrower variable beats a wider one: {x} (and {.x}, {/x}, {;x})
//     beats {?x}/{&x}, which beats an exploded {/x*}, which beats {+x} and
//     {#x}, which can span '/';
//  3. a template that goes on with a literal beats one that has ended,
//     which beats one that goes on with a variable: x://{id}.json beats
//     x://{id} for x://1.json, and x://{id} beats x://{id}{?q} for x://1,
//     which the second, q undefined, matches too.
//
// Templates whose parts compare equal throughout but whose literals differ
// rarely match the same URI; where they do, the one added first wins. Two
// templates equal in both (x://{a} and x://{b}) would shadow each other,
// and Add refuses the second with ErrConflict.
//
// Lookups cost the same however many templates the Router holds: templates
// are indexed by their literal prefix (scheme included), so a lookup walks
// the URI once and tries only templates whose prefix it starts with.
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
	seq   int
}

type route[T any] struct {
	t     *Template
	value T
	seq   int // registration order
}

// An rnode is a node of a radix tree over literal prefixes: the prefix of
// a node is the concatenation of the labels from the root to it.
type rnode[T any] struct {
	label    string
	children []*rnode[T]
	routes   []*route[T] // templates with exactly this prefix, most specific first
}

// Add adds t, with value v, to the router. Adding a template with the same
// text as one already added replaces that one's template and value and
// keeps its place in registration order.
//
// Add returns an error wrapping ErrConflict, and changes nothing, if t is
// not the same text as, but matches the same URIs as, a template already
// added (x://{a} and x://{b}). It returns an error for a nil t.
func (r *Router[T]) Add(t *Template, v T) error {
	if t == nil {
		return errors.New("uritemplate: Router.Add of a nil template")
	}
	if old, ok := r.byRaw[t.raw]; ok {
		old.t, old.value = t, v
		return nil
	}
	n := r.node(t.prefix, false)
	if n != nil {
		for _, rt := range n.routes {
			if bytes.Equal(rt.t.shape, t.shape) {
				if uri, ok := witness(rt.t, t); ok {
					return fmt.Errorf("%w: %q and %q both match %s", ErrConflict, rt.t.raw, t.raw, uri)
				}
				return fmt.Errorf("%w: %q and %q", ErrConflict, rt.t.raw, t.raw)
			}
		}
	}
	n = r.node(t.prefix, true)
	r.seq++
	rt := &route[T]{t: t, value: v, seq: r.seq}
	i, _ := slices.BinarySearchFunc(n.routes, rt, compareRoutes[T])
	n.routes = slices.Insert(n.routes, i, rt)
	if r.byRaw == nil {
		r.byRaw = make(map[string]*route[T])
	}
	r.byRaw[t.raw] = rt
	return nil
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
	if len(uri) > cmpOr(r.MaxURILength, maxURILength) {
		return value, Values{}, false
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
			if vars, ok := rt.t.Match(uri); ok {
				return rt.value, vars, true
			}
		}
	}
	return value, Values{}, false
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

func compareRoutes[T any](a, b *route[T]) int {
	if c := compareShapes(a.t.shape, b.t.shape); c != 0 {
		return c
	}
	return a.seq - b.seq
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
