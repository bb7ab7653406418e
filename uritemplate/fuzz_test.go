package uritemplate

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	yosida "github.com/yosida95/uritemplate/v3"
)

var fuzzTemplateSeeds = []string{
	"",
	"file:///{+path}",
	"file:///~/{name}",
	"db://{table}/{id}{?fields,limit}",
	"x:{a}/{a:3}{&a}",
	"x:{?a}{&b,c}",
	"{/list*,path:4}",
	"X{.keys*}",
	"up{+path}{var}/here",
	"{;v,empty,who}",
	"{#x,hello,y}",
	"x:{a}{b}-{a}",
	"caf%C3%A9:é/{x}",
	"{x:03}",
	"{x.}",
	"{=x}",
	"{x",
	"a%2",
	"{%41b}",
}

// FuzzParse checks that Parse accepts exactly what
// github.com/yosida95/uritemplate/v3 accepts, and that what it accepts
// expands with no variables to a URI it matches.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzTemplateSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tmpl, err := Parse(s)
		_, yerr := yosida.New(s)
		if (err == nil) != (yerr == nil) {
			t.Fatalf("Parse(%q) = %v; yosida says %v", s, err, yerr)
		}
		if err != nil {
			if tmpl != nil {
				t.Fatalf("Parse(%q) gave a template with an error", s)
			}
			return
		}
		if tmpl.String() != s {
			t.Fatalf("String() = %q, want %q", tmpl.String(), s)
		}
		literals, _ := tmpl.Expand(nil) // every variable undefined: the literals
		if !strings.HasPrefix(literals, tmpl.Prefix()) || strings.Contains(tmpl.Prefix(), "{") {
			t.Fatalf("Prefix() = %q for %q", tmpl.Prefix(), s)
		}
		names := tmpl.Varnames()
		for i, name := range names {
			if slices.Contains(names[:i], name) || !strings.Contains(s, name) {
				t.Fatalf("Varnames() = %q for %q", names, s)
			}
		}
		uri, err := tmpl.Expand(nil)
		if err != nil {
			t.Fatalf("Expand(nil) for %q: %v", s, err)
		}
		m, ok := tmpl.Match(uri)
		if !ok {
			t.Fatalf("%q does not match its own expansion %q", s, uri)
		}
		for name, v := range m.Map() {
			if v.Kind != String || v.Items[0] != "" {
				t.Fatalf("%q matching %q bound %s to %v", s, uri, name, v)
			}
		}
	})
}

// FuzzMatch matches arbitrary URIs against arbitrary templates: no
// panics, well-formed values (a variable never exploded a String), and
// values that expand to a URI the template matches, but where they put a
// list in a variable not exploded.
func FuzzMatch(f *testing.F) {
	for _, c := range [][2]string{
		{"file:///{+path}", "file:///a/b%20c"},
		{"db://{table}/{id}{?fields,limit}", "db://t/1?limit=2&x=1&fields=a,b"},
		{"x:{a}/{a:3}{&a}", "x:abcd/abc&a=abcd"},
		{"x:{?a}{&b,c}", "x:&c=1&b=%C3%A9"},
		{"{/list*,path:4}", "/red/green/blue/%2Ffoo"},
		{"X{.keys*}", "X.semi=%3B.dot=..comma=%2C"},
		{"up{+path}{var}/here", "up/foo/barvalue/here"},
		{"{;v,empty,who}", ";v=6;empty;who=fred"},
		{"{#x,hello,y}", "#1024,Hello%20World!,768"},
		{"x:{a}{b}-{a}", "x:xy-x"},
		{"x:{a}", "x:%C3%28"},
		{"x:{a}", "x:%2520"},
		{"x:{/k*}", "x:/a=1/b"},
		{"{a}{b}{c}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
		{"t://teams/{team}/notes", "t://teams/red,blue/notes"},
		{"x:{/a*}{?a}", "x:/x/y"},
		// Issue 22: a prefix modifier next to a variable left out, and
		// a variable used twice, left out of one use.
		{"x://{/a:4,b}", "x:///hello"},
		{"x://{a:3,b}", "x://hello"},
		{"x://{.b,a:2}", "x://.x.y.%C3%A9"},
		{"file:///b{/a,b*}{?a:2}{/q}", "file:///b/%3D/a%2Cb"},
		{"file:///b{/a,b*}{?a:2}", "file:///b/%3D/a%2Cb"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, template, uri string) {
		tmpl, err := Parse(template)
		if err != nil {
			return
		}
		m, ok := tmpl.Match(uri)
		if !ok {
			if m.Template() != nil || m.Len() != 0 {
				t.Fatalf("no match, yet values %v", m.Map())
			}
			return
		}
		if m.Template() != tmpl {
			t.Fatalf("Template() = %v, want %v", m.Template(), tmpl)
		}
		got := m.Map()
		checkValues(t, tmpl, got)
		back, err := tmpl.ExpandURI(got)
		if err != nil {
			t.Fatalf("%q matching %q gave %v, which does not expand: %v", template, uri, got, err)
		}
		// The values need not come back: "x:{a}" matching "x:%41"
		// gives a "A", which expands to "x:A". A variable used both
		// exploded and not is a String, so the values never put a list
		// where a variable not exploded would not match it.
		m2, ok := tmpl.Match(back)
		if !ok {
			t.Fatalf("%q matching %q gave %v, which expands to %q, which it does not match", template, uri, got, back)
		}
		checkValues(t, tmpl, m2.Map())
	})
}

// checkValues checks that the values a match gave are well formed: valid
// UTF-8, one item for a String, key and value pairs for Pairs, only
// variables of the template, and a String for a variable the template
// never explodes.
func checkValues(t *testing.T, tmpl *Template, vals map[string]Value) {
	t.Helper()
	for name, v := range vals {
		if !slices.Contains(tmpl.Varnames(), name) {
			t.Fatalf("%q bound %q, not one of its variables", tmpl, name)
		}
		if v.Kind != String && !explodes(tmpl, name) {
			t.Fatalf("%q bound %q, never exploded, to the %v %q", tmpl, name, v.Kind, v.Items)
		}
		switch v.Kind {
		case String:
			if len(v.Items) != 1 {
				t.Fatalf("%s: String %q", name, v.Items)
			}
		case List:
			if len(v.Items) == 0 {
				t.Fatalf("%s: empty List", name)
			}
		case Pairs:
			if len(v.Items) == 0 || len(v.Items)%2 != 0 {
				t.Fatalf("%s: Pairs %q", name, v.Items)
			}
		default:
			t.Fatalf("%s: kind %v", name, v.Kind)
		}
		for _, item := range v.Items {
			if !utf8.ValidString(item) {
				t.Fatalf("%s: invalid UTF-8 %q", name, item)
			}
		}
	}
}

// explodes reports whether tmpl has an exploded use of the variable name.
func explodes(tmpl *Template, name string) bool {
	for _, p := range tmpl.src {
		if p.expr == nil {
			continue
		}
		for _, v := range p.expr.vars {
			if v.name == name && v.explode {
				return true
			}
		}
	}
	return false
}

// listInScalar reports whether vals give a List or Pairs of more than one
// item to a variable that tmpl uses, somewhere, not exploded: its
// expansion there holds a ',' that a variable not exploded does not match
// (unencoded) or that makes it a String, not the List or Pairs.
func listInScalar(tmpl *Template, vals map[string]Value) bool {
	for _, p := range tmpl.src {
		if p.expr == nil {
			continue
		}
		for _, v := range p.expr.vars {
			if val, ok := vals[v.name]; ok && !v.explode && val.Kind != String && len(val.Items) > 1 {
				return true
			}
		}
	}
	return false
}

func equalValue(a, b Value) bool {
	return a.Kind == b.Kind && slices.Equal(a.Items, b.Items)
}

// fuzzRouterTemplates are templates that overlap in every way the
// precedence rules tell apart.
var fuzzRouterTemplates = []string{
	"file:///{+path}",
	"file:///~/{name}",
	"file:///~/",
	"file:///src/{name}.{ext}",
	"db://{table}/{id}",
	"db://{table}/schema",
	"db://{table}/{id}{?fields*}",
	"x://{id}.json",
	"x://{id}",
	"x://{id}{?q}",
	"x://r/{id}{/rest*}",
	"x://p/{a}-{b}",
	"x://{+a}",
	"x://f/{id}{#f}",
	"logs://{service}{/parts*}",
	"logs://{service}",
	"api://v1/{+rest}",
	"api://v1/users/{id}",
	"api://v1/users/{id}/posts{?limit,offset}",
	"q://s{?a,b}",
	"q://t{?a}{&b,c}",
	// Not q://s?fixed=yes{&x}: each of it and q://s{?a,b} ignores a
	// parameter the other takes, with a value the other refuses (a=1,2
	// and x=1,2), so neither is more specific, and both match
	// q://s?fixed=yes&a=1&x=1.
	"q://u?fixed=yes{&x}",
	"{scheme}:{+rest}",
	"{+any}",
	"t://teams/{team}/notes",
	"t://teams/{teams*}/notes",
}

var fuzzRouter = sync.OnceValue(func() *Router[int] {
	r := &Router[int]{MaxURILength: 512}
	for i, s := range fuzzRouterTemplates {
		if err := r.Add(MustParse(s), i); err != nil {
			panic(err)
		}
	}
	return r
})

// FuzzLookup looks arbitrary URIs up in a router of overlapping templates
// (see checkLookup), added in two orders.
func FuzzLookup(f *testing.F) {
	for _, uri := range []string{
		"file:///~/notes", "file:///~/", "file:///a/b.c", "file:///a/b", "db://users/schema",
		"db://users/42?fields=a&fields=b", "x://1.json", "x://p/1-2.3", "x://1?q=2", "x://r/1/a/b",
		"x://f/1#f", "logs://svc/a/b", "api://v1/users/7/posts?limit=1", "q://t&c=1&b=2",
		"q://u?fixed=yes&x=1", "q://s?fixed=yes&a=1&x=1", "mailto:a@b", "", "file:///~/bad%FF",
		"t://teams/red/notes", "t://teams/red,blue/notes", "t://teams/red%2Cblue/notes", "x://a,b",
	} {
		f.Add(uri)
	}
	templates := make([]*Template, len(fuzzRouterTemplates))
	for i, s := range fuzzRouterTemplates {
		templates[i] = MustParse(s)
	}
	r, reversed := fuzzRouter(), &Router[int]{MaxURILength: 512}
	for i := len(templates) - 1; i >= 0; i-- {
		if err := reversed.Add(templates[i], i); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, uri string) {
		v, _, ok := r.Lookup(uri)
		if len(uri) > r.MaxURILength {
			if ok {
				t.Fatalf("Lookup of a URI over MaxURILength found %q", fuzzRouterTemplates[v])
			}
			return
		}
		checkLookup(t, r, templates, uri)
		if w, _, okW := reversed.Lookup(uri); ok != okW || w != v {
			t.Fatalf("Lookup(%q) depends on the order templates were added in", uri)
		}
	})
}

// checkLookup checks what r, which holds templates with their indexes as
// values, finds for uri: Find finds what Lookup does; the template found
// matches uri, with the values Match gives; none matches it if none is
// found; no template that matches uri is more specific than the one
// found; and any other that matches it, each binding some non-empty
// value, is less specific.
func checkLookup(t *testing.T, r *Router[int], templates []*Template, uri string) {
	t.Helper()
	v, vars, ok := r.Lookup(uri)
	if w, okF := r.Find(uri); w != v || okF != ok {
		t.Fatalf("Find(%q) = %d, %v; Lookup found %d, %v", uri, w, okF, v, ok)
	}
	if !ok {
		for _, tmpl := range templates {
			if _, ok := tmpl.Match(uri); ok {
				t.Fatalf("Lookup(%q) found nothing; %q matches", uri, tmpl)
			}
		}
		return
	}
	found := templates[v]
	m, okM := found.Match(uri)
	switch {
	case vars.Template().String() != found.String():
		t.Fatalf("Lookup(%q) gave value %d and template %q", uri, v, vars.Template())
	case !okM:
		t.Fatalf("Lookup(%q) found %q, which does not match it", uri, found)
	case !maps.EqualFunc(vars.Map(), m.Map(), equalValue):
		t.Fatalf("Lookup(%q) gave %v; Match gives %v", uri, vars.Map(), m.Map())
	}
	checkValues(t, found, vars.Map())
	mf, mo := found.model(), (*nfa)(nil)
	for _, other := range templates {
		if other == found {
			continue
		}
		if _, ok := other.Match(uri); !ok {
			continue
		}
		mo = other.model()
		k, _ := compare(found, other, mf, mo)
		if k == bFirst {
			t.Fatalf("Lookup(%q) found %q; %q matches it too and is more specific", uri, found, other)
		}
		if k != aFirst && bindsSome(found, uri) && bindsSome(other, uri) {
			t.Fatalf("Lookup(%q) found %q; %q matches it too, binding values, and neither is more specific", uri, found, other)
		}
	}
}

// roundTrips are templates on which Match(ExpandURI(v)) gives back v for
// strings that are not empty: every expression is followed by the end or
// by a literal or expression starting with a character its expansion
// never holds. A variable whose name starts with l is given the List of
// the three fuzzed strings, one whose name starts with k the Pairs of
// them and the first again; the others are given one string each. Where
// noMatch is set, the expansion must not match at all.
var roundTrips = []struct {
	template string
	// avoidKey is the name of a named, exploded Pairs variable: a key
	// equal to it would read as the variable's own list item.
	avoidKey string
	// avoid holds the characters values must not hold: {.x,y} leaves '.'
	// unencoded, where it reads as the separator. ({+x} and {#x} leave ','
	// unencoded too, but the last variable of one takes it as its own.)
	avoid string
	// prefix gives, for a variable with a prefix modifier only, how many
	// characters of its value come back.
	prefix map[string]int
	// noMatch is set where a List is given to a variable not exploded:
	// RFC 6570 expands it with its items joined by unencoded ','s, which
	// such a variable never matches (it matches scalars only), so the
	// URI must not match.
	noMatch bool
}{
	{template: "x://{a}"},
	{template: "{a}"},
	{template: "x://{a}/{b}/{c}"},
	{template: "x://{a}{?b,c}"},
	{template: "x://{a}{?b}{&c}"},
	{template: "x://s{?c,a,b}"},
	{template: "x://s?fixed=yes{&a,b}"},
	{template: "x://{a}/{b}{#c}"},
	{template: "file:///{+a}"},
	{template: "x:{+a}é{b}"},
	{template: "x://{a}{/b,c}"},
	{template: "x://{a}{;b,c}"},
	{template: "x:{/a}{?b}"},
	{template: "x:{a,b,c}"},
	{template: "x:{/a,b,c}/z"},
	{template: "x:{.a,b}/{c}", avoid: "."},
	{template: "x:{.a}/{b}"},
	{template: "x:{;a}{?b}{#c}"},
	{template: "x:{a:3}/{b}", prefix: map[string]int{"a": 3}},
	{template: "x:{a:3}/{a}"},
	{template: "x:{a}/{a:1}"},
	{template: "x:{a}/{a}"},
	{template: "x:{/a,b:2}", prefix: map[string]int{"b": 2}},
	{template: "x:{/l*}"},
	{template: "x:{/k*}"},
	{template: "x:{l}", noMatch: true},
	{template: "x:{l*}"},
	{template: "x:{k*}"},
	{template: "x:{;l*}"},
	{template: "x:{;k*}", avoidKey: "k"},
	{template: "x:{?l*}"},
	{template: "x:{?k*}", avoidKey: "k"},
	{template: "x:{?a}{&l*}"},
	{template: "x:{.l*}", avoid: "."},
	{template: "x:{a}/{l}{/k*}{?b,l2*}", noMatch: true},
	{template: "x:{a}/{l*}{/k*}{?b,l2*}"},
	{template: "x:{?a,l}", noMatch: true},
	// {a} takes no unencoded ',', so the literal one is the first.
	{template: "x:{a},{+b}"},
	{template: "x:{/a},{b}"},
	// A parameter the first of two {;…} does not name is the second's.
	{template: "x://r{;a}{;b}"},
	{template: "x://r{;a,b}{;c}"},
}

// FuzzRoundTrip expands fuzzed strings with templates that are not
// ambiguous and checks Match gives them back.
func FuzzRoundTrip(f *testing.F) {
	for _, c := range [][3]string{
		{"a", "b", "c"},
		{"O'Brien", "a b", "50%"},
		{"café", "中文", "😀"},
		{"a/b?c#d", "a,b;c=d&e", "%2520"},
		{"-._~", ":@!$'()*+", "\x00\x7f"},
	} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []string{a, b, c}
		for _, s := range in {
			if s == "" || !utf8.ValidString(s) {
				return
			}
		}
		for _, rt := range roundTrips {
			if rt.avoid != "" && strings.ContainsAny(a+b+c, rt.avoid) || rt.avoidKey != "" && (a == rt.avoidKey || c == rt.avoidKey) {
				continue
			}
			tmpl := MustParse(rt.template)
			vars := make(map[string]Value)
			want := make(map[string]Value)
			rest := in
			for _, name := range tmpl.Varnames() {
				switch name[0] {
				case 'l':
					vars[name] = ListValue(a, b, c)
				case 'k':
					vars[name] = PairsValue(a, b, c, a)
				default:
					vars[name] = StringValue(rest[0])
					if n, ok := rt.prefix[name]; ok {
						want[name] = StringValue(truncate(rest[0], n))
					}
					rest = rest[1:]
				}
				if _, ok := want[name]; !ok {
					want[name] = vars[name]
				}
			}
			uri, err := tmpl.ExpandURI(vars)
			if err != nil {
				t.Fatalf("%s: ExpandURI(%q): %v", rt.template, in, err)
			}
			m, ok := tmpl.Match(uri)
			if rt.noMatch {
				if ok {
					t.Fatalf("%s: %q, the expansion of %q, gives %v; want no match", rt.template, uri, in, m.Map())
				}
				continue
			}
			if !ok {
				t.Fatalf("%s: %q, the expansion of %q, does not match", rt.template, uri, in)
			}
			if got := m.Map(); !maps.EqualFunc(got, want, equalValue) {
				t.Fatalf("%s: %q, the expansion of %q, gives %v", rt.template, uri, in, got)
			}
		}
	})
}
