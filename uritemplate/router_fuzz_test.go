package uritemplate

import (
	"slices"
	"strings"
	"testing"
)

// Parts that generated templates are made of, after "x://".
var (
	genLiterals = []string{"a", "/", ".", "-", "~/", "s", "?k=1", "é"}
	genExprs    = []string{
		"{a}", "{b}", "{+p}", "{#f}", "{.e}", "{/s}", "{/s*}", "{;m}", "{?q}", "{&r}", "{?q,r}",
		"{a:2}", "{/a,b}", "{l*}", "{.x*}", "{;k*}", "{?k*}", "{b,c}", "{+p:3}",
	}
	genValues = []Value{
		StringValue("v"), StringValue(""), StringValue("1.2"), StringValue("a/b"), StringValue("x,y"),
		StringValue("é"), StringValue("50%"), StringValue("?#"), ListValue("a", "b"), PairsValue("k", "v"),
	}
	// Expressions of any operator and up to three variables, made up
	// where a set's count has genMixed set: few names, so that a
	// template often uses one twice, and prefix modifiers.
	genOps   = []string{"", "+", "#", ".", "/", ";", "?", "&"}
	genNames = []string{"a", "b", "c"}
	genMods  = []string{"", ":1", ":2", ":4", "*"}
	// The values of such sets: genValues, and values a prefix cuts, that
	// hold a separator, or none (Items nil: the variable is left out).
	genMixedValues = append(slices.Clip(genValues),
		StringValue("hello"), StringValue("x.y"), StringValue("="), ListValue("=", "a,b"), Value{}, Value{})
)

// genMixed, set in the count byte of genTemplates' data, makes templates
// of made-up expressions too (the other bytes keep the meaning they had
// before it was).
const genMixed = 0x40

// genTemplates makes up to 6 templates from data: a count, then for each
// a length and that many parts; mixed reports whether the count had
// genMixed set.
func genTemplates(data []byte) (templates []string, mixed bool) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	count := next()
	mixed = count&genMixed != 0
	var out []string
	for range 2 + (count&^genMixed)%5 {
		var b strings.Builder
		b.WriteString("x://")
		for range 1 + next()%4 {
			c := next()
			switch {
			case !mixed && c%3 == 0:
				b.WriteString(genLiterals[c/3%len(genLiterals)])
			case !mixed:
				b.WriteString(genExprs[c/3%len(genExprs)])
			case c%4 == 0:
				b.WriteString(genLiterals[c/4%len(genLiterals)])
			case c%4 == 1:
				b.WriteString(genExprs[c/4%len(genExprs)])
			default:
				b.WriteString("{" + genOps[c/4%len(genOps)])
				for i := range 1 + c/32%3 {
					if i > 0 {
						b.WriteByte(',')
					}
					v := next()
					b.WriteString(genNames[v%len(genNames)] + genMods[v/len(genNames)%len(genMods)])
				}
				b.WriteByte('}')
			}
		}
		if s := b.String(); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, mixed
}

// FuzzRouter adds generated sets of templates to a router and checks, for
// an arbitrary URI and for expansions of every template accepted, what
// checkLookup and checkRanking check; that the same templates added in
// the reverse order are all accepted and choose the same; and that every
// expansion matches its template back to values that expand to it
// again, and through Lookup where it finds the template that made it.
func FuzzRouter(f *testing.F) {
	f.Add([]byte{4, 1, 3, 2, 0, 9, 4, 3, 30, 12, 3, 6, 1, 21, 2, 3, 1}, "x://v", byte(0))
	f.Add([]byte{3, 0, 1, 1, 4, 0, 3, 3, 9}, "x://.v", byte(2))
	f.Add([]byte{2, 0, 2, 0, 5}, "x://a/b", byte(3))
	f.Add([]byte{5, 1, 28, 1, 31, 1, 40, 1, 43, 2, 1, 13}, "x://?q=1&r=2", byte(7))
	// Made-up expressions: {/a:4,b}, {a:1,b}, {.b,a:2} and {;a*}{?a:2}.
	f.Add([]byte{genMixed | 2, 0, 50, 9, 1, 0, 34, 3, 1, 0, 46, 1, 6, 1, 22, 12, 26, 6}, "x:///hello", byte(0))
	f.Fuzz(func(t *testing.T, data []byte, uri string, pick byte) {
		texts, mixed := genTemplates(data)
		var r Router[int]
		var accepted []*Template
		for _, s := range texts {
			tmpl, err := Parse(s)
			if err != nil {
				continue
			}
			if r.Add(tmpl, len(accepted)) == nil {
				accepted = append(accepted, tmpl)
			}
		}
		var reversed Router[int]
		for i := len(accepted) - 1; i >= 0; i-- {
			if err := reversed.Add(accepted[i], i); err != nil {
				t.Fatalf("%q accepted in order %q, but not in reverse: %v", accepted, texts, err)
			}
		}
		values, tries := genValues, 1
		if mixed {
			values, tries = genMixedValues, 3
		}
		uris := []string{uri, "x://" + uri}
		from := map[string]*Template{} // an expansion, and its template
		for i, tmpl := range accepted {
			for try := range tries {
				vars := map[string]Value{}
				for j, name := range tmpl.names {
					v := values[(int(pick)+i+j+7*try)%len(values)]
					if v.Items == nil {
						continue // left out
					}
					switch {
					case v.Kind != String && (!tmpl.alwaysExploded(name) || tmpl.prefixed[j]):
						// Lists and scalars: Match gives a variable not
						// exploded scalars only; and prefixes apply to
						// strings only.
						v = StringValue(strings.Join(v.Items, "-"))
					case v.Kind == Pairs:
						// A key that is a variable's name reads as that
						// variable's item (as FuzzURIRoundTrip has it).
						v = PairsValue("K"+v.Items[0], v.Items[1])
					}
					vars[name] = v
				}
				u, err := tmpl.ExpandURI(vars)
				if err != nil {
					t.Fatalf("%q does not expand %v: %v", tmpl, vars, err)
				}
				uris = append(uris, u)
				if from[u] == nil {
					from[u] = tmpl
				}
				// Round trip: u matches, and the values Match gives
				// expand to u again.
				m, ok := tmpl.Match(u)
				if !ok {
					t.Fatalf("%q does not match %q, which it expands %v to", tmpl, u, vars)
				}
				if back, err := tmpl.ExpandURI(m.Map()); err != nil || back != u {
					t.Fatalf("%q: %q matches as %v, which expands to %q (%v)", tmpl, u, m.Map(), back, err)
				}
			}
		}
		for _, u := range uris {
			checkLookup(t, &r, accepted, u)
			checkRanking(t, &r, accepted, u, uris)
			v, vars, ok := r.Lookup(u)
			w, _, okR := reversed.Lookup(u)
			if ok != okR || v != w {
				t.Fatalf("Lookup(%q) in %q depends on the order templates were added in", u, accepted)
			}
			if !ok {
				continue
			}
			// A template handed out u; a more specific one may take it,
			// as checkLookup checks, and then need not give it back.
			if f := from[u]; f != nil && vars.Template().String() == f.String() {
				if back, err := vars.Template().ExpandURI(vars.Map()); err != nil || back != u {
					t.Fatalf("Lookup(%q) found %q with %v, which expands to %q (%v)", u, accepted[v], vars.Map(), back, err)
				}
			}
		}
	})
}

// checkRanking checks with Match alone, not the automata Add ranks on,
// the choice Lookup makes for uri in r, which holds templates with their
// indexes as values. The template found and any other that matches uri
// too, each binding some non-empty value there, share a URI, so Add
// found the first more specific: every URI it matches the other must
// match too. Of samples, none may show otherwise.
func checkRanking(t *testing.T, r *Router[int], templates []*Template, uri string, samples []string) {
	t.Helper()
	v, _, ok := r.Lookup(uri)
	if !ok || !bindsSome(templates[v], uri) {
		return
	}
	found := templates[v]
	for _, other := range templates {
		if other == found || !bindsSome(other, uri) {
			continue
		}
		for _, s := range samples {
			if _, ok := found.Match(s); !ok {
				continue
			}
			if _, ok := other.Match(s); !ok {
				t.Fatalf("Lookup(%q) found %q before %q, which matches it too, binding values; but %q matches %q and the other does not: neither is more specific",
					uri, found, other, found, s)
			}
		}
	}
}

// alwaysExploded reports whether every use of the variable name in t is
// exploded.
func (t *Template) alwaysExploded(name string) bool {
	for _, p := range t.parts {
		if p.expr != nil && slices.ContainsFunc(p.expr.vars, func(v varspec) bool { return v.name == name && !v.explode }) {
			return false
		}
	}
	return true
}
