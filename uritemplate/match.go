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
// it), or the variable undefined in each. Matching such a template, or
// one with a {;…} or query whose exploded variables may take what is not
// theirs (several, or one before another expression), gives up, as no
// match, after 100,000 splits tried, which only a URI crafted against a
// template with expressions side by side can need.
func (t *Template) Match(uri string) (Values, bool) {
	if !t.literalsInOrder(uri) {
		return Values{}, false
	}
	if t.strictFirst {
		if vals, ok := t.match(uri, true, true); ok {
			return vals, true
		}
		if t.bothSpellings(uri) {
			if vals, ok := t.match(uri, true, false); ok {
				return vals, true
			}
		}
	}
	return t.match(uri, false, false)
}

// bothSpellings reports whether a strict match of uri may need to take
// what Expand writes where ExpandURI writes otherwise: a '?', '#', '['
// or ']' in the value of a {+x} or {#x}.
func (t *Template) bothSpellings(uri string) bool {
	return t.reserved && strings.ContainsAny(uri[len(t.prefix):], "?#[]")
}

// match is Match, strict and shaped as matcher.strict and matcher.shaped
// say.
func (t *Template) match(uri string, strict, shaped bool) (Values, bool) {
	var binds [8]binding
	var items [16]string
	m := t.newMatcher(uri, strict, shaped, binds[:], items[:0])
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
	return t.strictFirst && (t.matchesAs(uri, true, true) || t.bothSpellings(uri) && t.matchesAs(uri, true, false)) ||
		t.matchesAs(uri, false, false)
}

// matchesAs is matches, strict and shaped as matcher.strict and
// matcher.shaped say.
func (t *Template) matchesAs(uri string, strict, shaped bool) bool {
	var binds [8]binding
	var items [16]string
	m := t.newMatcher(uri, strict, shaped, binds[:], items[:0])
	return m.match(0, 0)
}

// newMatcher returns a matcher of uri, strict and shaped as
// matcher.strict and matcher.shaped say, that binds t's variables in
// binds if it is long enough (else in a new slice) and pushes items onto
// items (nil: a new slice when the first is pushed).
func (t *Template) newMatcher(uri string, strict, shaped bool, binds []binding, items []string) matcher {
	m := matcher{t: t, uri: &uri, strict: strict, shaped: strict && shaped, checkBack: strict && t.checkBack, items: items}
	if len(t.names) <= len(binds) {
		m.binds = binds[:len(t.names)]
	} else {
		m.binds = make([]binding, len(t.names))
	}
	return m
}

// expandsBack reports whether the values bound so far expand to the URI
// being matched, with ExpandURI if the match is shaped, else Expand.
func (m *matcher) expandsBack() bool {
	vars := make(map[string]Value, len(m.t.names))
	for i, b := range m.binds {
		if b.set {
			// A copy: the map would take m.items to the heap, and with
			// it the arrays matches gives the matcher.
			vars[m.t.names[i]] = Value{Kind: b.kind, Items: append([]string(nil), m.items[b.start:b.end]...)}
		}
	}
	back, err := m.t.expand(vars, m.shaped)
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
	absent bool
	// sep is the separator a List was split on where the value's items
	// may hold it unencoded ('.' in {.x*}, ',' in {+x*} and {#x*}), so
	// that the List may split where the value did not, or Pairs that may
	// be a List whose items hold '=', as {+x*} writes them: see regroup.
	sep        byte
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
	// shaped is set for a strict match that takes, in {+x} and {#x},
	// what ExpandURI writes only: '?', '#', '[' and ']' encoded. Match
	// tries it before a strict match that takes what Expand writes too,
	// so that x://{#a}{#b} gives x://#v#, which ExpandURI writes for a
	// "v" and b "", to those values, and not a "v#", which it writes as
	// x://#v%23.
	shaped bool
	// checkBack is set for a strict match of a template that
	// Template.checkBack marks: a split matches only if its values expand
	// back to the URI (x://{?k*}{?k*} must not give both queries to the
	// first). Failures then depend on every binding and are not memoized.
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
	tries      int    // splits tried, counted where Template.checkBack is set
}

// dependent reports whether what a match of the rest of the template
// reports depends on the values bound so far, and not only on where.
func (m *matcher) dependent() bool {
	return m.t.repeats || m.checkBack
}

// maxRepeatTries bounds the splits Match tries for a template that uses a
// variable more than once (or checks its values back). The failure memo cannot bound those: whether
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
		if m.t.checkBack {
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
		if (!bound || m.dependent()) && m.hasAlternatives(e, uri[pos:end]) {
			rest := func() bool { return m.match(pi+1, end) }
			var ok bool
			switch {
			case end == pos:
				ok = m.bindEmpty(e, rest)
			case e.named:
				ok = m.bindPairsEach(e, uri[pos:end], rest)
			default:
				f := pos + btoi(e.first != 0) // after e's first character
				if sp == nil {
					// One for every run from pos: see splitter.
					sp = newSplitter(e, uri[f:maxEnd], m.strict, m.shaped)
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
	var buf [binary.MaxVarintLen64 + 2]byte
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
		buf[0], buf[1] = flags, b.sep
		h.Write(binary.AppendUvarint(buf[:2], uint64(b.end-b.start)))
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
		var ok bool
		if e, s, ok = m.head(e, s); !ok {
			return false
		}
	}
	m.reserved = e.reserved
	if e.named {
		return m.bindNamed(e, s)
	}
	return m.bindPositional(e, s)
}

// head checks that s, e's text, starts with e's first character, and
// returns the expression that binds the rest, and the rest: a query that
// starts with '&' is a merged {&…}'s alone, all the {?…}'s variables
// undefined ({?a}{&b} gives &b=1 for a undefined).
func (m *matcher) head(e *expr, s string) (*expr, string, bool) {
	if s[0] != e.first && (e.alt == 0 || s[0] != e.alt) {
		return e, s, false
	}
	if s[0] != e.first && e.amps != nil {
		if !m.unsetAll(e.vars[:len(e.vars)-len(e.amps.vars)]) {
			return e, s, false
		}
		e = e.amps
	}
	return e, s[1:], true
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
		case v.composite:
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

// setScalar binds v, a use that is not composite, to s decoded, as a
// String. A variable not exploded matches scalars only: expansion encodes
// the ',' of a string, but for {+x} and {#x} (reserved), so an unencoded
// ',' in s can only come from a list given to v, and s does not match.
// For {+x} and {#x} a ',' is part of the String, and so it is for an
// exploded use, as it would be of a List's item.
func (m *matcher) setScalar(v varspec, s string, reserved bool) bool {
	if !reserved && !v.explode && strings.IndexByte(s, ',') >= 0 {
		return false
	}
	if m.strict && !canonical(s, reserved, m.shaped) {
		return false
	}
	val, ok := decode(s)
	return ok && m.setString(v, val)
}

// scalarOK reports whether setScalar would take s for v, were v unbound.
func (m *matcher) scalarOK(v varspec, s string, reserved bool) bool {
	if !reserved && !v.explode && strings.IndexByte(s, ',') >= 0 || m.strict && !canonical(s, reserved, m.shaped) {
		return false
	}
	val, ok := decode(s)
	return ok && (v.prefix == 0 || utf8.RuneCountInString(val) <= v.prefix)
}

// setExploded binds the exploded variable v to the sep-separated items of
// run: Pairs if every item is key=value, else a List (of one item if run
// holds no sep).
func (m *matcher) setExploded(v varspec, run string, sep byte) bool {
	if strings.IndexByte(run, sep) < 0 && strings.IndexByte(run, '=') < 0 {
		if m.strict && !canonical(run, m.reserved, m.shaped) {
			return false
		}
		val, ok := decode(run)
		if !ok {
			return false
		}
		return m.setSplit(v, List, m.push(val), m.splitSep(sep))
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
	if kind == Pairs && !m.reserved {
		return m.set(v, kind, start)
	}
	return m.setSplit(v, kind, start, m.splitSep(sep))
}

// splitSep returns sep, the separator of a positional expression being
// bound, if the items of a value may hold it unencoded, else 0.
func (m *matcher) splitSep(sep byte) byte {
	if sep == '.' || m.reserved {
		return sep
	}
	return 0
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
// whose value must be a scalar (see setScalar), as must a later item's
// with the name, which it leaves.
// An exploded one takes every item with its name as a List or, if there is
// none, the items no variable of e names, as Pairs: the first such
// variable takes them all (x://r{?a*}{&b*} cannot tell a's keys from b's,
// and gives them to a), later ones are left undefined. Other items are
// ignored in a query ({?…}, {&…}) that no named expression follows. In
// a {;…}, or where a named expression follows e (an item e does not name
// may be that one's), s then does not match, so that x://r{;a}{;c} gives
// ;c=2 to c rather than ignoring it in a. An item Match ignores is not
// decoded, but a '%' in it must start a triplet, as in any URI. A name
// that e uses several
// times, as {?a}{&a} does, has the items with it (or for Pairs the items
// no variable names) split in as many runs, one for each use in turn, as
// expansion writes them: {;a:1,a} gives ;a=5;a=50%25 to a "50%".
func (m *matcher) bindNamed(e *expr, s string) bool {
	return m.bindNamedAs(e, s, nil)
}

// bindNamedAs is bindNamed, but where plan is not nil, the exploded
// variables of e (used once) with no items of their own take the items
// no variable names in turn, as many as plan says, rather than the first
// of them all.
func (m *matcher) bindNamedAs(e *expr, s string, plan []int) bool {
	onlyNamed := func() bool {
		for item := range strings.SplitSeq(s, string(e.sep)) {
			if k, _, _ := strings.Cut(item, "="); !e.names(k) {
				return false
			}
		}
		return true
	}
	strictItems := e.laterNamed || e.op == ';'
	if strictItems && !e.takesUnnamed() && !onlyNamed() || !escaped(s) {
		return false
	}
	pairsBy := -1 // the variable (by Template.names) that took the Pairs
	taken := 0    // by plan
	for _, v := range e.vars {
		start, found := len(m.items), false
		// The items with v's name to pass over, and to take (-1: all).
		skip, take := 0, -1
		switch {
		case v.uses > 1:
			var ok bool
			if skip, take, ok = v.run(e.count(s, v.name)); !ok || !v.composite && take > 1 {
				return false
			}
		case v.explode && !v.composite && e.count(s, v.name) > 1:
			return false // a String, which an exploded use writes once
		}
		for item := range strings.SplitSeq(s, string(e.sep)) {
			k, val, _ := strings.Cut(item, "=")
			if k != v.name {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			if take == 0 {
				break
			}
			take--
			switch {
			case !v.composite && found:
				// Match takes the first item with v's name, but a later
				// one must hold a value v could have too.
				if !m.scalarOK(v, val, false) {
					return false
				}
				continue
			case !v.composite:
				if !m.setScalar(v, val, false) {
					return false
				}
				found = true
				continue
			}
			if !m.pushDecoded(val) {
				return false
			}
			found = true
		}
		switch {
		case found && !v.composite:
		case found:
			if !m.set(v, List, start) {
				return false
			}
		case v.composite && plan != nil && v.uses == 1:
			pairsBy = v.index
			if !m.bindPairsRun(e, v, s, taken, plan[0]) {
				return false
			}
			taken, plan = taken+plan[0], plan[1:]
		case v.composite && (pairsBy < 0 || pairsBy == v.index):
			pairsBy = v.index
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
	return !strictItems || pairsBy >= 0 || onlyNamed()
}

// run returns, for a variable that its expression uses more than once
// and n items that belong to its uses, how many to pass over and how many
// to take for this use: n split in v.uses runs alike. ok is false if n
// does not split so.
func (v varspec) run(n int) (skip, take int, ok bool) {
	if n%v.uses != 0 {
		return 0, 0, false
	}
	take = n / v.uses
	return v.use * take, take, true
}

// count returns the number of items of s, e's text, called name.
func (e *expr) count(s, name string) int {
	n := 0
	for item := range strings.SplitSeq(s, string(e.sep)) {
		if k, _, _ := strings.Cut(item, "="); k == name {
			n++
		}
	}
	return n
}

// bindPairs binds the exploded variable v to the key=value items of s that
// no variable of e names (its run of them, if e uses v more than once).
func (m *matcher) bindPairs(e *expr, v varspec, s string) bool {
	skip, take := 0, -1
	if v.uses > 1 {
		var ok bool
		if skip, take, ok = v.run(e.unnamed(s)); !ok {
			return false
		}
	}
	return m.bindPairsRun(e, v, s, skip, take)
}

// unnamed returns the number of items of s, e's text, that no variable
// of e names, which an exploded variable may take as Pairs.
func (e *expr) unnamed(s string) int {
	n := 0
	for item := range strings.SplitSeq(s, string(e.sep)) {
		if e.isUnnamed(item) {
			n++
		}
	}
	return n
}

// isUnnamed reports whether item, of e's text, is one that no variable of
// e names, which an exploded variable may take as a pair.
func (e *expr) isUnnamed(item string) bool {
	k, _, _ := strings.Cut(item, "=")
	return item != "" && !e.names(k)
}

// bindPairsRun binds v to take of the items of s that no variable of e
// names (-1: all), after skip of them.
func (m *matcher) bindPairsRun(e *expr, v varspec, s string, skip, take int) bool {
	start := len(m.items)
	for item := range strings.SplitSeq(s, string(e.sep)) {
		if !e.isUnnamed(item) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if take == 0 {
			break
		}
		take--
		k, val, _ := strings.Cut(item, "=")
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
	return slices.ContainsFunc(e.vars, func(v varspec) bool { return v.composite })
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
	if m.strict && !canonical(s, m.reserved, m.shaped) {
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
	return m.setSplit(v, kind, start, 0)
}

// setSplit is set for a List split on sep, which its items may hold (see
// binding.sep), or 0.
func (m *matcher) setSplit(v varspec, kind Kind, start int, sep byte) bool {
	if kind != String && m.t.prefixed[v.index] {
		return false // RFC 6570: prefixes apply to strings only
	}
	if m.binds[v.index].absent {
		return false // another use left it undefined
	}
	end := int32(len(m.items))
	cur := binding{set: true, kind: kind, sep: sep, start: int32(start), end: end}
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
		// and values. Keep the String or Pairs, or a List whose items
		// are the value's.
		if !equal(old, now) {
			kept, ok := m.regroup(*b, cur)
			if ok {
				*b = kept
			}
			return ok
		}
		if b.kind == List && (cur.kind != List || b.sep != 0) {
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

// regroup returns the binding of a variable's value that two bindings of
// it with different items agree on, where one or both are Lists that may
// split where the value did not (see binding.sep): {.a*}{/a*} gives
// .x.y/x.y to a "x.y", which {.a*} alone would take as the List [x y].
// Joined with its separator, the other must give the same text; two
// split on different separators give the value's items where the first
// has its separator and the second its own.
func (m *matcher) regroup(a, b binding) (binding, bool) {
	a, b = m.asList(a), m.asList(b)
	x, y := m.items[a.start:a.end], m.items[b.start:b.end]
	switch {
	case a.kind == Pairs || b.kind == Pairs || a.sep == 0 && b.sep == 0:
		return a, false
	case b.sep == 0:
		return b, strings.Join(x, string(a.sep)) == strings.Join(y, string(a.sep))
	case a.sep == 0 || a.sep == b.sep:
		return a, strings.Join(x, string(b.sep)) == strings.Join(y, string(b.sep))
	}
	jx, jy := strings.Join(x, string(a.sep)), strings.Join(y, string(b.sep))
	if len(jx) != len(jy) {
		return a, false
	}
	start, from := len(m.items), 0
	for i := 0; i < len(jx); i++ {
		switch {
		case jx[i] == jy[i]:
		case jx[i] == a.sep && jy[i] == b.sep:
			m.push(jx[from:i])
			from = i + 1
		default:
			return a, false
		}
	}
	m.push(jx[from:])
	return binding{set: true, kind: List, start: int32(start), end: int32(len(m.items))}, true
}

// asList returns b, but for Pairs that may be a List (see binding.sep),
// which it returns as that List, each item key=value.
func (m *matcher) asList(b binding) binding {
	if b.kind != Pairs || b.sep == 0 {
		return b
	}
	start := len(m.items)
	for i := b.start; i < b.end; i += 2 {
		m.push(m.items[i] + "=" + m.items[i+1])
	}
	return binding{set: true, kind: List, sep: b.sep, start: int32(start), end: int32(len(m.items))}
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

// escaped reports whether every '%' in s starts a triplet.
func escaped(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; i = strings.IndexByte(s, '%') {
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
		s = s[i+3:]
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
// write them, or, if shaped, encoded, as ExpandURI does.
func canonical(s string, reserved, shaped bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80:
			return false
		case unreserved[c], reserved && reservedChars[c] && !(shaped && shapeChars[c]):
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
