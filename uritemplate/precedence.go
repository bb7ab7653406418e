package uritemplate

// This file decides how two templates rank, by the URIs they match (see
// Router, Precedence), on the models of lang.go.

// A rank is how two templates a and b compare.
type rank int

const (
	unranked  rank = iota // neither is more specific; no URI needs them ranked
	aFirst                // a is more specific: it matches only URIs b does
	bFirst                // b is more specific
	clash                 // they share a URI and neither is more specific
	unsure                // they may share one; neither is more specific
	identical             // they match the same URIs: one could never be chosen
)

// compare ranks a and b, with models ma and mb. For a clash it returns a
// URI both match, each binding some non-empty value; where it could not
// show that they share no such URI, nor find one, it returns unsure and
// the URI their models share.
func compare(a, b *Template, ma, mb *nfa) (rank, string) {
	if b.raw < a.raw {
		// The same answer whichever comes first: the search for a shared
		// URI tries a bounded number.
		k, uri := compare(b, a, mb, ma)
		switch k {
		case aFirst:
			k = bFirst
		case bFirst:
			k = aFirst
		}
		return k, uri
	}
	if _, ok := ma.overlaps(mb); !ok {
		return unranked, ""
	}
	aInB, bInA := inside(ma, b, mb), inside(mb, a, ma)
	switch {
	case aInB && !bInA:
		return aFirst, ""
	case bInA && !aInB:
		return bFirst, ""
	}
	uri, ok, maybe := sharedURI(a, b, ma, mb)
	switch {
	case ok && aInB && bInA:
		return identical, uri
	case ok:
		return clash, uri
	case maybe != "":
		// The models share URIs at which both bind values, but none
		// tried matches both: refuse rather than rank by guess.
		return unsure, maybe
	}
	return unranked, ""
}

// inside reports whether the automata show that every URI the template
// of model mx matches, y, of model my, matches too. A model takes every
// URI its template matches, and a few more where the template is wide
// (see Template.wide), which could make mx seem within my: then mx must
// be within y's narrow model, which takes only URIs y matches. So
// x://{a}/{a} is inside x://{a}/{b}, but x://{a}/v is not inside
// x://{a}/{a}, whose model is x://{a}/{b}'s and has no narrow one.
func inside(mx *nfa, y *Template, my *nfa) bool {
	if y.wide {
		if my = y.narrowModel(); my == nil {
			return false
		}
	}
	_, ok := mx.within(my)
	return ok
}
