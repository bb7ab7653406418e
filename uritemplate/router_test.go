package uritemplate_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpres/mcpres/uritemplate"
)

// newRouter adds templates, in order, to a router whose values are the
// template texts.
func newRouter(t *testing.T, templates ...string) *uritemplate.Router[string] {
	t.Helper()
	var r uritemplate.Router[string]
	for _, s := range templates {
		require.NoError(t, r.Add(uritemplate.MustParse(s), s), s)
	}
	return &r
}

// lookup returns the template text Lookup finds for uri, or "", after
// checking that Find finds the same.
func lookup(r *uritemplate.Router[string], uri string) string {
	v, vars, ok := r.Lookup(uri)
	if w, okF := r.Find(uri); w != v || okF != ok {
		panic(fmt.Sprintf("Find(%q) = %q, %v; Lookup found %q, %v", uri, w, okF, v, ok))
	}
	if !ok {
		return ""
	}
	if vars.Template().String() != v {
		panic(fmt.Sprintf("Lookup(%q) gave value %q with template %q", uri, v, vars.Template()))
	}
	return v
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// TestRouterPrecedence checks each rule of precedence with the templates
// added in both orders: the winner never depends on the order.
func TestRouterPrecedence(t *testing.T) {
	for _, c := range []struct {
		name      string
		templates []string
		want      map[string]string // URI → template, "" for none
	}{{
		name:      "longer literal prefix",
		templates: []string{"file:///{+path}", "file:///~/{name}"},
		want: map[string]string{
			"file:///~/notes":  "file:///~/{name}",
			"file:///~/":       "file:///~/{name}",
			"file:///~/a/b":    "file:///{+path}", // {name} stops at '/'
			"file:///etc/x":    "file:///{+path}",
			"file:///%7E/x":    "file:///{+path}",
			"file:///~notes":   "file:///{+path}",
			"file://host/x":    "",
			"file:///~/a%2Fb":  "file:///~/{name}",
			"file:///~/bad%FF": "",
		},
	}, {
		name:      "literal beats variable after the prefix",
		templates: []string{"db://{table}/{id}", "db://{table}/schema"},
		want: map[string]string{
			"db://users/schema": "db://{table}/schema",
			"db://users/42":     "db://{table}/{id}",
			"db://users/":       "db://{table}/{id}",
			"db://a%2Fb/schema": "db://{table}/schema",
		},
	}, {
		name:      "the five pairs of issue 13",
		templates: []string{"x://{a}", "x://{.b}", "x://{;c}", "x://{+d}", "x://{#e}", "x://f{/g}", "x://f{/g,h}", "db://{id:3}", "db://{name}"},
		want: map[string]string{
			"x://v":       "x://{a}",
			"x://.v":      "x://{.b}",
			"x://;c=1":    "x://{;c}",
			"x://;z=1":    "x://{a}", // {;c} takes only c
			"x://v/w":     "x://{+d}",
			"x://#v":      "x://{#e}",
			"x://f":       "x://f{/g}",
			"x://f/1":     "x://f{/g}",
			"x://f/1/2":   "x://f{/g,h}",
			"x://f/1/2/3": "x://{+d}",
			"db://abc":    "db://{id:3}",
			"db://abcd":   "db://{name}",
		},
	}, {
		name:      "shared only where nothing is bound",
		templates: []string{"x://{+a}", "x://{a}", "x://{/a*}", "x://{?q}"},
		want: map[string]string{
			"x://1":     "x://{a}",
			"x://":      "x://{a}", // by shape: {a} is narrowest
			"x://1/2":   "x://{+a}",
			"x:///1/2":  "x://{/a*}",
			"x://?q=1":  "x://{?q}",
			"x://1?q=1": "x://{+a}",
		},
	}, {
		name:      "query before exploded before reserved",
		templates: []string{"x://s{+a}", "x://s{/a*}", "x://s{?a}"},
		want: map[string]string{
			"x://s":       "x://s{?a}",
			"x://s?a=1":   "x://s{?a}",
			"x://s/1/2":   "x://s{/a*}",
			"x://s/1?a=1": "x://s{+a}",
		},
	}, {
		name:      "a literal suffix",
		templates: []string{"x://{id}", "x://{id}.json"},
		want: map[string]string{
			"x://1.json": "x://{id}.json",
			"x://1":      "x://{id}",
			"x://1.xml":  "x://{id}",
		},
	}, {
		name:      "a template that ends is more specific than one going on",
		templates: []string{"x://{id}{?q}", "x://{id}", "x://r/{id}{/rest*}", "x://r/{id}"},
		want: map[string]string{
			"x://1":       "x://{id}",
			"x://1?q=2":   "x://{id}{?q}",
			"x://r/1":     "x://r/{id}",
			"x://r/1/a/b": "x://r/{id}{/rest*}",
			"x://1/a?q=2": "",
		},
	}, {
		name:      "a template all literal",
		templates: []string{"file:///~/{name}", "file:///~/", "file:///{+path}", "file:///"},
		want: map[string]string{
			"file:///~/":  "file:///~/",
			"file:///~/a": "file:///~/{name}",
			"file:///":    "file:///",
			"file:///a":   "file:///{+path}",
		},
	}, {
		name:      "fall back to a shorter prefix",
		templates: []string{"api://v1/{+rest}", "api://v1/users/{id}", "api://v1/users/{id}/posts{?limit}", "{+any}"},
		want: map[string]string{
			"api://v1/users/7":                "api://v1/users/{id}",
			"api://v1/users/7/posts?limit=10": "api://v1/users/{id}/posts{?limit}",
			"api://v1/users/7/likes":          "api://v1/{+rest}",
			"api://v1/users/":                 "api://v1/users/{id}",
			"api://v2/users/7":                "{+any}",
			"other:x":                         "{+any}",
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			for _, order := range [][]string{c.templates, reverse(c.templates)} {
				r := newRouter(t, order...)
				assert.Equal(t, len(c.templates), r.Len())
				for uri, want := range c.want {
					assert.Equal(t, want, lookup(r, uri), "%s, added in order %q", uri, order)
				}
			}
		})
	}
}

// TestRouterOrderIndependent checks that a router's choices depend only
// on the templates it holds: every permutation of a set gives the same
// template for every URI.
func TestRouterOrderIndependent(t *testing.T) {
	set := []string{"x://{a}", "x://{?q}", "x://{/p*}", "x://{+r}", "x://s{?q}", "x://{.e}"}
	uris := []string{"x://", "x://s", "x://v", "x://?q=1", "x:///v", "x://.e", "x://s?q=1", "x://v/w"}
	want := map[string]string{}
	r := newRouter(t, set...)
	for _, u := range uris {
		want[u] = lookup(r, u)
	}
	assert.Equal(t, "x://{.e}", want["x://"]) // more specific than {a}
	assert.Equal(t, "x://s{?q}", want["x://s"])
	var permute func(k int)
	permute = func(k int) {
		if k == len(set) {
			r := newRouter(t, set...)
			for _, u := range uris {
				assert.Equal(t, want[u], lookup(r, u), "%s, added in order %q", u, set)
			}
			return
		}
		for i := k; i < len(set); i++ {
			set[k], set[i] = set[i], set[k]
			permute(k + 1)
			set[k], set[i] = set[i], set[k]
		}
	}
	permute(0)
}

func TestRouterLookupValues(t *testing.T) {
	var r uritemplate.Router[int]
	require.NoError(t, r.Add(uritemplate.MustParse("db://{table}/{id}{?fields*}"), 1))
	require.NoError(t, r.Add(uritemplate.MustParse("file:///{+path}"), 2))

	v, vars, ok := r.Lookup("db://users/42?fields=a&fields=b")
	require.True(t, ok)
	assert.Equal(t, 1, v)
	assert.Equal(t, "db://{table}/{id}{?fields*}", vars.Template().String())
	assert.Equal(t, vals("table", "users", "id", "42", "fields", lv("a", "b")), vars.Map())

	v, vars, ok = r.Lookup("file:///caf%C3%A9/a%20b")
	require.True(t, ok)
	assert.Equal(t, 2, v)
	assert.Equal(t, "café/a b", vars.Get("path"))

	v, vars, ok = r.Lookup("http://example.com/")
	assert.False(t, ok)
	assert.Zero(t, v)
	assert.Nil(t, vars.Template())

	var empty uritemplate.Router[int]
	_, _, ok = empty.Lookup("db://users/42")
	assert.False(t, ok)
	assert.Equal(t, 0, empty.Len())
	assert.False(t, empty.Remove("db://{table}/{id}"))
}

// TestRouterListsAndScalars checks that a URI with a list in a variable
// not exploded matches no template with that variable: the Router goes on
// to the others, and finds none if none is left.
func TestRouterListsAndScalars(t *testing.T) {
	team := "t://teams/{team}/notes"
	r := newRouter(t, team)
	for uri, want := range map[string]map[string]uritemplate.Value{
		"t://teams/red/notes":        vals("team", "red"),
		"t://teams/red%2Cblue/notes": vals("team", "red,blue"),
		"t://teams//notes":           vals("team", ""),
		"t://teams/red,blue/notes":   nil,
		"t://teams/,blue/notes":      nil,
		"t://teams/red,/notes":       nil,
		"t://teams/,/notes":          nil,
	} {
		v, vars, ok := r.Lookup(uri)
		if want == nil {
			assert.False(t, ok, "%s found %q with %v", uri, v, vars.Map())
			continue
		}
		if assert.True(t, ok, uri) {
			assert.Equal(t, team, v)
			assert.Equal(t, want, vars.Map(), uri)
		}
	}

	// An exploded template, or a reserved one, takes what {team} does
	// not: a list for the first, one String for the second.
	teams, rest := "t://teams/{teams*}/notes", "t://{+rest}"
	for _, order := range [][]string{{team, teams, rest}, {rest, teams, team}} {
		r := newRouter(t, order...)
		for uri, want := range map[string]struct {
			template string
			vars     map[string]uritemplate.Value
		}{
			"t://teams/red/notes":        {team, vals("team", "red")},
			"t://teams/red%2Cblue/notes": {team, vals("team", "red,blue")},
			"t://teams/red,blue/notes":   {teams, vals("teams", lv("red", "blue"))},
			"t://teams/,blue/notes":      {teams, vals("teams", lv("", "blue"))},
			"t://teams/red,blue/x":       {rest, vals("rest", "teams/red,blue/x")},
		} {
			v, vars, ok := r.Lookup(uri)
			if assert.True(t, ok, uri) {
				assert.Equal(t, want.template, v, "%s, added in order %q", uri, order)
				assert.Equal(t, want.vars, vars.Map(), uri)
			}
		}
	}
}

func TestRouterConflict(t *testing.T) {
	for _, c := range [][2]string{
		{"x://{a}", "x://{b}"},
		{"x://{a}", "x://{a}{b}"}, // the second could never be chosen
		{"x://{a}/{b}", "x://{c}/{d}"},
		{"x://{a}.{b}", "x://{a}-{b}"},
		{"file:///{+dir}/raw{/name}", "file:///{+dir}/src{/name}"},
		{"x://{id}{?q}", "x://{id}{/rest*}"},
		{"x://{?a}", "x://{?b}"},
		{"x://{id}.json", "x://{a}-{b}"},
		// Different literal prefixes.
		{"res://item1/{id}/detail{?q}", "res://{kind}/n3/{id}"},
		{"res://{kind}/n3/{id}", "res://item1/{id}/detail{?q}"},
	} {
		var r uritemplate.Router[string]
		require.NoError(t, r.Add(uritemplate.MustParse(c[0]), "first"))
		err := r.Add(uritemplate.MustParse(c[1]), "second")
		require.ErrorIs(t, err, uritemplate.ErrConflict, "%q then %q", c[0], c[1])
		assert.Contains(t, err.Error(), c[0])
		assert.Contains(t, err.Error(), c[1])
		// It names a URI both match.
		if _, witness, ok := strings.Cut(err.Error(), " both match "); assert.True(t, ok, "%v", err) {
			_, okA := uritemplate.MustParse(c[0]).Match(witness)
			_, okB := uritemplate.MustParse(c[1]).Match(witness)
			assert.True(t, okA && okB, "%q does not match both %q and %q", witness, c[0], c[1])
		}

		// The refused Add changed nothing.
		assert.Equal(t, 1, r.Len())
		assert.False(t, r.Remove(c[1]))
		uri, err := uritemplate.MustParse(c[0]).Expand(vals("a", "1", "b", "2", "c", "3", "d", "4", "dir", "d", "name", "n", "id", "7", "kind", "k"))
		require.NoError(t, err)
		v, vars, ok := r.Lookup(uri)
		require.True(t, ok, uri)
		assert.Equal(t, "first", v)
		assert.Equal(t, c[0], vars.Template().String())
	}

	// Templates one of which is more specific, or that share no URI at
	// which both bind a value, are no conflict.
	for _, c := range [][2]string{
		{"x://{a}", "x://{+a}"},
		{"x://{a}", "x://{a*}"},
		{"x://{a}", "x://{?a}"},
		{"x://{a}", "x://a{a}"},
		{"x://{a}", "x://{a:3}"},
		{"x://{a}", "x://{a,b}"},
		{"x://{a}", "x://{.a}"},
		{"x://{a}", "x://{;b}"},
		{"x://{+a}", "x://{#b}"},
		{"x://{?a}", "x://{&a}"},
		{"x://{/a*}", "x://{.b*}"},
		{"x://{a}.json", "x://{a}.xml"},
		{"file:///{dir}{/name}", "file:///{dir}{.ext}"},
	} {
		for _, order := range [][2]string{c, {c[1], c[0]}} {
			var r uritemplate.Router[string]
			require.NoError(t, r.Add(uritemplate.MustParse(order[0]), "first"))
			require.NoError(t, r.Add(uritemplate.MustParse(order[1]), "second"), "%q then %q", order[0], order[1])
		}
	}

	// Where the automata Add compares on share URIs at which both bind a
	// value, but Match confirms none of those it tries, Add refuses
	// rather than guess: the automaton takes x://{a}{a} as any x://{a}{b},
	// so x://{a}{a} and x://{b:1}{/c} seem to share x://v, which the
	// first, whose URIs repeat a value, does not match.
	var unsure uritemplate.Router[string]
	require.NoError(t, unsure.Add(uritemplate.MustParse("x://{a}{a}"), "first"))
	err := unsure.Add(uritemplate.MustParse("x://{b:1}{/c}"), "second")
	require.ErrorIs(t, err, uritemplate.ErrConflict)
	assert.Contains(t, err.Error(), "both may match URIs such as x://v")

	// More specific, but with a shorter literal prefix, which Lookup
	// would try last: every URI x://{.a}.z matches (x://.z, x://.v.z)
	// x://.{b} matches too.
	for _, order := range [][2]string{{"x://{.a}.z", "x://.{b}"}, {"x://.{b}", "x://{.a}.z"}} {
		var r uritemplate.Router[string]
		require.NoError(t, r.Add(uritemplate.MustParse(order[0]), "first"))
		err = r.Add(uritemplate.MustParse(order[1]), "second")
		require.ErrorIs(t, err, uritemplate.ErrConflict)
		assert.Contains(t, err.Error(), `"x://{.a}.z" is more specific than "x://.{b}" but has the shorter literal prefix`)
		assert.Equal(t, 1, r.Len())
	}

	var r uritemplate.Router[string]
	assert.Error(t, r.Add(nil, "nil"))
	assert.Equal(t, 0, r.Len())
}

// TestRouterRepeatedVariables checks how Add ranks templates that use a
// variable more than once (issue 22, point 2), in both orders: where one
// is shown more specific on an automaton that takes only the URIs its
// template matches, and as a conflict where the automaton of a template
// that repeats a variable would be the only ground.
func TestRouterRepeatedVariables(t *testing.T) {
	for _, c := range []struct {
		a, b     string
		conflict string            // a URI both match, named by the error; "" for none
		lookups  map[string]string // URI: the template Lookup finds
	}{
		// The pair the fuzz found: Lookup chose the first for
		// file:///b/%3D/a%2Cb, though neither is more specific.
		{a: "file:///b{/a,b*}{?a:2}{/q}", b: "file:///b{/a,b*}{?a:2}", conflict: "file:///b/v/v?a=v"},
		{a: "x://{a}/{a}", b: "x://{a}/{b}", lookups: map[string]string{
			"x://1/1": "x://{a}/{a}", "x://1/2": "x://{a}/{b}", "x://%31/1": "x://{a}/{a}", // one value, decoded
		}},
		{a: "x://{a}/v", b: "x://{a}/{a}", conflict: "x://v/v"},
		{a: "x://v/v", b: "x://{a}/{a}", lookups: map[string]string{"x://v/v": "x://v/v", "x://w/w": "x://{a}/{a}"}},
		// Neither is more specific: the first ignores c=1,2, which the
		// second does not match, and the second a=2.
		{a: "x://{a}{?a}", b: "x://{b}{?c}", conflict: "x://v?a=v"},
		{a: "x://{a}{?a}", b: "x://{b}{?a}", lookups: map[string]string{
			"x://1?a=1": "x://{a}{?a}", "x://1?a=2": "x://{b}{?a}", "x://1": "x://{b}{?a}", "x://?a=": "x://{a}{?a}",
		}},
		{a: "x://{a}{?a}", b: "x://{b}", conflict: "x://v"},
		// A prefix modifier over 64 is counted as 64 where that can
		// only narrow what the automaton takes.
		{a: "x://{a:100}", b: "x://{b:3}", lookups: map[string]string{"x://abc": "x://{b:3}", "x://abcd": "x://{a:100}"}},
		{a: "x://{a:100}", b: "x://{b}", lookups: map[string]string{
			"x://abc": "x://{a:100}", "x://" + strings.Repeat("a", 101): "x://{b}",
		}},
	} {
		for _, order := range [][2]string{{c.a, c.b}, {c.b, c.a}} {
			r := newRouter(t, order[0])
			err := r.Add(uritemplate.MustParse(order[1]), order[1])
			if c.conflict != "" {
				if assert.ErrorIs(t, err, uritemplate.ErrConflict, "%q then %q", order[0], order[1]) {
					assert.Contains(t, err.Error(), c.conflict)
				}
				continue
			}
			require.NoError(t, err, "%q then %q", order[0], order[1])
			for uri, want := range c.lookups {
				assert.Equal(t, want, lookup(r, uri), "%s in %q", uri, order)
			}
		}
	}
}

// TestRouterShadowed checks that templates several others shadow
// together, which Add accepts, are reported.
func TestRouterShadowed(t *testing.T) {
	r := newRouter(t, "x://{/a,b}", "x://{/c}", "x:///{d}/{e}", "y://{+p}", "y://{q}")
	assert.Equal(t, []string{"x://{/a,b}"}, r.Shadowed())
	assert.Equal(t, "x://{/c}", lookup(r, "x:///1"))
	assert.Equal(t, "x:///{d}/{e}", lookup(r, "x:///1/2"))

	require.True(t, r.Remove("x:///{d}/{e}"))
	assert.Empty(t, r.Shadowed())
	assert.Equal(t, "x://{/a,b}", lookup(r, "x:///1/2"))

	var empty uritemplate.Router[int]
	assert.Empty(t, empty.Shadowed())
}

func TestRouterReplace(t *testing.T) {
	var r uritemplate.Router[string]
	require.NoError(t, r.Add(uritemplate.MustParse("x://{id}"), "id v1"))
	require.NoError(t, r.Add(uritemplate.MustParse("x://{id}.json"), "json"))

	// Adding the same text again replaces the value: no conflict.
	require.NoError(t, r.Add(uritemplate.MustParse("x://{id}"), "id v2"))
	assert.Equal(t, 2, r.Len())
	v, vars, ok := r.Lookup("x://1")
	require.True(t, ok)
	assert.Equal(t, "id v2", v)
	assert.Equal(t, "x://{id}", vars.Template().String())
	v, _, _ = r.Lookup("x://1.json")
	assert.Equal(t, "json", v)
}

func TestRouterRemove(t *testing.T) {
	r := newRouter(t, "file:///{+path}", "file:///~/{name}", "db://{table}/{id}")
	assert.Equal(t, "file:///~/{name}", lookup(r, "file:///~/notes"))

	assert.True(t, r.Remove("file:///~/{name}"))
	assert.Equal(t, 2, r.Len())
	assert.Equal(t, "file:///{+path}", lookup(r, "file:///~/notes"))
	assert.False(t, r.Remove("file:///~/{name}"))
	assert.False(t, r.Remove("file:///~/{other}"))

	// What conflicted with a removed template may now be added.
	require.ErrorIs(t, r.Add(uritemplate.MustParse("db://{a}/{b}"), "db://{a}/{b}"), uritemplate.ErrConflict)
	assert.True(t, r.Remove("db://{table}/{id}"))
	assert.Equal(t, "", lookup(r, "db://t/1"))
	require.NoError(t, r.Add(uritemplate.MustParse("db://{a}/{b}"), "db://{a}/{b}"))
	assert.Equal(t, "db://{a}/{b}", lookup(r, "db://t/1"))

	// A removed template may be added back.
	require.NoError(t, r.Add(uritemplate.MustParse("file:///~/{name}"), "file:///~/{name}"))
	assert.Equal(t, "file:///~/{name}", lookup(r, "file:///~/notes"))

	for _, s := range []string{"file:///{+path}", "file:///~/{name}", "db://{a}/{b}"} {
		assert.True(t, r.Remove(s), s)
	}
	assert.Equal(t, 0, r.Len())
	assert.Equal(t, "", lookup(r, "file:///~/notes"))
}

func TestRouterMaxURILength(t *testing.T) {
	r := newRouter(t, "x://{+a}")
	uri := func(n int) string { return "x://" + strings.Repeat("a", n-len("x://")) }

	assert.Equal(t, "x://{+a}", lookup(r, uri(4096)), "the default cap is 4096 bytes")
	assert.Equal(t, "", lookup(r, uri(4097)))
	assert.Equal(t, "", lookup(r, uri(1<<20)))

	r.MaxURILength = 10
	assert.Equal(t, "x://{+a}", lookup(r, uri(10)))
	assert.Equal(t, "", lookup(r, uri(11)))

	r.MaxURILength = 8000
	assert.Equal(t, "x://{+a}", lookup(r, uri(8000)))
	assert.Equal(t, "", lookup(r, uri(8001)))
}

// TestRouterMany adds 1,000 templates with distinct literals, sharing
// prefixes, and checks each URI reaches its own. Under the race detector
// it adds 250, of the same four kinds: Add checks a new template against
// those it may overlap, so the test's time grows with the square of n,
// 6 to 15 s under -race for 1,000, and the race detector finds nothing in
// the 750 others (a Router is not shared between goroutines here).
func TestRouterMany(t *testing.T) {
	n := 1000
	if raceEnabled {
		n = 250
	}
	var r uritemplate.Router[int]
	templates := make([]string, n)
	for i := range n {
		switch i % 4 {
		case 0:
			templates[i] = fmt.Sprintf("res://item%d/{id}", i)
		case 1:
			templates[i] = fmt.Sprintf("res://item%d/{id}.detail{?q}", i)
		case 2:
			templates[i] = fmt.Sprintf("s%d://{+path}", i)
		case 3:
			templates[i] = fmt.Sprintf("res://{kind}/n%d/{id}", i)
		}
	}
	for i, s := range templates {
		require.NoError(t, r.Add(uritemplate.MustParse(s), i))
	}
	require.Equal(t, n, r.Len())
	for i, s := range templates {
		tmpl := uritemplate.MustParse(s)
		in := vals("id", fmt.Sprintf("id %d", i), "q", "x", "path", fmt.Sprintf("a/%d/b", i), "kind", "k")
		uri, err := tmpl.Expand(in)
		require.NoError(t, err)
		v, vars, ok := r.Lookup(uri)
		require.True(t, ok, uri)
		require.Equal(t, i, v, "%s reached %q", uri, vars.Template())
		for _, name := range tmpl.Varnames() {
			assert.Equal(t, in[name], vars.Map()[name], uri)
		}
	}
	_, _, ok := r.Lookup("res://item1000/x")
	assert.False(t, ok)
	_, _, ok = r.Lookup("res://item10/x/y")
	assert.False(t, ok)
}

// TestFindAllocs checks that Find allocates nothing for URIs without
// percent-escapes, matched by templates that use each variable once,
// whatever the expressions; a URI no template matches, or one over
// MaxURILength, costs nothing either.
func TestFindAllocs(t *testing.T) {
	r := newRouter(t, "db://users/{id}", "db://{table}/{id}{?fields*}", "file:///{+path}", "file:///~/{name}.md",
		"api://v1/users/{id}/posts{?limit,cursor}", "x://r{/segments*}", "x://m{;a,b}", "x://l/{a}.{b}")
	for uri, want := range map[string]string{
		"db://users/42":                           "db://users/{id}",
		"db://orders/7?fields=a&fields=b":         "db://{table}/{id}{?fields*}",
		"file:///notes/2026/11/meeting.md":        "file:///{+path}",
		"file:///~/todo.md":                       "file:///~/{name}.md",
		"api://v1/users/7/posts?limit=10":         "api://v1/users/{id}/posts{?limit,cursor}",
		"x://r/a/b/c":                             "x://r{/segments*}",
		"x://m;a=1;b=2":                           "x://m{;a,b}",
		"x://l/archive.tar.gz":                    "x://l/{a}.{b}",
		"nothing://here":                          "",
		"db://users/" + strings.Repeat("9", 5000): "",
	} {
		require.Equal(t, want, lookup(r, uri), uri)
		if n := testing.AllocsPerRun(100, func() { r.Find(uri) }); n != 0 {
			t.Errorf("Find(%.40q) allocates %v times, want 0", uri, n)
		}
	}
}

// TestRouterConcurrentLookups runs lookups side by side, for the race
// detector.
func TestRouterConcurrentLookups(t *testing.T) {
	r := newRouter(t, "file:///{+path}", "file:///~/{name}", "db://{table}/{id}{?fields}")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				assert.Equal(t, "file:///~/{name}", lookup(r, fmt.Sprintf("file:///~/n%d", j)))
				assert.Equal(t, "db://{table}/{id}{?fields}", lookup(r, fmt.Sprintf("db://t%d/%d?fields=%d", i, j, j)))
			}
		})
	}
	wg.Wait()
}
