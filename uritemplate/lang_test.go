package uritemplate

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// modelTemplates are the templates whose models the tests check.
var modelTemplates = append(slices2(uriRoundTrips), []string{
	"x://{a}", "x://{.b}", "x://{;b}", "x://{+a}", "x://{#b}", "x://f{/a}", "x://f{/a,b}", "db://{id:3}",
	"db://{name}", "x://{a}.{b}", "x://{a}-{b}", "file:///{+dir}/raw{/name}", "file:///{+dir}/src{/name}",
	"x://{a}{b}", "x://{?a,b}", "x://{?k*}", "x://{;l*}", "x://{/k*}", "x://{.l*}",
}...)

func slices2(s []string) []string { return append([]string(nil), s...) }

// Every URI ExpandURI gives that Match takes back is in the template's
// model: the model is never narrower than Match.
func FuzzModel(f *testing.F) {
	for _, c := range [][3]string{{"a", "b", "c"}, {"p/q", "", "é"}, {"a,b", "c.d", "e;f=g"}, {"50%", "%41", "?#[]"}} {
		f.Add(c[0], c[1], c[2])
	}
	models := map[string]*nfa{}
	for _, raw := range modelTemplates {
		models[raw] = MustParse(raw).model()
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, s := range []string{a, b, c} {
			if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
				return
			}
		}
		for _, raw := range modelTemplates {
			tmpl := MustParse(raw)
			vars := fuzzVars(tmpl, a, b, c, true)
			uri, err := tmpl.ExpandURI(vars)
			if err != nil {
				continue
			}
			if _, ok := tmpl.Match(uri); !ok {
				continue
			}
			if !models[raw].accepts(uri) {
				t.Fatalf("%s: the model refuses %q, which ExpandURI gives for %v and Match takes", raw, uri, vars)
			}
		}
	})
}

// overlaps finds a URI two templates share, which both match, and none
// for templates that share none.
func TestOverlaps(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"x://{a}", "x://{b}", true},
		{"x://{a}.{b}", "x://{a}-{b}", true},
		{"file:///{+dir}/raw{/name}", "file:///{+dir}/src{/name}", true},
		{"db://{id:3}", "db://{name}", true},
		{"x://a/{b}", "x://{c}/b", true},
		{"x://{a}.json", "x://{a}.xml", false},
		{"x://u/{id}", "x://g/{id}", false},
		{"x://{?q}", "x://{/p}", true}, // both expand to x:// alone
	} {
		w, ok := overlaps(MustParse(c.a), MustParse(c.b))
		assert.Equal(t, c.want, ok, "%s / %s: %q", c.a, c.b, w)
		if ok {
			_, okA := MustParse(c.a).Match(w)
			_, okB := MustParse(c.b).Match(w)
			assert.True(t, okA && okB, "%s / %s: witness %q must match both", c.a, c.b, w)
		}
	}
}

// within tells when one template's model holds only URIs another's does
// too, and otherwise names one it does not.
func TestWithin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"db://{id:3}", "db://{name}", true},
		{"db://{name}", "db://{id:3}", false},
		{"x://{a}.json", "x://{a}", true},
		{"x://{a}", "x://{a}.json", false},
		{"file:///~/{name}", "file:///{+path}", true},
		{"x://{id}", "x://{id}{?q}", true},
		{"x://{a}{b}", "x://{a}", true},
		{"x://{a}", "x://{a}{b}", true},
		{"x://{.b}", "x://{a}", true},
		{"x://{+a}", "x://{#b}", false},
		{"x://{a}.{b}", "x://{a}-{b}", false},
	} {
		w, ok := within(MustParse(c.a), MustParse(c.b))
		assert.Equal(t, c.want, ok, "%s within %s: %q", c.a, c.b, w)
		if !ok {
			okA, okB := MustParse(c.a).model().accepts(w), MustParse(c.b).model().accepts(w)
			assert.True(t, okA && !okB, "%s within %s: %q must be in the first's model only", c.a, c.b, w)
		}
	}
}

// FuzzModelExact checks that the model of a generated template that is
// not wide takes exactly the URIs Match takes, but for values that do not
// decode to UTF-8 (URIs with a triplet over %7F are left out), and that
// the narrow model of one that is takes none that Match does not.
func FuzzModelExact(f *testing.F) {
	f.Add([]byte{genMixed | 2, 0, 50, 9, 1, 0, 34, 3, 1, 0, 46, 1, 6, 1, 22, 12, 26, 6}, "/hello", byte(0))
	f.Add([]byte{1, 0, 28, 0, 31}, "x://?q=1&r=2", byte(3))
	f.Add([]byte{genMixed | 1, 1, 22, 12, 26, 6}, ";a=1;k=2", byte(9))
	f.Fuzz(func(t *testing.T, data []byte, uri string, pick byte) {
		texts, _ := genTemplates(data)
		for i, s := range texts {
			tmpl, err := Parse(s)
			if err != nil {
				continue
			}
			uris := []string{uri, "x://" + uri}
			vars := map[string]Value{}
			for j, name := range tmpl.names {
				if v := genMixedValues[(int(pick)+i+j)%len(genMixedValues)]; v.Items != nil {
					vars[name] = v
				}
			}
			if u, err := tmpl.ExpandURI(vars); err == nil {
				uris = append(uris, u, u+uri, u+"&a=1,2", u+";b")
			}
			model, narrow := tmpl.model(), tmpl.narrowModel()
			for _, u := range uris {
				if highTriplet(u) {
					continue
				}
				_, ok := tmpl.Match(u)
				if in := model.accepts(u); in != ok && (!tmpl.wide || !in) {
					t.Fatalf("%q: Match(%q) = %v, but the model takes it: %v", tmpl, u, ok, in)
				}
				if tmpl.wide && narrow != nil && narrow.accepts(u) && !ok {
					t.Fatalf("%q: the narrow model takes %q, which Match does not", tmpl, u)
				}
			}
		}
	})
}

// highTriplet reports whether s holds a triplet of a byte over 7F, which
// may not decode to UTF-8.
func highTriplet(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0 && i+1 < len(s); i = strings.IndexByte(s, '%') {
		if strings.IndexByte("89ABCDEFabcdef", s[i+1]) >= 0 {
			return true
		}
		s = s[i+1:]
	}
	return false
}
