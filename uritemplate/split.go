package uritemplate

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// This file holds the other ways an expression may bind its text, which
// matcher.bind, trying one way only, leaves out: expansion leaves out an
// undefined variable with its separator, so that {/a,b} gives /v for b
// alone as for a alone, and {.a,b} and {+a,b} leave their separator
// unencoded in a value, so that {.a,b} gives .x.y.z for a "x.y", b "z" as
// for a "x", b "y.z". Match tries them where bind's way fails, or where
// what the rest of the template reports depends on the values bound (see
// matcher.dependent) and it does not match with those.

// hasAlternatives reports whether e may bind text, the run a split gives
// it, in ways bind does not try that could make a difference: several
// variables of a positional expression; in a template that uses a
// variable more than once, an empty run of {x} or {+x}, which is an
// empty value or none; and, where the rest depends on the values bound,
// several exploded variables of a named expression, which may share the
// parameters none names.
func (m *matcher) hasAlternatives(e *expr, text string) bool {
	switch {
	case text == "":
		return m.t.repeats && e.first == 0
	case e.named:
		return m.dependent() && composites(e) > 1
	}
	return len(e.vars) > 1 && (e.first == 0 || text[0] == e.first)
}

// composites returns the number of composite variables of e.
func composites(e *expr) int {
	n := 0
	for _, v := range e.vars {
		if v.composite {
			n++
		}
	}
	return n
}

// bindPairsEach binds text to e, a named expression with several
// exploded variables, in each way in turn, calling rest after each, and
// reports whether rest reported true for one; it leaves the bindings as
// they were if not. The ways: the exploded variables without items of
// their own take the items no variable names in turn, each a run of them
// (which expansion writes where the variable is), the first all of them
// first. It runs where what rest reports depends on the values bound.
func (m *matcher) bindPairsEach(e *expr, text string, rest func() bool) bool {
	undo := m.save(e, nil)
	mark := len(m.items)
	e2, s, ok := m.head(e, text)
	if !ok {
		m.restore(e, undo)
		return false
	}
	takers := 0 // the exploded variables without items of their own
	for _, v := range e2.vars {
		if v.composite && e2.count(s, v.name) == 0 {
			if v.uses > 1 {
				m.restore(e, undo)
				return false // bind's way only
			}
			takers++
		}
	}
	n := e2.unnamed(s)
	plan := make([]int, takers)
	var walk func(i, left int) bool
	walk = func(i, left int) bool {
		if i == len(plan)-1 || len(plan) == 0 {
			if len(plan) > 0 {
				plan[i] = left
			}
			if m.tries++; m.tries > maxRepeatTries {
				return false
			}
			undo2 := m.save(e2, nil)
			if m.bindNamedAs(e2, s, plan) && rest() {
				return true
			}
			m.items = m.items[:mark]
			m.restore(e2, undo2)
			return false
		}
		for take := left; take >= 0; take-- {
			plan[i] = take
			if walk(i+1, left-take) {
				return true
			}
			if m.tries > maxRepeatTries {
				return false
			}
		}
		return false
	}
	if walk(0, n) {
		return true
	}
	m.items = m.items[:mark]
	m.restore(e, undo)
	return false
}

// bindEmpty binds e's variables for an empty run in each way in turn,
// calling rest after each, and reports whether rest reported true for
// one; it leaves the bindings as they were if not. The ways: every
// variable undefined, or one the empty string and the others undefined.
// It runs for templates that use a variable more than once only.
func (m *matcher) bindEmpty(e *expr, rest func() bool) bool {
	var saved [4]binding
	for i := -1; i < len(e.vars); i++ {
		if m.tries++; m.tries > maxRepeatTries {
			return false
		}
		undo := m.save(e, saved[:0])
		mark := len(m.items)
		ok := true
		for j, v := range e.vars {
			if j == i {
				ok = ok && m.setString(v, "")
			} else {
				ok = ok && m.unset(v)
			}
		}
		if ok && rest() {
			return true
		}
		m.items = m.items[:mark]
		m.restore(e, undo)
	}
	return false
}

// A splitter gives the items of a positional expression's text, split on
// its separator, to its variables in every way expansion could have
// written them: each variable takes a run of one or more items, or none
// (undefined). A variable not exploded takes one item, but in {.…},
// {+…} and {#…}, whose values may hold the separator; an exploded one
// takes any number. One splitter serves every run from one position
// that Match tries, runs that differ in their last item only: it holds
// what it knows of the longest run's items but the last, which the
// others' items are, but for their last.
type splitter struct {
	e              *expr
	s              string // the longest run, after e's first character
	strict, shaped bool
	seps           []int // the positions of the separators in s
	// Running counts, by item, of items a String may not hold, List
	// items and Pairs items that do not match, and items without '=',
	// and of the characters the items decode to.
	badString, badItem, badPair, noEq, runes []int
	// can[v*(c+1)+j], c being len(seps), is set if variables before v
	// may take exactly items before j; canBefore counts, by j, the j'
	// before j for which it is set.
	can       []bool
	canBefore []int
	// reached is set once a way has bound every variable.
	reached bool
}

// An itemInfo is what a splitter knows of one item.
type itemInfo struct {
	badString, badItem, badPair, noEq bool
	runes                             int
}

// info returns what setScalar and setExploded would make of item.
func (sp *splitter) info(item string) itemInfo {
	e := sp.e
	val, ok := decode(item)
	in := itemInfo{runes: utf8.RuneCountInString(val)}
	in.badString = !ok || !e.reserved && strings.IndexByte(item, ',') >= 0 || sp.strict && !canonical(item, e.reserved, sp.shaped)
	in.badItem = !ok || sp.strict && !canonical(item, e.reserved, sp.shaped)
	key, value, found := strings.Cut(item, "=")
	in.noEq = !found
	if found {
		_, okK := decode(key)
		_, okV := decode(value)
		in.badPair = !okK || !okV || sp.strict && (!canonical(key, e.reserved, sp.shaped) || !canonical(value, e.reserved, sp.shaped))
	}
	return in
}

// newSplitter returns the splitter of s, the longest run e may take at a
// position, after e's first character, for a match strict and shaped
// as matcher.strict and matcher.shaped say. (It holds nothing of the
// matcher's: the compiler's escape analysis would move the arrays
// matches gives the matcher to the heap with it.)
func newSplitter(e *expr, s string, strict, shaped bool) *splitter {
	sp := &splitter{e: e, s: s, strict: strict, shaped: shaped}
	for i := 0; i < len(s); i++ {
		if s[i] == e.sep {
			sp.seps = append(sp.seps, i)
		}
	}
	c := len(sp.seps)
	counts := make([]int, 5*(c+1))
	sp.badString, sp.badItem, sp.badPair, sp.noEq, sp.runes = counts[:c+1], counts[c+1:2*(c+1)], counts[2*(c+1):3*(c+1)], counts[3*(c+1):4*(c+1)], counts[4*(c+1):]
	for j := range c {
		in := sp.info(s[sp.start(j):sp.seps[j]])
		sp.badString[j+1] = sp.badString[j] + btoi(in.badString)
		sp.badItem[j+1] = sp.badItem[j] + btoi(in.badItem)
		sp.badPair[j+1] = sp.badPair[j] + btoi(in.badPair)
		sp.noEq[j+1] = sp.noEq[j] + btoi(in.noEq)
		sp.runes[j+1] = sp.runes[j] + in.runes
	}
	n := len(e.vars)
	sp.can = make([]bool, (n+1)*(c+1))
	sp.canBefore = make([]int, (n+1)*(c+2))
	sp.can[0] = true
	sp.count(0)
	for v := range n {
		can, next := sp.row(v), sp.row(v+1)
		for j := 0; j <= c; j++ {
			next[j] = can[j] // v undefined
			if j > 0 {
				for _, r := range sp.starts(v, j, itemInfo{}, false) {
					next[j] = next[j] || sp.anyIn(v, r[0], r[1])
				}
			}
		}
		sp.count(v + 1)
	}
	return sp
}

// start returns the position in s of item j.
func (sp *splitter) start(j int) int {
	if j == 0 {
		return 0
	}
	return sp.seps[j-1] + 1
}

func (sp *splitter) row(v int) []bool {
	c := len(sp.seps)
	return sp.can[v*(c+1) : (v+1)*(c+1)]
}

// count sets canBefore for variable v.
func (sp *splitter) count(v int) {
	c := len(sp.seps)
	can, before := sp.row(v), sp.canBefore[v*(c+2):(v+1)*(c+2)]
	for j := range can {
		before[j+1] = before[j]
		if can[j] {
			before[j+1]++
		}
	}
}

// anyIn reports whether can is set for variable v and some j in lo..hi.
func (sp *splitter) anyIn(v, lo, hi int) bool {
	if lo > hi {
		return false
	}
	c := len(sp.seps)
	before := sp.canBefore[v*(c+2) : (v+1)*(c+2)]
	return before[hi+1]-before[lo] > 0
}

// starts returns, as at most two ranges lo..hi (empty if lo > hi), the
// items i from which variable v may take the items up to j: items i to
// j-1 if withLast is unset, and items i to j, item j being last, if it is
// set. A String takes a run of items whose values all fit it, so its
// range is one.
func (sp *splitter) starts(v, j int, last itemInfo, withLast bool) [2][2]int {
	e := sp.e
	va := e.vars[v]
	end := j // the items are i..end-1
	if withLast {
		end = j + 1
	}
	none := [2][2]int{{0, -1}, {0, -1}}
	// lastWith returns the last item before end that counts counts (or,
	// for the last item, that has in set), or -1: the least k with
	// counts[k] == counts[j], less one.
	lastWith := func(counts []int, in bool) int {
		if withLast && in {
			return j
		}
		lo, hi := 0, j
		for lo < hi {
			mid := (lo + hi) / 2
			if counts[mid] == counts[j] {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return lo - 1
	}
	if !va.composite {
		lo := lastWith(sp.badString, last.badString) + 1
		if va.explode {
			lo = lastWith(sp.badItem, last.badItem) + 1 // see setScalar
		}
		if e.op != '.' && !e.reserved {
			lo = max(lo, end-1) // one item: its values never hold e.sep
		}
		if va.prefix > 0 {
			// The least i whose items, with the separators between,
			// hold at most va.prefix characters.
			total := sp.runes[j] + last.runes*btoi(withLast)
			hi := end - 1
			for lo < hi {
				mid := (lo + hi) / 2
				if total-sp.runes[mid]+end-1-mid > va.prefix {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			if lo == end-1 && total-sp.runes[lo] > va.prefix {
				return none
			}
		}
		return [2][2]int{{lo, end - 1}, {0, -1}}
	}
	// Pairs where every item holds '=', else a List.
	lastNoEq := lastWith(sp.noEq, last.noEq)
	pairsFrom := max(lastNoEq, lastWith(sp.badPair, last.badPair)) + 1
	listFrom := lastWith(sp.badItem, last.badItem) + 1
	return [2][2]int{{pairsFrom, end - 1}, {listFrom, min(lastNoEq, end-1)}}
}

// walk binds the run of the first l bytes of sp.s to e's variables in
// each way in turn, calling rest after each, and reports whether rest
// reported true for one; it leaves the bindings as they were if not.
// The ways: the last variable defined, then the one before, and so on,
// takes the fewest items it can first. Where the template uses each
// variable once, only the first way that binds is tried.
func (sp *splitter) walk(m *matcher, l int, rest func() bool) bool {
	e := sp.e
	k := sort.SearchInts(sp.seps, l) // the item that ends the run
	last := sp.info(sp.s[sp.start(k):l])
	undo := m.save(e, nil)
	mark := len(m.items)
	sp.reached = false
	for v := len(e.vars) - 1; v >= 0; v-- {
		// v is the last variable defined, and takes items i to k.
		for _, r := range sp.starts(v, k, last, true) {
			if !sp.anyIn(v, r[0], r[1]) {
				continue
			}
			for i := r[1]; i >= r[0]; i-- {
				if !sp.row(v)[i] {
					continue
				}
				if m.t.checkBack {
					if m.tries++; m.tries > maxRepeatTries {
						return false
					}
				}
				if m.unsetAll(e.vars[v+1:]) && sp.set(m, v, sp.s[sp.start(i):l]) && sp.cover(m, v, i, rest) {
					return true
				}
				m.items = m.items[:mark]
				m.restore(e, undo)
				if sp.reached && !m.dependent() || m.tries > maxRepeatTries {
					return false
				}
			}
		}
	}
	return false
}

// cover binds the variables before v to exactly the items before i, in
// each way in turn, calling rest after each, as walk does.
func (sp *splitter) cover(m *matcher, v, i int, rest func() bool) bool {
	if v == 0 {
		sp.reached = true
		return rest()
	}
	u := v - 1
	va := sp.e.vars[u]
	saved := m.binds[va.index]
	mark := len(m.items)
	try := func(h int) bool {
		if m.t.checkBack {
			if m.tries++; m.tries > maxRepeatTries {
				return false
			}
		}
		var ok bool
		if h == i {
			ok = m.unset(va)
		} else {
			ok = sp.set(m, u, sp.s[sp.start(h):sp.seps[i-1]])
		}
		if ok && sp.cover(m, u, h, rest) {
			return true
		}
		m.items = m.items[:mark]
		m.binds[va.index] = saved
		return false
	}
	if i > 0 {
		for _, r := range sp.starts(u, i, itemInfo{}, false) {
			if !sp.anyIn(u, r[0], r[1]) {
				continue
			}
			for h := r[1]; h >= r[0]; h-- {
				if !sp.row(u)[h] {
					continue
				}
				if try(h) {
					return true
				}
				if sp.reached && !m.dependent() || m.tries > maxRepeatTries {
					return false
				}
			}
		}
	}
	return sp.row(u)[i] && try(i)
}

// set binds variable v to run, items of e.
func (sp *splitter) set(m *matcher, v int, run string) bool {
	va := sp.e.vars[v]
	m.reserved = sp.e.reserved // which a later part's bind may have changed
	if va.composite {
		return m.setExploded(va, run, sp.e.sep)
	}
	return m.setScalar(va, run, sp.e.reserved)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
