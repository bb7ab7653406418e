package uritemplate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// Ambiguity names what makes a template ambiguous, and nothing for one
// that is not.
func TestAmbiguity(t *testing.T) {
	for tmpl, want := range map[string]string{
		"x://{a}":                 "",
		"file:///{+path}":         "",
		"db://{table}/{id}":       "",
		"x://{id}.json":           "",
		"x://{/a}/{b}":            "",
		"x://r{;a}{;c}":           "",
		"x://{a}{?b,c}":           "",
		"x://{a}/{b}{#c}":         "",
		"x:{a}/{l*}{/k*}{?b,l2*}": "",
		"x://{a}{b}":              "{a} and {b} may be side by side",
		"x://{a}{.b}":             "{a} and {.b} may be side by side",
		"x://{+dir}{/name}":       "{+dir} and {/name} may be side by side",
		"x://{a}{?q}{b}":          "{a} and {b} may be side by side",
		"x://{/a}{/b}":            "a value of either alone expands alike",
		"x://{/a*}{/b}":           "{/a*} and {/b} may be side by side",
		"x://r{?a*}{&b*}":         "2 exploded variables",
		"x://{/a*,b}":             "the exploded a is followed by other variables",
		"x://{.a,b}":              "may hold '.', its separator",
		"x://{+a,b}":              "may hold ',', its separator",
	} {
		got := MustParse(tmpl).Ambiguity()
		if want == "" {
			assert.Empty(t, got, tmpl)
			continue
		}
		assert.Contains(t, got, want, tmpl)
		assert.Contains(t, got, tmpl, "the message names the template")
	}
}

// uriRoundTrips are templates, ambiguous or not, whose every expansion
// Match must take back to values that expand to the same URI.
var uriRoundTrips = []string{
	"x://{a}", "x://{a}{b}", "x://{a}{.b}", "x://{+a}{/b}", "x://{/a}{/b}", "x://{/l*}{/b}",
	"x://r{;a}{;b}", "x://r{;a,b}{;c}", "x://r{?k*}{&k2*}", "x://{/a:4,b}", "x://{a:2}{b}",
	"x://{/l*,b}", "x://{.a,b}", "x://{+a,b}", "x://{#a,b}", "file:///{+a}", "x://{a}/{b}{#c}",
	"x://{a}{?b,c}", "x://s{?c,a,b}", "x:{;a}{?b}{#c}", "x://{+a}{?b}", "x://{+a}{#b}",
	"café/{a}", "x://{a}{+b}", "x://{;a}{;a}",
	// Issue 22: a prefix modifier next to a variable left out, and
	// variables used twice.
	"x://{a:3,b}", "x://{.b,a:2}", "x://{+a:2,b}", "x://{/a:1,b,c:1}",
	"file:///b{/a,b*}{?a:2}{/q}", "x://{a}{?a}", "x://{/a,b}{?a}", "x://{a:2}{/a}", "x://{.a,b}{/a}",
}

// FuzzURIRoundTrip expands fuzzed values with every template of
// uriRoundTrips, as a server hands out URIs (ExpandURI: Expand writes a
// '?' or '#' of a {+x} value as it is, which gives the URI another shape
// than the template's), with every variable defined and with each left
// out in turn: Match must take each expansion, and give values that
// expand back to it. (FuzzRoundTrip checks, for templates that are not
// ambiguous, that the values are the ones expanded.)
func FuzzURIRoundTrip(f *testing.F) {
	for _, c := range [][3]string{
		{"a", "b", "c"}, {"p/q", "r", "s"}, {"a,b", "c.d", "e;f=g"}, {"café", "%41", "50%"}, {"", "x", ""},
		{"x.y", "é", "hello"}, {"hello", "hello", "hello"}, {"=", "a,b", "="},
	} {
		f.Add(c[0], c[1], c[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, s := range []string{a, b, c} {
			if !utf8.ValidString(s) {
				return
			}
		}
		for _, raw := range uriRoundTrips {
			tmpl := MustParse(raw)
			for omit := -1; omit < len(tmpl.Varnames()); omit++ {
				vars := fuzzVars(tmpl, a, b, c, false)
				if omit >= 0 {
					delete(vars, tmpl.Varnames()[omit])
				}
				uri, err := tmpl.ExpandURI(vars)
				if err != nil {
					t.Fatalf("%s: Expand: %v", raw, err)
				}
				m, ok := tmpl.Match(uri)
				if !ok {
					if listInScalar(tmpl, vars) {
						continue // a list given to a variable not exploded: refused by design
					}
					t.Fatalf("%s: %q, the expansion of %q, does not match", raw, uri, vars)
				}
				again, err := tmpl.ExpandURI(m.Map())
				if err != nil || again != uri {
					t.Fatalf("%s: %q (from %q) matched as %v, which expands to %q (%v)", raw, uri, vars, m.Map(), again, err)
				}
			}
		}
	})
}

// fuzzVars gives the variables of tmpl values made of a, b and c: a List
// to those whose names start with l, Pairs (whose keys are never a
// variable's name) to those with k, and a String to the others, in turn;
// if sparse, an empty one every other variable is left undefined.
func fuzzVars(tmpl *Template, a, b, c string, sparse bool) map[string]Value {
	vars := map[string]Value{}
	in := []string{a, b, c}
	for i, name := range tmpl.Varnames() {
		switch {
		case strings.HasPrefix(name, "l"):
			vars[name] = ListValue(a, b, c)
		case strings.HasPrefix(name, "k"):
			vars[name] = PairsValue("K"+a, b, "K"+c+"x", a)
		case !sparse || in[i%3] != "" || i%2 == 0:
			vars[name] = StringValue(in[i%3])
		}
	}
	return vars
}
