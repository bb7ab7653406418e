package uritemplate

// This file models the URIs a template matches, as a nondeterministic
// automaton over ASCII bytes that takes what Match takes (and a little
// more where the template is wide; see Template.wide), so that two
// templates can be compared by what they match rather than by how they
// look: do they share a URI (overlaps), and does one match only URIs the
// other does too (within). A URI the model gives is checked with Match.
// It is the ground for the Router's conflict rule; see issue [13].

import (
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// A byteSet is a set of ASCII bytes.
type byteSet [2]uint64

func (s *byteSet) add(c byte)           { s[c>>6] |= 1 << (c & 63) }
func (s byteSet) has(c byte) bool       { return c < 0x80 && s[c>>6]&(1<<(c&63)) != 0 }
func (s byteSet) and(t byteSet) byteSet { return byteSet{s[0] & t[0], s[1] & t[1]} }
func (s byteSet) empty() bool           { return s[0] == 0 && s[1] == 0 }

func setOf(cs string) byteSet {
	var s byteSet
	for i := 0; i < len(cs); i++ {
		s.add(cs[i])
	}
	return s
}

// An nfa is an automaton with byte-set and empty transitions; state 0
// starts it and accept ends it.
type nfa struct {
	edges  [][]edge // by state
	accept int
	// prefix is the template's literal prefix, which the automaton
	// spells out from state 0 to state len(prefix).
	prefix string
	// unbound is set while adding text that binds no variable (a
	// parameter an expression ignores): its edges are not marked val.
	unbound bool
	// narrow is set while building a model that takes only URIs Match
	// takes (see Template.narrowModel).
	narrow bool
}

type edge struct {
	on  byteSet // empty: an empty transition
	eps bool
	val bool // the edge starts a character of a value's text
	to  int
}

func (n *nfa) state() int {
	n.edges = append(n.edges, nil)
	return len(n.edges) - 1
}

func (n *nfa) on(from int, s byteSet, to int) {
	n.edges[from] = append(n.edges[from], edge{on: s, to: to})
}

func (n *nfa) eps(from, to int) {
	n.edges[from] = append(n.edges[from], edge{eps: true, to: to})
}

// lit adds a path spelling s from from, and returns its end.
func (n *nfa) lit(from int, s string) int {
	for i := 0; i < len(s); i++ {
		to := n.state()
		var b byteSet
		b.add(s[i])
		n.on(from, b, to)
		from = to
	}
	return from
}

// char adds, from from to to, one character of a value's text as Match
// takes it: a byte of raw (the expression's allowed characters but '%'),
// or a character percent-encoded, as a triplet with hex digits in either
// case for an ASCII byte, two to four for a non-ASCII one (Match refuses
// text that does not decode to UTF-8; the model leaves bytes 80-BF
// alone after any lead, which only widens it).
func (n *nfa) char(from, to int, raw byteSet) {
	first := len(n.edges[from])
	defer func() {
		for i := first; i < len(n.edges[from]); i++ {
			n.edges[from][i].val = !n.unbound
		}
	}()
	n.on(from, raw, to)
	hex := setOf("0123456789ABCDEFabcdef")
	ascii := n.triplet(from, setOf("01234567"))
	n.on(ascii, hex, to)
	for _, lead := range []struct {
		hi    string
		conts int
	}{{"Cc", 1}, {"Dd", 1}, {"Ee", 2}, {"Ff", 3}} {
		at := n.on2(n.triplet(from, setOf(lead.hi)), hex)
		for i := range lead.conts {
			next := to
			if i < lead.conts-1 {
				next = n.state()
			}
			mid := n.triplet(at, setOf("89ABab"))
			n.on(mid, hex, next)
			at = next
		}
	}
}

// char1 is char for a run of any length: a byte of raw, or '%' and two
// hex digits in either case.
func (n *nfa) char1(from, to int, raw byteSet) {
	hex := setOf("0123456789ABCDEFabcdef")
	n.edges[from] = append(n.edges[from], edge{on: raw, to: to, val: !n.unbound})
	pct := n.state()
	n.edges[from] = append(n.edges[from], edge{on: setOf("%"), to: pct, val: !n.unbound})
	n.on(n.on2(pct, hex), hex, to)
}

// triplet adds '%' and a first hex digit in hi from from, and returns the
// state before the second digit.
func (n *nfa) triplet(from int, hi byteSet) int {
	pct := n.state()
	n.on(from, setOf("%"), pct)
	mid := n.state()
	n.on(pct, hi, mid)
	return mid
}

// on2 adds a transition on s from from to a new state, and returns it.
func (n *nfa) on2(from int, s byteSet) int {
	to := n.state()
	n.on(from, s, to)
	return to
}

// maxModelPrefix is the largest prefix modifier the model counts
// exactly; a larger one is modelled as no limit, which only widens the
// language (or, in a narrow model, as maxModelPrefix, which narrows it).
const maxModelPrefix = 64

// value adds, from from, the text of a value: any number of characters,
// or at most prefix of them; it returns the end.
func (n *nfa) value(from int, raw byteSet, prefix int) int {
	if n.narrow && prefix > maxModelPrefix {
		prefix = maxModelPrefix
	}
	if prefix <= 0 || prefix > maxModelPrefix {
		// Any number of characters: raw bytes and triplets of any hex
		// digits, which only widens what Match takes (valid UTF-8).
		loop := n.state()
		n.eps(from, loop)
		n.char1(loop, loop, raw)
		return loop
	}
	end := n.state()
	at := from
	for range prefix {
		n.eps(at, end)
		next := n.state()
		n.char(at, next, raw)
		at = next
	}
	n.eps(at, end)
	return end
}

// raw returns the characters but '%' that a match of e may hold.
func (e *expr) raw() byteSet {
	var s byteSet
	for c := byte(0); c < 0x80; c++ {
		if e.allow[c] && c != '%' {
			s.add(c)
		}
	}
	return s
}

// exprText adds, from from, the text Match may give e: nothing, or e's
// first character (or the one of a query merged in) and a run of the
// characters e allows; a variable with a prefix modifier, not named,
// takes at most that many characters. It returns the end. The run may be
// wider than what Match binds (that the uses of a repeated variable
// agree is not checked), so a URI the model finds is checked with Match
// before it is trusted.
func (n *nfa) exprText(from int, e *expr) int {
	end := n.state()
	n.eps(from, end) // every variable undefined, or {x} empty
	start := from
	if e.first != 0 {
		start = n.state()
		n.on(from, setOf(string(e.first)), start)
	}
	raw := e.raw()
	exploded := slices.ContainsFunc(e.vars, func(v varspec) bool { return v.explode })
	if e.named {
		// A query with a {&…} merged in that starts with '&' is the
		// {&…}'s alone (see matcher.bind).
		n.namedText(start, end, e)
		if e.amps != nil {
			amps := n.state()
			n.on(from, setOf(string(e.alt)), amps)
			n.namedText(amps, end, e.amps)
		}
		return end
	}
	if exploded {
		n.eps(n.value(start, raw, 0), end)
		return end
	}
	// Positional variables, not exploded: each takes a run of items,
	// split on e.sep, in order, or none (undefined, and left out with
	// its separator); one item, but in {.…}, {+…} and {#…}, whose values
	// may hold e.sep.
	chars := raw
	if e.op != '.' && !e.reserved {
		chars[e.sep>>6] &^= 1 << (e.sep & 63)
	}
	none, some := start, -1 // before the next variable: no item yet, or some
	for _, v := range e.vars {
		next := n.state()
		n.eps(n.value(none, chars, v.prefix), next)
		if some >= 0 {
			n.eps(n.value(n.lit(some, string(e.sep)), chars, v.prefix), next)
			n.eps(some, next)
		}
		some = next
	}
	n.eps(some, end)
	return end
}

// model returns an automaton of the URIs t matches: every URI Match takes
// is in it, and, where t is not wide (see Template.wide), only those but
// for values that do not decode to UTF-8.
func (t *Template) model() *nfa {
	return t.buildModel(false)
}

// narrowModel returns, for a template that uses each variable once, an
// automaton of URIs t matches (but for values that do not decode to
// UTF-8): its model, with a prefix modifier over maxModelPrefix counted
// as maxModelPrefix. It is nil for a template that repeats a variable,
// whose uses must agree, which an automaton cannot check.
func (t *Template) narrowModel() *nfa {
	if t.repeats {
		return nil
	}
	return t.buildModel(true)
}

func (t *Template) buildModel(narrow bool) *nfa {
	n := &nfa{prefix: t.prefix, narrow: narrow}
	at := n.state()
	for _, p := range t.parts {
		if p.expr == nil {
			at = n.lit(at, p.lit)
			continue
		}
		at = n.exprText(at, p.expr)
	}
	n.accept = at
	return n
}

// closure adds to set the states reachable from it by empty transitions.
func (n *nfa) closure(set []bool, stack []int) {
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range n.edges[s] {
			if e.eps && !set[e.to] {
				set[e.to] = true
				stack = append(stack, e.to)
			}
		}
	}
}

// accepts reports whether n accepts s.
func (n *nfa) accepts(s string) bool {
	cur := make([]bool, len(n.edges))
	cur[0] = true
	n.closure(cur, []int{0})
	for i := 0; i < len(s); i++ {
		next := make([]bool, len(n.edges))
		var stack []int
		for st, in := range cur {
			if !in {
				continue
			}
			for _, e := range n.edges[st] {
				if !e.eps && e.on.has(s[i]) && !next[e.to] {
					next[e.to] = true
					stack = append(stack, e.to)
				}
			}
		}
		n.closure(next, stack)
		cur = next
	}
	return cur[n.accept]
}

// overlaps returns a shortest URI both a and b hand out, if there is one.
func overlaps(a, b *Template) (string, bool) {
	return a.model().overlaps(b.model())
}

// overlaps returns a shortest text both na and nb accept, if there is one.
func (na *nfa) overlaps(nb *nfa) (string, bool) {
	// Breadth first over pairs of states, empty moves first.
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	width := len(nb.edges)
	seen := sc.seen
	if need := (len(na.edges)*width + 63) / 64; cap(seen) < need {
		seen = make([]uint64, need)
	} else {
		seen = seen[:need]
		clear(seen)
	}
	seen[0] = 1
	nodes := append(sc.nodes[:0], pairNode{prev: -1})
	defer func() { sc.seen, sc.nodes = seen, nodes }()
	for i := 0; i < len(nodes); i++ {
		x, y := int(nodes[i].x), int(nodes[i].y)
		if x == na.accept && y == nb.accept {
			var out []byte
			for j := i; nodes[j].prev >= 0; j = int(nodes[j].prev) {
				if nodes[j].c != 0 {
					out = append(out, nodes[j].c)
				}
			}
			slices.Reverse(out)
			return string(out), true
		}
		push := func(x, y int, on byteSet) {
			k := x*width + y
			if seen[k/64]&(1<<(k%64)) == 0 {
				seen[k/64] |= 1 << (k % 64)
				nodes = append(nodes, pairNode{prev: int32(i), c: lowest(on), x: int32(x), y: int32(y)})
			}
		}
		for _, ea := range na.edges[x] {
			if ea.eps {
				push(ea.to, y, byteSet{})
			}
		}
		for _, eb := range nb.edges[y] {
			if eb.eps {
				push(x, eb.to, byteSet{})
			}
		}
		for _, ea := range na.edges[x] {
			if ea.eps {
				continue
			}
			for _, eb := range nb.edges[y] {
				if eb.eps {
					continue
				}
				if both := ea.on.and(eb.on); !both.empty() {
					push(ea.to, eb.to, both)
				}
			}
		}
	}
	return "", false
}

// A pairNode is a step of overlaps' search: a pair of states, reached
// from node prev on byte c (0 for an empty move).
type pairNode struct {
	prev int32
	c    byte
	x, y int32
}

// scratch holds the buffers of overlaps, kept between calls.
type scratch struct {
	seen  []uint64
	nodes []pairNode
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// lowest returns the smallest byte of a non-empty s, preferring a
// letter or digit, which reads best in a message.
func lowest(s byteSet) byte {
	for _, c := range [...]byte{'v', 'x', '0', '1'} {
		if s.has(c) {
			return c
		}
	}
	if lo := s[0] &^ 1; lo != 0 {
		return byte(bits.TrailingZeros64(lo))
	}
	if s[1] != 0 {
		return byte(64 + bits.TrailingZeros64(s[1]))
	}
	return 0
}

// within reports whether every URI a hands out b hands out too; if not,
// it returns a shortest URI of a's that b does not hand out.
func within(a, b *Template) (outside string, ok bool) {
	return a.model().within(b.model())
}

// within reports whether every text na accepts nb accepts too; if not, it
// returns a shortest text of na's that nb does not accept.
func (na *nfa) within(nb *nfa) (outside string, ok bool) {
	// Breadth first over a state of a and the set of b's states the same
	// text reaches (b made deterministic as it goes).
	type key struct {
		x   int
		set string
	}
	type node struct {
		prev int
		c    byte
		x    int
		set  []bool
	}
	encode := func(set []bool) string {
		b := make([]byte, (len(set)+7)/8)
		for i, in := range set {
			if in {
				b[i/8] |= 1 << (i % 8)
			}
		}
		return string(b)
	}
	classes := byteClasses(na, nb)
	startB := make([]bool, len(nb.edges))
	startB[0] = true
	nb.closure(startB, []int{0})
	nodes := []node{{prev: -1, x: 0, set: startB}}
	seen := map[key]bool{{0, encode(startB)}: true}
	for i := 0; i < len(nodes); i++ {
		cur := nodes[i]
		if cur.x == na.accept && !cur.set[nb.accept] {
			var out []byte
			for j := i; nodes[j].prev >= 0; j = nodes[j].prev {
				if nodes[j].c != 0 {
					out = append(out, nodes[j].c)
				}
			}
			slices.Reverse(out)
			return string(out), false
		}
		push := func(x int, set []bool, c byte) {
			k := key{x, encode(set)}
			if !seen[k] {
				seen[k] = true
				nodes = append(nodes, node{prev: i, c: c, x: x, set: set})
			}
		}
		for _, ea := range na.edges[cur.x] {
			if ea.eps {
				push(ea.to, cur.set, 0)
				continue
			}
			// One byte of each class ea's bytes hold: the bytes of a class
			// lead b to the same states.
			for _, c := range classes {
				if ea.on.has(c) {
					push(ea.to, nb.step(cur.set, c), c)
				}
			}
		}
	}
	return "", true
}

// step returns the states n reaches from set on c, closed under empty
// transitions.
func (n *nfa) step(set []bool, c byte) []bool {
	next := make([]bool, len(n.edges))
	var stack []int
	for st, in := range set {
		if !in {
			continue
		}
		for _, e := range n.edges[st] {
			if !e.eps && e.on.has(c) && !next[e.to] {
				next[e.to] = true
				stack = append(stack, e.to)
			}
		}
	}
	n.closure(next, stack)
	return next
}

// union returns an automaton accepting what any of ms accepts.
func union(ms ...*nfa) *nfa {
	u := &nfa{}
	start := u.state()
	u.accept = u.state()
	for _, m := range ms {
		base := len(u.edges)
		for _, es := range m.edges {
			moved := make([]edge, len(es))
			for i, e := range es {
				e.to += base
				moved[i] = e
			}
			u.edges = append(u.edges, moved)
		}
		u.eps(start, base)
		u.eps(base+m.accept, u.accept)
	}
	return u
}

// reaches reports whether some text n accepts starts with s.
func (n *nfa) reaches(s string) bool {
	set := n.start(&s)
	for i := 0; i < len(s) && set != nil; i++ {
		set = n.stepOrNil(set, s[i])
	}
	return set != nil
}

// after returns the states n is in after s, its own literal prefix or a
// text that starts with it, or nil if none.
func (n *nfa) after(s string) []bool {
	set := n.start(&s)
	for i := 0; i < len(s) && set != nil; i++ {
		set = n.stepOrNil(set, s[i])
	}
	return set
}

// start returns the states n is in at the start of *s, or after n.prefix
// where *s starts with it, which it then cuts from *s.
func (n *nfa) start(s *string) []bool {
	set := make([]bool, len(n.edges))
	from := 0
	if strings.HasPrefix(*s, n.prefix) {
		from, *s = len(n.prefix), (*s)[len(n.prefix):]
	}
	set[from] = true
	n.closure(set, []int{from})
	return set
}

// stepOrNil is step, but returns nil for no states.
func (n *nfa) stepOrNil(set []bool, c byte) []bool {
	next := n.step(set, c)
	if !slices.Contains(next, true) {
		return nil
	}
	return next
}

// maxWitnessTries bounds the URIs sharedURI checks with Match.
const maxWitnessTries = 256

// sharedURI returns a URI at which a and b, with models na and nb, both
// bind some non-empty value: a plain expansion of either if it is one,
// else the shortest such URI the models share that Match confirms, among
// the first few; ok is false if there is none. If
// the models share such URIs but Match confirms none of those tried,
// maybe is the shortest of them.
func sharedURI(a, b *Template, na, nb *nfa) (uri string, ok bool, maybe string) {
	// A plain expansion of either reads best in a message, where it is one.
	if u, ok := witness(a, b); ok && bindsSome(a, u) && bindsSome(b, u) {
		return u, true, ""
	}
	// Breadth first over pairs of states, with whether each side has
	// read a character of a value yet; a pair is visited by a few
	// different texts (told apart by a hash), so that a text the model
	// takes and Match refuses does not hide a longer one both take.
	type key struct {
		x, y   int
		fx, fy bool
	}
	type node struct {
		prev int
		c    byte
		k    key
		h    uint64 // of the text so far
	}
	const visits = 4
	seen := map[key][]uint64{{}: {0}}
	nodes := []node{{prev: -1}}
	tries := 0
	for i := 0; i < len(nodes) && tries < maxWitnessTries; i++ {
		cur := nodes[i]
		k := cur.k
		if k.x == na.accept && k.y == nb.accept && k.fx && k.fy {
			var out []byte
			for j := i; nodes[j].prev >= 0; j = nodes[j].prev {
				if nodes[j].c != 0 {
					out = append(out, nodes[j].c)
				}
			}
			slices.Reverse(out)
			tries++
			if bindsSome(a, string(out)) && bindsSome(b, string(out)) {
				return string(out), true, ""
			}
			if maybe == "" {
				maybe = string(out)
			}
		}
		push := func(q key, c byte) {
			h := cur.h
			if c != 0 {
				h = (h ^ uint64(c)) * 1099511628211
			}
			hs := seen[q]
			if len(hs) < visits && !slices.Contains(hs, h) {
				seen[q] = append(hs, h)
				nodes = append(nodes, node{prev: i, c: c, k: q, h: h})
			}
		}
		for _, ea := range na.edges[k.x] {
			if ea.eps {
				push(key{ea.to, k.y, k.fx, k.fy}, 0)
			}
		}
		for _, eb := range nb.edges[k.y] {
			if eb.eps {
				push(key{k.x, eb.to, k.fx, k.fy}, 0)
			}
		}
		for _, ea := range na.edges[k.x] {
			if ea.eps {
				continue
			}
			for _, eb := range nb.edges[k.y] {
				if eb.eps {
					continue
				}
				both := ea.on.and(eb.on)
				if both.empty() {
					continue
				}
				push(key{ea.to, eb.to, k.fx || ea.val, k.fy || eb.val}, lowest(both))
			}
		}
	}
	return "", false, maybe
}

// bindsSome reports whether t matches uri binding some variable to a
// non-empty value.
func bindsSome(t *Template, uri string) bool {
	vals, ok := t.Match(uri)
	if !ok {
		return false
	}
	for _, v := range vals.vals {
		for _, item := range v.Items {
			if item != "" {
				return true
			}
		}
	}
	return false
}

// byteClasses returns one byte of each class of the bytes that no edge of
// the automata tells apart: the first byte of each, a letter or digit
// where the class holds one, which reads best in a message.
func byteClasses(ms ...*nfa) []byte {
	// Refine the partition of all ASCII bytes by each edge's set.
	all := byteSet{^uint64(0), ^uint64(0)}
	blocks := []byteSet{all}
	seen := map[byteSet]bool{}
	for _, m := range ms {
		for _, es := range m.edges {
			for _, e := range es {
				if e.eps || seen[e.on] {
					continue
				}
				seen[e.on] = true
				var next []byteSet
				for _, b := range blocks {
					in, out := b.and(e.on), b.and(byteSet{^e.on[0], ^e.on[1]})
					for _, part := range []byteSet{in, out} {
						if !part.empty() {
							next = append(next, part)
						}
					}
				}
				blocks = next
			}
		}
	}
	out := make([]byte, len(blocks))
	for i, b := range blocks {
		out[i] = lowest(b)
	}
	return out
}
