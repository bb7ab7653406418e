package uritemplate

import (
	"fmt"
	"slices"
)

// Ambiguity says why the template is ambiguous, or returns "" if it is
// not. A template is ambiguous when two different sets of values can
// expand to one URI, so that Match, given that URI, cannot tell which was
// meant: it chooses one (see Match), which expands back to the same URI,
// but may not be the values the URI was made from. The cases:
//
//   - two expressions side by side (with nothing between but expressions,
//     which may expand to nothing) where the second's expansion may start
//     with a character the first's may hold: x://{a}{b} ("ab" is a="ab"
//     or a="a", b="b"), x://{a}{.b}, x://{+dir}{/name}; or where, both
//     positional, they start alike: x://{/a}{/b} (x:///v is a="v" or
//     b="v");
//   - an exploded variable followed by another variable of a positional
//     expression: {/a*,b} (/x/y is a=[x,y] or a=[x], b=y);
//   - several variables of one positional expression whose values may hold
//     its separator unencoded: {.a,b} ('.' is never encoded) and {+a,b}
//     and {#a,b} (',' is not, in reserved expansion);
//   - two exploded variables of one query ({?a*}{&b*}): either may hold
//     any key.
//
// A template without an ambiguity gives back, from any URI it expands to,
// the values that made it (up to what a prefix modifier cut, and the
// kinds that expand alike: a List of one item and a String).
func (t *Template) Ambiguity() string {
	// Every expression may expand to nothing: those since the last
	// literal are all side by side with the next.
	var since []*expr
	for _, p := range t.parts {
		e := p.expr
		if e == nil {
			since = since[:0]
			continue
		}
		if why := e.ambiguity(); why != "" {
			return fmt.Sprintf("%s in %q", why, t.raw)
		}
		for _, prev := range since {
			switch {
			case slices.ContainsFunc(e.startChars(), prev.holds):
				return fmt.Sprintf("%s and %s may be side by side, and the first may hold what the second starts with, in %q",
					prev.String(), e.String(), t.raw)
			case !prev.named && !e.named && prev.first != 0 && prev.first == e.first:
				return fmt.Sprintf("%s and %s may be side by side, and a value of either alone expands alike, in %q",
					prev.String(), e.String(), t.raw)
			}
		}
		since = append(since, e)
	}
	return ""
}

// ambiguity says why e alone is ambiguous, or returns "".
func (e *expr) ambiguity() string {
	exploded := 0
	for i, v := range e.vars {
		if !v.explode {
			continue
		}
		exploded++
		if !e.named && i < len(e.vars)-1 {
			return fmt.Sprintf("the exploded %s is followed by other variables in %s", v.name, e.String())
		}
	}
	if e.named && exploded > 1 {
		return fmt.Sprintf("%s has %d exploded variables, which may each hold any key", e.String(), exploded)
	}
	if !e.named && len(e.vars) > 1 {
		switch {
		case e.op == '.':
			return fmt.Sprintf("the values of %s may hold '.', its separator, unencoded", e.String())
		case e.reserved:
			return fmt.Sprintf("the values of %s may hold ',', its separator, unencoded", e.String())
		}
	}
	return ""
}

// startChars returns the characters a non-empty expansion of e may start
// with.
func (e *expr) startChars() []byte {
	if e.first != 0 {
		return []byte{e.first}
	}
	var cs []byte
	for c := byte(0); c < 0x80; c++ {
		if e.holds(c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// holds reports whether an expansion of e that Match takes back may hold
// c after its first character. A List or Pairs given to a variable not
// exploded is left out: its ',' makes Match refuse it (see Lists and
// scalars in the package doc).
func (e *expr) holds(c byte) bool {
	if c >= 0x80 {
		return false
	}
	if e.reserved {
		return unreserved[c] || reservedChars[c] || c == '%'
	}
	exploded := slices.ContainsFunc(e.vars, func(v varspec) bool { return v.explode })
	switch {
	case unreserved[c] || c == '%':
		return true
	case c == '=':
		return e.named || exploded
	case c == e.sep:
		return len(e.vars) > 1 || exploded
	case c == e.alt:
		return true
	}
	return false
}

// String returns e as a template writes it: {op var,…}.
func (e *expr) String() string {
	b := []byte{'{'}
	if e.op != 0 {
		b = append(b, e.op)
	}
	for i, v := range e.vars {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, v.name...)
		if v.prefix > 0 {
			b = fmt.Appendf(b, ":%d", v.prefix)
		}
		if v.explode {
			b = append(b, '*')
		}
	}
	return string(append(b, '}'))
}
