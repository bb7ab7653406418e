package uritemplate

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strings"
	"unicode/utf8"
)

// Match reports whether uri matches the template and, if it does, returns
// the values it binds, each percent-decoded once. A URI with a malformed
// percent-escape in a value, or one that decodes to invalid UTF-8, does not
// match. Match never panics, whatever uri holds.
//
// Where a template can split a URI in several ways, the earlier expression
// takes the longest run that still lets the rest match, among the splits
// whose every value is written as expansion writes it if there is one
// (see the package doc), else among all; the variables of one
// expression take its items in the first way that lets the rest match,
// each one item if it can. A template that uses a variable more than once
// needs the same value in each use (a prefix modifier's use the start of
// it), or the variable undefined in each; matching it gives up, as no
// match, after 100,000 splits tried, which only a URI crafted against a
// template with expressions side by side can need.
func (t *Template) Match(uri string) (Values, bool) {
	if !t.literalsInOrder(uri) {
		return Values{}, false
	}
	if t.strictFirst {
		if vals, ok := t.match(uri, true); ok {
			return vals, true
		}
	}
	return t.match(uri, false)
}

// match is Match, strict as matcher.strict says.
func (t *Template) match(uri string, strict bool) (Values, bool) {
	var binds [8]binding
	var items [16]string
	m := t.newMatcher(uri, strict, binds[:], items[:0])
	if !m.match(0, 0) {
		return Values{}, false
	}
	// The values get a copy of the items, which may be on this stack.
	kept := append([]string(nil), m.items...)
	vals := make([]Value, len(t.names))
	for i, b := range m.binds {
		if b.set {
			vals[i] = Value{Kind: b.kind, Items: kept[b.start:b.end:b.end]}
		}
	}
	return Values{t: t, vals: vals}, true
}

// matches reports whether uri matches the template, exactly as Match
// does, without building the values. The matcher binds into arrays on
// the stack, so that a match without percent-escapes, of a template that
// uses each variable once, allocates nothing unless it backtracks or
// outgrows them.
func (t *Template) matches(uri string) bool {
	if !t.literalsInOrder(uri) {
		return false
	}
	return t.strictFirst && t.matchesAs(uri, true) || t.matchesAs(uri, false)
}

// matchesAs is matches, strict as matcher.strict says.
func (t *Template) matchesAs(uri string, strict bool) bool {
	var binds [8]binding
	var items [16]string
	m := t.newMatcher(uri, strict, binds[:], items[:0])
	return m.match(0, 0)
}

// newMatcher returns a matcher of uri, strict as matcher.strict says,
// that binds t's variables in binds if it is long enough (else in a new
// slice) and pushes items onto items (nil: a new slice when the first
// is pushed).
func (t *Template) newMatcher(uri string, strict bool, binds []binding, items []string) matcher {
	m := matcher{t: t, uri: &uri, strict: strict, checkBack: strict && t.repeats, items: items}
	if len(t.names) <= len(binds) {
		m.binds = binds[:len(t.names)]
	} else {
		m.binds = make([]binding, len(t.names))
	}
	return m
}

// expandsBack reports whether the values bound so far expand, with
// ExpandURI, to the URI being matched.
func (m *matcher) expandsBack() bool {
	vars := make(map[string]Value, len(m.t.names))
	for i, b := range m.binds {
		if b.set {
			// A copy: the map would take m.items to the heap, and with
			// it the arrays matches gives the matcher.
			vars[m.t.names[i]] = Value{Kind: b.kind, Items: append([]string(nil), m.items[b.start:b.end]...)}
		}
	}
	back, err := m.t.expand(vars, true)
	return err == nil && back == *m.uri
}

// literalsInOrder reports whether uri starts with the template's leading
// literal, ends with its trailing one, and holds the others in order
// between: a quick check that rejects most URIs without backtracking.
func (t *Template) literalsInOrder(uri string) bool {
	pos := 0
	for i, p := range t.parts {
		switch {
		case p.expr != nil:
			continue
		case i == 0:
			if !strings.HasPrefix(uri, p.lit) {
				return false
			}
			pos = len(p.lit)
		case i == len(t.parts)-1:
			return strings.HasSuffix(uri[pos:], p.lit)
		default:
			j := strings.Index(uri[pos:], p.lit)
			if j < 0 {
				return false
			}
			pos += j + len(p.lit)
		}
	}
	return true
}

// A binding records a variable's value as a run of matcher.items.
type binding struct {
	set  bool
	kind Kind
	// partial is set for a String that a prefix modifier may have cut
	// short: the variable's value starts with it.
	partial bool
	// absent is set, in a template that uses the variable more than
	// once, where one use left it undefined: no other use may define it.
	absent     bool
	start, end int32
}

type matcher struct {
	t *Template
	// uri is the URI being matched. It is held by pointer so that the
	// strings bound, cut from it, are two pointers away from the matcher,
	// not one as binds and items are: the compiler's escape analysis does
	// not tell a matcher's fields apart, and would otherwise move the
	// arrays matches gives it off the stack with them.
	uri *string
	// strict refuses a value whose text is not what expansion writes for
	// it: a character expansion would have encoded (a sub-delimiter in
	// {x}), or a triplet for one it would have written as it is (%2F for
	// '/' in {+x}, %41 for 'A' anywhere), or lower-case hex digits. Match
	// tries a strict match first where that can choose between splits
	// (x://{+dir}{/name} gives x://d/e/a%2Fb to dir "d/e" and name "a/b",
	// as expanded), then a lenient one, which accepts what clients send.
	strict bool
	// checkBack is set for a strict match of a template that repeats a
	// variable: a split matches only if its values expand back to the
	// URI (x://{?k*}{?k*} must not give both queries to the first).
	// Failures then depend on every binding and are not memoized.
	checkBack bool
	// reserved is set while binding the text of a reserved expression.
	reserved bool
	binds    []binding
	items    []string
	// failed records (part, position) states known not to match, for
	// parts whose match does not depend on earlier bindings; failedDeps
	// records the states of the other parts together with the bindings
	// they depend on. Both are made on the first backtrack, so the usual
	// match allocates nothing for them, and they bound the work of
	// pathological templates.
	memo       bool
	failed     []uint64
	failedDeps map[depState]struct{}
	spans      []span // by part; see scan
	tries      int    // splits tried, counted for a template with repeats
}

// maxRepeatTries bounds the splits Match tries for a template that uses a
// variable more than once. The failure memo cannot bound those: whether
// the rest of such a template matches depends on the values bound so far.
const maxRepeatTries = 100_000

type depState struct {
	state int
	deps  uint64 // a hash of the bindings the state depends on; see signature
}

// match reports whether uri[pos:] matches the template's parts[pi:],
// binding variables as it goes.
func (m *matcher) match(pi, pos int) bool {
	uri, parts := *m.uri, m.t.parts
	for pi < len(parts) && parts[pi].expr == nil {
		lit := parts[pi].lit
		if !strings.HasPrefix(uri[pos:], lit) {
			return false
		}
		pos += len(lit)
		pi++
	}
	if pi == len(parts) {
		return pos == len(uri) && (!m.checkBack || m.expandsBack())
	}
	key := depState{state: pi*(len(uri)+1) + pos}
	deps := parts[pi].deps
	keyed := m.memo
	if keyed {
		if len(deps) == 0 {
			if m.failed[key.state/64]&(1<<(key.state%64)) != 0 {
				return false
			}
		} else {
			key.deps = m.signature(deps)
			if _, ok := m.failedDeps[key]; ok {
				return false
			}
		}
	}
	e := parts[pi].expr
	// The longest run e may take: up to a character it may not hold,
	// leaving room for the literals after it, and empty unless it starts
	// with the character its expansion starts with.
	maxEnd := min(m.scan(pi, pos, e), len(uri)-m.t.parts[pi].minRest)
	if e.first != 0 && pos < len(uri) && uri[pos] != e.first && (e.alt == 0 || uri[pos] != e.alt) {
		maxEnd = min(maxEnd, pos)
	}
	last := pi+1 == len(parts)
	// The next expression is at parts[nextPi], after the literal next.
	var next string
	nextPi := pi + 1
	if !last && parts[pi+1].expr == nil {
		next = parts[pi+1].lit
		nextPi++
	}
	// Whether a failure of the next state is known whatever e binds.
	peek := nextPi < len(parts) && len(parts[nextPi].deps) == 0
	tries := 0
	var sp *splitter // made on first need
	for end := maxEnd; end >= pos; end-- {
		if last && end != len(uri) {
			break
		}
		if next != "" && !strings.HasPrefix(uri[end:], next) {
			continue
		}
		if nextPi == len(parts) && end+len(next) != len(uri) {
			continue
		}
		if peek && m.memo {
			if s := nextPi*(len(uri)+1) + end + len(next); m.failed[s/64]&(1<<(s%64)) != 0 {
				continue
			}
		}
		if tries++; tries > 1 && !m.memo {
			m.memo = true
			m.failed = make([]uint64, (len(parts)*(len(uri)+1)+63)/64)
			m.spans = make([]span, len(parts))
		}
		if m.t.repeats {
			if m.tries++; m.tries > maxRepeatTries {
				return false // and so will every frame below this one
			}
		}
		var saved [4]binding
		undo := m.save(e, saved[:0])
		mark := len(m.items)
		bound := m.bind(e, uri[pos:end])
		if bound && m.match(pi+1, end) {
			return true
		}
		m.items = m.items[:mark]
		m.restore(e, undo)
		// Other ways to bind the run: where bind's fails, or where the
		// rest depends on what it bound.
		if (!bound || m.t.repeats) && m.hasAlternatives(e, uri[pos:end]) {
			rest := func() bool { return m.match(pi+1, end) }
			var ok bool
			switch {
			case end == pos:
				ok = m.bindEmpty(e, rest)
			default:
				f := pos + btoi(e.first != 0) // after e's first character
				if sp == nil {
					// One for every run from pos: see splitter.
					sp = newSplitter(m.t.prefixed, e, uri[f:maxEnd], m.strict)
				}
				ok = sp.walk(m, end-f, rest)
			}
			if ok {
				return true
			}
			m.items = m.items[:mark]
			m.restore(e, undo)
		}
	}
	switch {
	case !m.memo || m.checkBack:
	case len(deps) == 0:
		m.failed[key.state/64] |= 1 << (key.state % 64)
	default:
		if !keyed {
			// The bindings are as they were on entry.
			key.deps = m.signature(deps)
		}
		if m.failedDeps == nil {
			m.failedDeps = make(map[depState]struct{})
		}
		m.failedDeps[key] = struct{}{}
	}
	return false
}

// signature hashes the bindings of the variables deps. A hash, not the
// values themselves, keeps the memory the failure memo takes small; two
// bindings with the same 64-bit hash are vanishingly unlikely.
func (m *matcher) signature(deps []int) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	var buf [binary.MaxVarintLen64 + 1]byte
	for _, i := range deps {
		b := m.binds[i]
		if !b.set {
			if b.absent {
				h.WriteByte(0x80)
			} else {
				h.WriteByte(0)
			}
			continue
		}
		flags := 1 | byte(b.kind)<<1
		if b.partial {
			flags |= 0x80
		}
		buf[0] = flags
		h.Write(binary.AppendUvarint(buf[:1], uint64(b.end-b.start)))
		for _, item := range m.items[b.start:b.end] {
			h.Write(binary.AppendUvarint(buf[:0], uint64(len(item))))
			h.WriteString(item)
		}
	}
	return h.Sum64()
}

var hashSeed = maphash.MakeSeed()

func (m *matcher) save(e *expr, buf []binding) []binding {
	for _, v := range e.vars {
		buf = append(buf, m.binds[v.index])
	}
	return buf
}

func (m *matcher) restore(e *expr, saved []binding) {
	for i, v := range e.vars {
		m.binds[v.index] = saved[i]
	}
}

// scan returns the end of the longest run from pos of characters that e,
// parts[pi], may cover. Once the matcher backtracks it remembers the last
// run for each part, so that scans from positions going down cost little.
func (m *matcher) scan(pi, pos int, e *expr) int {
	var sp *span
	if m.spans != nil {
		sp = &m.spans[pi]
		if sp.ok && sp.lo <= pos && pos <= sp.stop {
			return sp.stop
		}
	}
	uri, i := *m.uri, pos
	for ; i < len(uri); i++ {
		if sp != nil && sp.ok && i == sp.lo {
			i = sp.stop
			break
		}
		if !e.allows(uri[i]) {
			break
		}
	}
	if sp != nil {
		*sp = span{ok: true, lo: pos, stop: i}
	}
	return i
}

// A span is a run uri[lo:stop] of characters that an expression may cover,
// with stop at the end of uri or a character it may not.
type span struct {
	ok       bool
	lo, stop int
}

// allows reports whether c may appear in a match of e.
func (e *expr) allows(c byte) bool {
	return c < 0x80 && e.allow[c]
}

// uriChars marks the characters of RFC 3986: unreserved, reserved and '%'.
var uriChars = func() (t [128]byte) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%") {
		t[c] = 1
	}
	return t
}()

// bind decodes s, the text e covers, into its variables.
func (m *matcher) bind(e *expr, s string) bool {
	if s == "" {
		// Every variable undefined, or for {x} the empty string.
		if e.first == 0 && len(e.vars) == 1 {
			return m.setString(e.vars[0], "")
		}
		return m.unsetAll(e.vars)
	}
	if e.first != 0 {
		if s[0] != e.first && (e.alt == 0 || s[0] != e.alt) {
			return false
		}
		if s[0] != e.first && e.amps != nil {
			// {?a}{&b} gives &b=1 for a undefined.
			if !m.unsetAll(e.vars[:len(e.vars)-len(e.amps.vars)]) {
				return false
			}
			e = e.amps
		}
		s = s[1:]
	}
	m.reserved = e.reserved
	if e.named {
		return m.bindNamed(e, s)
	}
	return m.bindPositional(e, s)
}

// bindPositional binds the items of s, split on e's separator, to e's
// variables in order. An exploded variable takes as many items as the
// variables after it leave. The last variable, if not exploded, takes the
// rest: a '.' in it is its own (expansion never encodes '.'), and for
// {+x,y} and {#x,y} a ',' too. Items left over (after the last {/x}) make
// s not match, as does a ',' left to a variable not exploded of another
// operator (see setScalar).
func (m *matcher) bindPositional(e *expr, s string) bool {
	left := strings.Count(s, string(e.sep)) + 1
	rest := s
	for vi, v := range e.vars {
		if left == 0 {
			return m.unsetAll(e.vars[vi:]) // the remaining variables are undefined
		}
		after := len(e.vars) - vi - 1
		switch {
		case v.explode:
			take := max(left-after, 1)
			var run string
			run, rest = cutItems(rest, e.sep, take)
			left -= take
			if !m.setExploded(v, run, e.sep) {
				return false
			}
		case after == 0 && e.sep != '/':
			left = 0
			if !m.setScalar(v, rest, e.reserved) {
				return false
			}
		default:
			var item string
			item, rest = cutItems(rest, e.sep, 1)
			left--
			if !m.setScalar(v, item, e.reserved) {
				return false
			}
		}
	}
	return left == 0
}

// unsetAll is unset for each of vars.
func (m *matcher) unsetAll(vars []varspec) bool {
	for _, v := range vars {
		if !m.unset(v) {
			return false
		}
	}
	return true
}

// cutItems returns the first n sep-separated items of s, and the rest.
func cutItems(s string, sep byte, n int) (items, rest string) {
	i := 0
	for ; n > 0; n-- {
		j := strings.IndexByte(s[i:], sep)
		if j < 0 {
			return s, ""
		}
		i += j + 1
	}
	return s[:i-1], s[i:]
}

// setScalar binds v, a variable not exploded, to s decoded, as a String.
// A variable not exploded matches scalars only: expansion encodes the ','
// of a string, but for {+x} and {#x} (reserved), so an unencoded ',' in s
// can only come from a list given to v, and s does not match. For {+x}
// and {#x} a ',' is part of the String.
func (m *matcher) setScalar(v varspec, s string, reserved bool) bool {
	if !reserved && strings.IndexByte(s, ',') >= 0 {
		return false
	}
	if m.strict && !canonical(s, reserved) {
		return false
	}
	val, ok := decode(s)
	return ok && m.setString(v, val)
}

// setExploded binds the exploded variable v to the sep-separated items of
// run: Pairs if every item is key=value, else a List (of one item if run
// holds no sep).
func (m *matcher) setExploded(v varspec, run string, sep byte) bool {
	if strings.IndexByte(run, sep) < 0 && strings.IndexByte(run, '=') < 0 {
		if m.strict && !canonical(run, m.reserved) {
			return false
		}
		val, ok := decode(run)
		if !ok {
			return false
		}
		return m.set(v, List, m.push(val))
	}
	kind := List
	if allPairs(run, sep) {
		kind = Pairs
	}
	start := len(m.items)
	for item := range strings.SplitSeq(run, string(sep)) {
		if kind == Pairs {
			k, val, _ := strings.Cut(item, "=")
			if !m.pushDecoded(k) || !m.pushDecoded(val) {
				return false
			}
			continue
		}
		if !m.pushDecoded(item) {
			return false
		}
	}
	return m.set(v, kind, start)
}

func allPairs(run string, sep byte) bool {
	for item := range strings.SplitSeq(run, string(sep)) {
		if strings.IndexByte(item, '=') < 0 {
			return false
		}
	}
	return true
}

// bindNamed binds the name=value items of s to e's variables by name, in
// any order. A non-exploded variable takes the first item with its name,
// whose value must be a scalar (see setScalar): a later item with the name
// is not tried.
// An exploded one takes every item with its name as a List or, if there is
// none, the items no variable of e names, as Pairs: the first such
// variable takes them all (x://r{?a*}{&b*} cannot tell a's keys from b's,
// and gives them to a), later ones are left undefined. Other items are
// ignored in a query ({?…}, {&…}) that no named expression follows. In
// a {;…}, or where a named expression follows e (an item e does not name
// may be that one's), s then does not match, so that x://r{;a}{;c} gives
// ;c=2 to c rather than ignoring it in a.
func (m *matcher) bindNamed(e *expr, s string) bool {
	onlyNamed := func() bool {
		for item := range strings.SplitSeq(s, string(e.sep)) {
			if k, _, _ := strings.Cut(item, "="); !e.names(k) {
				return false
			}
		}
		return true
	}
	strictItems := e.laterNamed || e.op == ';'
	if strictItems && !e.takesUnnamed() && !onlyNamed() {
		return false
	}
	pairsTaken := false // by an earlier exploded variable
	for _, v := range e.vars {
		start, found := len(m.items), false
		for item := range strings.SplitSeq(s, string(e.sep)) {
			k, val, _ := strings.Cut(item, "=")
			if k != v.name {
				continue
			}
			if !v.explode {
				if !m.setScalar(v, val, false) {
					return false
				}
				found = true
				break
			}
			if !m.pushDecoded(val) {
				return false
			}
			found = true
		}
		switch {
		case found && !v.explode:
		case found:
			if !m.set(v, List, start) {
				return false
			}
		case v.explode && !pairsTaken:
			pairsTaken = true
			if !m.bindPairs(e, v, s) {
				return false
			}
		default:
			if !m.unset(v) {
				return false
			}
		}
	}
	// Where an exploded variable took a List, no variable took the items
	// e does not name.
	return !strictItems || pairsTaken || onlyNamed()
}

// bindPairs binds the exploded variable v to the key=value items of s that
// no variable of e names.
func (m *matcher) bindPairs(e *expr, v varspec, s string) bool {
	start := len(m.items)
	for item := range strings.SplitSeq(s, string(e.sep)) {
		k, val, _ := strings.Cut(item, "=")
		if item == "" || e.names(k) {
			continue
		}
		if !m.pushDecoded(k) || !m.pushDecoded(val) {
			return false
		}
	}
	if len(m.items) == start {
		return m.unset(v)
	}
	return m.set(v, Pairs, start)
}

// takesUnnamed reports whether e has an exploded variable, which takes the
// items no variable of e names as Pairs.
func (e *expr) takesUnnamed() bool {
	return slices.ContainsFunc(e.vars, func(v varspec) bool { return v.explode })
}

// names reports whether some variable of e is called k.
func (e *expr) names(k string) bool {
	for _, v := range e.vars {
		if v.name == k {
			return true
		}
	}
	return false
}

// push appends s to m.items and returns its index. When m.items is full it
// copies the items to a new array rather than append to the old: an
// append through m would, to the compiler's escape analysis, take every
// array m holds to the heap, the ones matches gives it on its stack too.
func (m *matcher) push(s string) int {
	if len(m.items) == cap(m.items) {
		grown := make([]string, len(m.items), max(2*cap(m.items), m.t.items, 1))
		copy(grown, m.items)
		m.items = grown
	}
	m.items = m.items[:len(m.items)+1]
	m.items[len(m.items)-1] = s
	return len(m.items) - 1
}

func (m *matcher) pushDecoded(s string) bool {
	if m.strict && !canonical(s, m.reserved) {
		return false
	}
	val, ok := decode(s)
	if ok {
		m.push(val)
	}
	return ok
}

func (m *matcher) setString(v varspec, s string) bool {
	if v.prefix > 0 && utf8.RuneCountInString(s) > v.prefix {
		return false
	}
	return m.set(v, String, m.push(s))
}

// set binds v to the items from start on. A variable bound before (it
// appears twice in the template) must get the same items or, where a
// prefix modifier cut one of the two short, values that agree as far as
// it goes; the longer is kept. One that another use left undefined
// (see unset) may not be bound.
func (m *matcher) set(v varspec, kind Kind, start int) bool {
	if kind != String && m.t.prefixed[v.index] {
		return false // RFC 6570: prefixes apply to strings only
	}
	if m.binds[v.index].absent {
		return false // another use left it undefined
	}
	end := int32(len(m.items))
	cur := binding{set: true, kind: kind, start: int32(start), end: end}
	if v.prefix > 0 {
		cur.partial = utf8.RuneCountInString(m.items[start]) == v.prefix
	}
	b := &m.binds[v.index]
	if !b.set {
		*b = cur
		return true
	}
	old, now := m.items[b.start:b.end], m.items[start:end]
	switch {
	case !b.partial && !cur.partial:
		// The same items, but maybe not the same kind: an exploded
		// use matches a List of one item where one not exploded
		// matches a String, which expansion writes alike, or a List
		// where another exploded use matches Pairs with the same keys
		// and values. Keep the String or Pairs.
		if !equal(old, now) {
			return false
		}
		if b.kind == List {
			*b = cur
		}
	// One is partial: the variable has a prefix modifier, so both are
	// strings.
	case len(now[0]) > len(old[0]):
		if !b.partial || !strings.HasPrefix(now[0], old[0]) {
			return false
		}
		*b = cur
	case len(now[0]) < len(old[0]):
		return cur.partial && strings.HasPrefix(old[0], now[0])
	case now[0] != old[0]:
		return false
	case !cur.partial:
		*b = cur // the same value, now known whole
	}
	return true
}

// unset records that an expression leaves v undefined. A variable that
// the template uses more than once is undefined everywhere or nowhere,
// as in any expansion: unset reports false if another use bound it, and
// marks it so that set refuses it to any later use.
func (m *matcher) unset(v varspec) bool {
	if !m.t.repeats {
		return true
	}
	b := &m.binds[v.index]
	if b.set {
		return false
	}
	b.absent = true
	return true
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// decode percent-decodes s once. It reports false for a malformed escape
// or a result that is not valid UTF-8.
func decode(s string) (string, bool) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, true // only URI characters: ASCII
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
		i += 2
	}
	out := b.String()
	if !utf8.ValidString(out) {
		return "", false
	}
	return out, true
}

// canonical reports whether s is what expansion writes for the value s
// decodes to: unreserved characters (and, if reserved, reserved ones) as
// they are, every other byte as a triplet with upper-case hex digits; in
// reserved text '?', '#', '[' and ']' either way, as Expand and ExpandURI
// write them.
func canonical(s string, reserved bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return false
		case unreserved[c], reserved && reservedChars[c]:
		case c == '%' && i+2 < len(s) && isUpperHex(s[i+1]) && isUpperHex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if d < 0x80 && (unreserved[d] || reserved && reservedChars[d] && !shapeChars[d]) {
				return false // but ExpandURI encodes '?', '#', '[' and ']'
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
