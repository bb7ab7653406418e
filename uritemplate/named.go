package uritemplate

import (
	"slices"
	"strings"
)

// This file models the text of a named expression ({;…}, {?…}, {&…})
// exactly as matcher.bindNamed takes it, so that a template's model
// takes only the URIs it matches (see Template.wide).

// maxNamedBits bounds what namedText follows of a named expression: a
// bit for each name that may have one item only, and, in a {;…}, for
// each composite name and for the parameters none names. The automaton
// has a copy of the expression's items for each set of bits.
const maxNamedBits = 4

// A nameInfo is what the model of a named expression needs of one of
// its names.
type nameInfo struct {
	name      string
	composite bool // a List or Pairs (see varspec.composite)
	// For a name that is not composite: the most characters the value
	// of an item of it may hold (0: any number), whether it may hold ','
	// (an exploded use), and whether only one item may have it (an
	// exploded use of a String, which expansion writes once).
	prefix int
	comma  bool
	once   bool
}

// namedInfo returns what the model of e needs of its names, and whether
// namedText can follow them exactly.
func namedInfo(e *expr) ([]nameInfo, bool) {
	var infos []nameInfo
	exact := true
	for _, v := range e.vars {
		i := slices.IndexFunc(infos, func(in nameInfo) bool { return in.name == v.name })
		if i < 0 {
			infos = append(infos, nameInfo{name: v.name, composite: v.composite, prefix: v.prefix,
				comma: v.explode, once: v.explode && !v.composite && v.uses == 1})
			exact = exact && strings.IndexByte(v.name, '%') < 0
			continue
		}
		// Used again (the template is wide): wider still.
		in := &infos[i]
		if in.prefix > 0 && (v.prefix == 0 || v.prefix > in.prefix) {
			in.prefix = v.prefix
		}
		if v.prefix == 0 {
			in.prefix = 0
		}
		in.comma = in.comma || v.explode
		in.once = false
	}
	// The bits namedText needs.
	strict, bits := e.laterNamed || e.op == ';', 0
	for _, in := range infos {
		if in.once || in.composite && strict {
			bits++
		}
	}
	if strict && slices.ContainsFunc(infos, func(in nameInfo) bool { return in.composite }) {
		bits++
	}
	return infos, exact && bits <= maxNamedBits
}

// namedText adds, from start, the items of e, a named expression, after
// its first character, split on e.sep, to end. Each item is one of:
//
//   - an item of a name that is not composite, whose value (after '=',
//     if any) is what setScalar takes: one only of a name that may have
//     one only;
//   - an item of a composite name (its List);
//   - an item that names none of e's variables: a parameter a query
//     ignores, or, where e has a composite name, one of the Pairs of the
//     first such name with no item of its own.
//
// Every '%' starts a triplet (see escaped). In a {;…}, or where a named
// expression follows e (see expr.laterNamed), an item that names none of
// e's variables makes the text not match but where a composite name
// without items takes it. Bits record which names that may have one item
// only have had it and, in a {;…} (or before another named expression),
// which composite names have had an item and whether one that names
// none has, which decides where the text may end.
func (n *nfa) namedText(start, end int, e *expr) {
	infos, exact := namedInfo(e)
	item := e.raw()
	item[e.sep>>6] &^= 1 << (e.sep & 63)
	if !exact {
		n.namedWide(start, end, e, infos, item)
		return
	}
	strict := e.laterNamed || e.op == ';'
	composites := slices.ContainsFunc(infos, func(in nameInfo) bool { return in.composite })
	bit := make([]int, len(infos)) // by name; 0 for none
	bits := 0
	for i, in := range infos {
		if in.once || in.composite && strict {
			bits++
			bit[i] = 1 << (bits - 1)
		}
	}
	other := 0 // the bit of an item that names none, where it matters
	if composites && strict {
		bits++
		other = 1 << (bits - 1)
	}
	param, done := make([]int, 1<<bits), make([]int, 1<<bits)
	for s := range param {
		param[s], done[s] = n.state(), n.state()
	}
	n.eps(start, param[0])
	scalar := item
	scalar[','>>6] &^= 1 << (',' & 63)
	for s := range param {
		n.on(done[s], setOf(string(e.sep)), param[s])
		// The text may end but where an item that names none needs a
		// composite name without items to take it.
		lacking := false
		for i, in := range infos {
			lacking = lacking || in.composite && s&bit[i] == 0
		}
		if s&other == 0 || lacking {
			n.eps(done[s], end)
		}
		for i, in := range infos {
			if in.once && s&bit[i] != 0 {
				continue // the one item it may have, it has had
			}
			name := n.lit(param[s], in.name)
			eq := n.lit(name, "=")
			chars, prefix := item, 0
			if !in.composite {
				prefix = in.prefix
				if !in.comma {
					chars = scalar
				}
			}
			n.eps(name, done[s|bit[i]])
			n.eps(n.value(eq, chars, prefix), done[s|bit[i]])
		}
		switch {
		case composites:
			n.unnamed(param[s], done[s|other], infos, item)
		case !strict:
			n.unbound = true
			n.unnamed(param[s], done[s], infos, item)
			n.unbound = false
		}
	}
}

// unnamed adds, from from to to, an item of item's characters and
// triplets whose name (up to the first '=') is none of infos'.
func (n *nfa) unnamed(from, to int, infos []nameInfo, item byteSet) {
	nameChars := item
	nameChars[0] &^= 1 << '=' // '=' < 64
	// A trie of the names: a character off it leads out, where any name
	// follows; one of the names may not end the item or meet '='.
	out, val := n.state(), n.state()
	n.eps(out, to)
	n.on(out, setOf("="), val)
	n.char1(out, out, nameChars)
	n.char1(val, val, item)
	n.eps(val, to)
	var walk func(at int, prefix string)
	walk = func(at int, prefix string) {
		if !slices.ContainsFunc(infos, func(in nameInfo) bool { return in.name == prefix }) {
			n.eps(at, to)
			n.on(at, setOf("="), val)
		}
		var next byteSet // characters that go on along the trie
		for _, in := range infos {
			if len(in.name) > len(prefix) && strings.HasPrefix(in.name, prefix) {
				next.add(in.name[len(prefix)])
			}
		}
		for c := byte(0); c < 0x80; c++ {
			if next.has(c) {
				child := n.state()
				n.on(at, setOf(string(c)), child)
				walk(child, prefix+string(c))
			}
		}
		off := nameChars
		off[0] &^= next[0]
		off[1] &^= next[1]
		n.char1(at, out, off)
	}
	root := n.state()
	n.eps(from, root)
	walk(root, "")
}

// namedWide models e where namedText cannot follow it: for a model, any
// items, which takes every text Match does; for a narrow model, only an
// item of each name that is not composite or exploded, in turn, with a
// value setScalar takes, which Match takes.
func (n *nfa) namedWide(start, end int, e *expr, infos []nameInfo, item byteSet) {
	param, done := n.state(), n.state()
	n.eps(start, param)
	n.on(done, setOf(string(e.sep)), param)
	n.eps(done, end)
	if !n.narrow {
		n.eps(n.value(param, item, 0), done)
		return
	}
	// The names in turn, each once, so that a name's item is its first.
	scalar := item
	scalar[','>>6] &^= 1 << (',' & 63)
	at := start
	for _, in := range infos {
		if in.composite || in.comma {
			continue
		}
		name := n.lit(at, in.name)
		next := n.state()
		n.eps(name, next)
		n.eps(n.value(n.lit(name, "="), scalar, in.prefix), next)
		n.eps(next, end)
		at = n.lit(next, string(e.sep))
	}
}
