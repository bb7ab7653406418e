package uritemplate

// This file models the URIs a template matches, as a nondeterministic
// automaton over ASCII bytes a little wider than Match, so that two
// templates can be compared by what they match rather than by how they
// look: do they share a URI (overlaps), and does one match only URIs the
// other does too (within). A URI the model gives is checked with Match.
// It is the ground for the Router's conflict rule; see issue [13].

import "slices"

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
}

type edge struct {
	on  byteSet // empty: an empty transition
	eps bool
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
// language.
const maxModelPrefix = 64

// value adds, from from, the text of a value: any number of characters,
// or at most prefix of them; it returns the end.
func (n *nfa) value(from int, raw byteSet, prefix int) int {
	if prefix <= 0 || prefix > maxModelPrefix {
		loop := n.state()
		n.eps(from, loop)
		n.char(loop, loop, raw)
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

// exprText adds, from from, the text Match may give e: nothing, or e's
// first character (or the one of a query merged in) and a run of the
// characters e allows; a variable with a prefix modifier, not named,
// takes at most that many characters. It returns the end. The
// run, split into one item per variable for positional variables not
// exploded, is wider than what Match binds (parameter names, commas in
// lists and repeated variables are not checked), so a URI the model finds
// is checked with Match before it is trusted.
func (e *expr) raw() byteSet {
	var s byteSet
	for c := byte(0); c < 0x80; c++ {
		if e.allow[c] && c != '%' {
			s.add(c)
		}
	}
	return s
}

func (n *nfa) exprText(from int, e *expr) int {
	end := n.state()
	n.eps(from, end) // every variable undefined, or {x} empty
	start := from
	if e.first != 0 {
		start = n.state()
		var firsts byteSet
		firsts.add(e.first)
		if e.alt != 0 {
			firsts.add(e.alt)
		}
		n.on(from, firsts, start)
	}
	raw := e.raw()
	if e.named || slices.ContainsFunc(e.vars, func(v varspec) bool { return v.explode }) {
		n.eps(n.value(start, raw, 0), end)
		return end
	}
	// Positional variables, not exploded: one item each, in order, split
	// on e.sep; the last takes the rest, sep included, but for {/…},
	// where an item left over makes the URI not match.
	item := raw
	item[e.sep>>6] &^= 1 << (e.sep & 63)
	at := start
	for i, v := range e.vars {
		chars := item
		if i == len(e.vars)-1 && e.sep != '/' {
			chars = raw
		}
		if i > 0 {
			n.eps(at, end) // the variables from v on are undefined
			at = n.lit(at, string(e.sep))
		}
		at = n.value(at, chars, v.prefix)
	}
	n.eps(at, end)
	return end
}

// model returns an automaton of the URIs t matches: every URI Match takes
// is in it, and a few it does not (see exprText).
func (t *Template) model() *nfa {
	n := &nfa{}
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
	na, nb := a.model(), b.model()
	type pair struct{ x, y int }
	type node struct {
		prev int
		c    byte
		p    pair
	}
	// Breadth first over pairs of states, empty moves first.
	seen := map[pair]bool{{0, 0}: true}
	nodes := []node{{prev: -1, p: pair{0, 0}}}
	for i := 0; i < len(nodes); i++ {
		p := nodes[i].p
		if p.x == na.accept && p.y == nb.accept {
			var out []byte
			for j := i; nodes[j].prev >= 0; j = nodes[j].prev {
				if nodes[j].c != 0 {
					out = append(out, nodes[j].c)
				}
			}
			slices.Reverse(out)
			return string(out), true
		}
		push := func(q pair, c byte) {
			if !seen[q] {
				seen[q] = true
				nodes = append(nodes, node{prev: i, c: c, p: q})
			}
		}
		for _, ea := range na.edges[p.x] {
			if ea.eps {
				push(pair{ea.to, p.y}, 0)
			}
		}
		for _, eb := range nb.edges[p.y] {
			if eb.eps {
				push(pair{p.x, eb.to}, 0)
			}
		}
		for _, ea := range na.edges[p.x] {
			if ea.eps {
				continue
			}
			for _, eb := range nb.edges[p.y] {
				if eb.eps {
					continue
				}
				both := ea.on.and(eb.on)
				if both.empty() {
					continue
				}
				c := lowest(both)
				push(pair{ea.to, eb.to}, c)
			}
		}
	}
	return "", false
}

// lowest returns the smallest byte of a non-empty s, preferring a
// letter or digit, which reads best in a message.
func lowest(s byteSet) byte {
	for _, c := range []byte("vx01") {
		if s.has(c) {
			return c
		}
	}
	for c := byte(0); c < 0x80; c++ {
		if s.has(c) {
			return c
		}
	}
	return 0
}

// within reports whether every URI a hands out b hands out too; if not,
// it returns a shortest URI of a's that b does not hand out.
func within(a, b *Template) (outside string, ok bool) {
	na, nb := a.model(), b.model()
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
			// Split ea's bytes by the set of b's states each leads to.
			done := byteSet{}
			for c := byte(0); c < 0x80; c++ {
				if !ea.on.has(c) || done.has(c) {
					continue
				}
				next := nb.step(cur.set, c)
				// Bytes that lead b to the same states go together.
				for d := c; d < 0x80; d++ {
					if ea.on.has(d) && !done.has(d) && slices.Equal(nb.step(cur.set, d), next) {
						done.add(d)
					}
				}
				push(ea.to, next, c)
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
