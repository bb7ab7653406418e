// Package uritemplate compiles RFC 6570 URI templates once and matches URIs
// against them, giving back the variables' values percent-decoded, and
// routes a URI to the one most specific template among any number (see
// Router, Precedence).
//
// Parsing is checked against github.com/yosida95/uritemplate/v3; expansion
// and matching are this package's own. A match is the inverse of
// expansion, made lenient where clients are:
//
//   - {x} takes anything up to '/', '?' or '#' but an unencoded ','
//     (see Lists and scalars). Sub-delimiters that clients leave unencoded
//     (as JavaScript's encodeURIComponent does with ! ' ( ) *) are
//     accepted.
//   - {+x} and {#x} take reserved characters too, ',' as well
//     (file:///{+path} gives "a,b.txt" whole); {+x} stops before a '?'
//     or '#', and {#x} before a '?', that a later part of the template
//     needs. Any other
//     expression stops before the ';' or '&' that starts a {;…} or {&…}
//     right after it.
//   - {/x*}, {.x*} and {;x*} give lists; exploded key=value pairs give
//     Pairs.
//   - {?a,b}, {&c} and {;d,e} match their parameters in any order, each
//     optional. A query parameter the template does not name is ignored
//     by its last query expression ({?…}, {&…}), and left by an earlier
//     one to those after it; a {;…} takes only parameters it names, and
//     leaves the others to a later {;…}, so that x://r{;a}{;c} gives
//     x://r;a=1;c=2 to both, and x://{id}{;v} does not match x://1;w=2.
//     A parameter named twice gives the first value, the other being
//     one the variable could have too: t://teams{?team} matches
//     t://teams?team=red&team=blue, not t://teams?team=red&team=a,b. A
//     '%' in any parameter, ignored or not, must start a triplet.
//   - {x:3} matches at most 3 characters.
//   - Several variables in one expression split on its separator, each
//     taking an item, or several where its values may hold the separator
//     unencoded ({.x,y}, {+x,y}, {#x,y}), or none: expansion leaves an
//     undefined variable out, separator and all, so x://{/a:4,b} gives
//     x:///hello to b where a cannot take it, and x://{.b,a:2} gives
//     x://.x.y.%C3%A9 to b "x.y" and a "é".
//   - A variable the template uses more than once has one value in
//     every use, or is undefined in every use, as in an expansion:
//     x://{a}{?a} matches x://1?a=1 and x://, not x://1.
//
// Every value is percent-decoded exactly once; an invalid escape, or bytes
// that do not decode to valid UTF-8, make the URI not match. Where a
// template can split a URI several ways (see Template.Ambiguity), a split
// an expansion could have made wins, one whose every value is written as
// expansion writes it: an encoded '/' is never in an expansion of {+dir},
// so x://{+dir}{/name} gives x://d/e/a%2Fb to dir "d/e" and name "a/b",
// and an unencoded '!' never in one of {a}, so x://{a}{+b} gives x://0!
// to a "0" and b "!". Any URI a template expands to matches it back to
// values that expand to that URI again (with ExpandURI, or with Expand
// where no {+x} or {#x} value holds a '?' or '#' that gives the URI
// another shape, or a pct-encoded triplet, which Expand lets through as
// RFC 6570 says and Match decodes).
//
// A literal character a URI may not hold, such as the é of café/{var}, is
// percent-encoded (as UTF-8, with upper-case hex digits) by expansion,
// as RFC 6570 asks, and matched in that form only: café/{var} expands to
// caf%C3%A9/value and matches it. A URI that holds a raw non-ASCII
// character (which RFC 3986 does not allow; resource.Registry refuses
// such a URI before any template sees it) matches no literal or variable
// here.
//
// # Lists and scalars
//
// A variable that is not exploded matches scalars only: the value of a
// variable the template never explodes is always a String (or it is
// unbound), never a List or Pairs. Expansion
// percent-encodes the ',' of a string given to {x}, {/x}, {.x}, {;x},
// {?x} or {&x}, so an unencoded ',' in such a variable's text can only
// come from a list, and the URI does not match the template (a Router
// goes on to the other templates). With t://teams/{team}/notes:
//
//   - t://teams/red,blue/notes does not match, nor do
//     t://teams/,blue/notes, t://teams/red,/notes and t://teams/,/notes:
//     code that checks the one team a request names is not fooled by a
//     request for two;
//   - t://teams/red%2Cblue/notes matches, team the String "red,blue";
//   - t://teams//notes matches, team the empty String.
//
// {+x} and {#x} leave ',' unencoded in a string: their text is one String,
// ',' included, never split into a List. Exploded variables ({x*},
// {/x*}, {?x*}, …) match lists and pairs. Expand is unchanged and follows
// RFC 6570: a List given to {x} expands to "red,blue", a URI that the
// template then does not match back.
//
// # Variables used more than once
//
// A template may use a variable more than once: x://{a}/{a}, or
// {?a}{&a}, or {a:2} next to {a}. Match takes such a variable as
// expansion writes it, with one value in every use (a prefix modifier's
// use the start of it) or undefined in every use: x://{a}{?a} matches
// x://1?a=1 and x://, not x://1, which no values expand to. A Router
// compares templates on automata, which cannot check that the uses of a
// variable agree, so Router.Add ranks a template that repeats a variable
// only where that does not matter (x://{a}/{a} is more specific than
// x://{a}/{b}: every URI it matches the other matches too), and
// otherwise refuses a template that shares URIs with it, as it refuses
// any two templates it cannot rank (see Router, Precedence). Both are
// needed, and together they are the simplest rule that holds: Match
// takes no URI that no values expand to, and Add ranks only what its
// automata show, never by guess.
package uritemplate

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yosida "github.com/yosida95/uritemplate/v3"
)

// A Template is a parsed RFC 6570 URI template, ready to match and expand.
// It is immutable and safe for concurrent use.
type Template struct {
	raw    string
	src    []part   // as written, for Expand
	parts  []part   // as matched: a {&…} after a {?…} merged into it
	names  []string // distinct variable names, in order of appearance
	prefix string   // the literal text before the first expression
	shape  []byte   // specificity classes after prefix; see Router
	items  int      // a guess at the items a match binds, for capacity
	// repeats is set if a variable appears more than once.
	repeats bool
	// checkBack is set for a template whose strict match checks that its
	// values expand back to the URI (see matcher.checkBack): one that
	// repeats a variable, or has a named expression with an exploded
	// variable that takes as its Pairs what may be another's: that of
	// another exploded variable of it, or the text of an expression
	// after it (x://{;a*,c}{;b} could give ;c=v;b whole to the first, c
	// "v" and a the Pairs b and "", which expand to ;b;c=v).
	checkBack bool
	// reserved is set if the template has a {+x} or {#x}.
	reserved bool
	// wide is set if the template's model (see lang.go) takes URIs that
	// Match does not, values that do not decode to UTF-8 aside: where it
	// repeats a variable, whose uses must agree, has a prefix modifier
	// over maxModelPrefix, or a named expression with more names than
	// the model follows (see namedText).
	wide bool
	// prefixed marks, by index into names, the variables that appear with
	// a prefix modifier somewhere, and so may only be strings.
	prefixed []bool
	// strictFirst is set for a template that may split a URI in several
	// ways (an expression is followed by another part, or has several
	// positional variables) or repeats a variable: Match first tries the
	// splits an expansion could have made (see matcher.strict). Where a
	// lenient match could choose otherwise is subtle (x://{?k*}a{b,c}
	// gives x://?k=a1.2,a%2Fb, k a List of "", to k "a1.2," leniently);
	// the strict pass costs little where the URI is an expansion, and
	// nothing more where it is not.
	strictFirst bool
}

// amps returns the expr.amps of p, an expression, or nil.
func (p part) amps() *expr {
	if p.expr == nil {
		return nil
	}
	return p.expr.amps
}

// vars returns the variables of p, an expression, or nil.
func (p part) vars() []varspec {
	if p.expr == nil {
		return nil
	}
	return p.expr.vars
}

// A part is a literal run or an expression.
type part struct {
	lit  string
	expr *expr
	// deps are the variables of this and later parts that earlier parts
	// also bind: a match of the rest depends on their values.
	deps []int
	// minRest is the length of the literals after this part: the least
	// of the URI the rest of the template needs.
	minRest int
}

type expr struct {
	op       byte // 0, '+', '#', '.', '/', ';', '?', '&'
	first    byte // the character that starts a non-empty expansion, or 0
	alt      byte // '&' for a {?…} with a {&…} merged in; see bind
	sep      byte
	named    bool
	reserved bool // may hold reserved characters
	vars     []varspec
	// For '+' (and '#'), whether a later part of the template needs a '?'
	// (or '#'), which the expression must then leave alone.
	stopQuery, stopFragment bool
	// laterNamed is set for a named expression ({;…}, {?…}, {&…}) that a
	// named expression follows, which a parameter it does not name may
	// belong to: see bindNamed.
	laterNamed bool
	allow      [128]bool // see setAllow
	// amps is, for a {?…} with {&…} merged in, those {&…} alone: a query
	// that starts with '&' is theirs, every variable of the {?…} being
	// undefined.
	amps *expr
}

type varspec struct {
	name    string
	index   int // into Template.names
	prefix  int // max characters, 0 for none
	explode bool
	// uses counts the variables of the expression (as matched) with
	// this name, and use is this one's place among them: see bindNamed.
	uses, use int
	// composite is set for a use that Match binds to a List or Pairs:
	// an exploded one of a variable that every use explodes, with no
	// prefix modifier. Any other variable can only be a String (see Lists
	// and scalars in the package doc), which {x*} writes as {x} does.
	composite bool
}

// Parse parses an RFC 6570 (level 4) URI template. It returns an error
// saying what is wrong if s is not one: an unclosed or empty expression, a
// reserved operator (= , ! @ |), a malformed variable name or modifier, or
// a character a template may not hold.
func Parse(s string) (*Template, error) {
	if _, err := yosida.New(s); err != nil {
		return nil, fmt.Errorf("uritemplate: %q: %w", s, err)
	}
	t := &Template{raw: s}
	if err := t.parse(); err != nil {
		return nil, fmt.Errorf("uritemplate: %q: %w", s, err)
	}
	return t, nil
}

// MustParse is like Parse but panics on error. It is meant for templates
// fixed in the program's source.
func MustParse(s string) *Template {
	t, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return t
}

// String returns the template as it was parsed.
func (t *Template) String() string { return t.raw }

// Varnames returns the template's variable names in order of first
// appearance. The slice must not be modified.
func (t *Template) Varnames() []string { return t.names }

// Prefix returns the literal text before the template's first expression
// (the whole template if it has none) as expansion writes it: a character
// a URI may not hold percent-encoded, so the prefix of caf\u00e9/{x} is
// caf%C3%A9/.
func (t *Template) Prefix() string { return t.prefix }

func (t *Template) parse() error {
	s := t.raw
	for len(s) > 0 {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			t.src = append(t.src, part{lit: encodeLiteral(s)})
			break
		}
		if open > 0 {
			t.src = append(t.src, part{lit: encodeLiteral(s[:open])})
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			return errors.New("unclosed expression")
		}
		e, err := t.parseExpr(s[open+1 : open+end])
		if err != nil {
			return err
		}
		t.src = append(t.src, part{expr: e})
		s = s[open+end+1:]
	}
	for _, p := range t.src {
		if p.expr == nil {
			t.parts = append(t.parts, p)
		} else {
			t.addExpr(p.expr)
		}
	}
	t.setDeps()
	scalar := slices.Clone(t.prefixed) // variables that can only be strings
	for _, p := range t.parts {
		for _, v := range p.vars() {
			scalar[v.index] = scalar[v.index] || !v.explode
		}
	}
	for _, p := range t.parts {
		if p.expr != nil {
			p.expr.countUses(scalar)
			if p.expr.amps != nil {
				p.expr.amps.countUses(scalar)
			}
		}
	}
	rest := 0
	for i := len(t.parts) - 1; i >= 0; i-- {
		t.parts[i].minRest = rest
		rest += len(t.parts[i].lit)
	}
	for i, p := range t.parts {
		if p.expr != nil {
			t.prefix = joinLiterals(t.parts[:i])
			t.shape = shapeOf(t.parts[i:])
			break
		}
	}
	if t.shape == nil {
		t.prefix = joinLiterals(t.parts)
	}
	// A reserved expression must leave alone the '?' or '#' that a later
	// part needs.
	for i, p := range t.parts {
		if p.expr == nil || !p.expr.reserved {
			continue
		}
		for _, q := range t.parts[i+1:] {
			switch {
			case q.expr == nil:
				p.expr.stopQuery = p.expr.stopQuery || strings.IndexByte(q.lit, '?') >= 0
				p.expr.stopFragment = p.expr.stopFragment || strings.IndexByte(q.lit, '#') >= 0
			case q.expr.op == '?' || q.expr.op == '&':
				p.expr.stopQuery = true
			case q.expr.op == '#':
				p.expr.stopFragment = true
			}
		}
	}
	for i, p := range t.parts {
		if p.expr != nil {
			p.expr.setAllow(t.parts[i+1:])
			if p.expr.amps != nil {
				p.expr.amps.allow = p.expr.allow
			}
			t.reserved = t.reserved || p.expr.reserved
		}
	}
	for i, p := range t.parts {
		if p.expr != nil && (i < len(t.parts)-1 || !p.expr.named && len(p.expr.vars) > 1) {
			t.strictFirst = true
		}
	}
	named := false // a named expression comes later
	for i := len(t.parts) - 1; i >= 0; i-- {
		if e := t.parts[i].expr; e != nil && e.named {
			e.laterNamed = named
			if e.amps != nil {
				e.amps.laterNamed = named
			}
			named = true
		}
	}
	t.strictFirst = t.strictFirst || t.repeats
	t.wide = t.wide || t.repeats
	t.checkBack = t.repeats
	for i, p := range t.parts {
		if e := p.expr; e != nil && e.named && e.takesUnnamed() {
			t.checkBack = t.checkBack || composites(e) > 1 || slices.ContainsFunc(t.parts[i+1:], func(q part) bool { return q.expr != nil })
		}
	}
	t.strictFirst = t.strictFirst || t.checkBack
	for _, p := range t.parts {
		for _, e := range []*expr{p.expr, p.amps()} {
			if e != nil && e.named {
				_, exact := namedInfo(e)
				t.wide = t.wide || !exact
			}
		}
	}
	return nil
}

// encodeLiteral returns a template's literal text as expansion writes it
// (RFC 6570, section 3.1): characters a URI may hold (unreserved,
// reserved, and percent-encoded triplets) as they are, and every other
// byte percent-encoded, so that caf\u00e9/{var} expands to
// caf%C3%A9/value and matches that URI.
func encodeLiteral(s string) string {
	const hex = "0123456789ABCDEF"
	keep := func(i int) bool {
		c := s[i]
		return c < 0x80 && (unreserved[c] || reservedChars[c]) ||
			c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
	}
	i := 0
	for i < len(s) && keep(i) {
		i++
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		if keep(i) {
			b.WriteByte(s[i])
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[s[i]>>4])
		b.WriteByte(hex[s[i]&15])
	}
	return b.String()
}

// setAllow sets e.allow, the characters a match of e may hold, given the
// parts that follow e.
func (e *expr) setAllow(after []part) {
	for c := range e.allow {
		e.allow[c] = uriChars[c] != 0
	}
	switch e.op {
	case 0, '.', ';':
		e.allow['/'], e.allow['?'], e.allow['#'] = false, false, false
	case '/':
		e.allow['?'], e.allow['#'] = false, false
	case '?', '&':
		e.allow['#'] = false
	case '+':
		e.allow['?'], e.allow['#'] = !e.stopQuery, !e.stopFragment
	case '#':
		e.allow['?'] = !e.stopQuery
	}
	if e.reserved {
		return
	}
	// A ',' in the text of a variable not exploded makes it not match
	// (see setScalar): where a ',' cannot separate e's variables either,
	// e stops before it, and Match tries no longer runs that cannot bind.
	// A {;…}, {?…} or {&…} may hold ',' in parameters it ignores.
	if !e.named && (len(e.vars) == 1 || e.sep != ',') && !slices.ContainsFunc(e.vars, func(v varspec) bool { return v.explode }) {
		e.allow[','] = false
	}
	// A {;…} or {&…} right after e (or after expressions right after e,
	// which may be empty) starts with a character e's expansion never
	// holds: e leaves it alone, though it takes such sub-delimiters
	// elsewhere.
	for _, q := range after {
		if q.expr == nil {
			break
		}
		for _, c := range []byte{q.expr.first, q.expr.alt} {
			if c != 0 && !e.produces(c) {
				e.allow[c] = false
			}
		}
	}
}

// produces reports whether c may appear in an expansion of e, which is not
// reserved.
func (e *expr) produces(c byte) bool {
	return c < 0x80 && unreserved[c] || c == '%' || c == e.first || c == e.alt || c == e.sep || c == ',' || c == '='
}

// addExpr appends e, merging a {&…} that follows a {?…} or {&…} into it:
// together they are one query whose parameters may come in any order. The
// merged expression is a copy: t.src keeps the expressions as written.
func (t *Template) addExpr(e *expr) {
	if n := len(t.parts); n > 0 && e.op == '&' {
		if prev := t.parts[n-1].expr; prev != nil && (prev.op == '?' || prev.op == '&') {
			merged := *prev
			merged.vars = append(slices.Clip(prev.vars), e.vars...)
			if prev.op == '?' {
				merged.alt = '&'
				amps := *e
				if prev.amps != nil {
					amps.vars = append(slices.Clip(prev.amps.vars), e.vars...)
				}
				merged.amps = &amps
			}
			t.parts[n-1].expr = &merged
			return
		}
	}
	t.parts = append(t.parts, part{expr: e})
}

// countUses sets the uses, use and composite of e's variables, given
// which variables can only be strings, by Template.names.
func (e *expr) countUses(scalar []bool) {
	for i := range e.vars {
		e.vars[i].composite = e.vars[i].explode && !scalar[e.vars[i].index]
		e.vars[i].uses, e.vars[i].use = 0, 0
		for j := range e.vars {
			if e.vars[j].name == e.vars[i].name {
				e.vars[i].uses++
				if j < i {
					e.vars[i].use++
				}
			}
		}
	}
}

// setDeps sets each expression part's deps: the variables that it or a
// later part binds and an earlier part binds too.
func (t *Template) setDeps() {
	before := make([]bool, len(t.names))
	for i := range t.parts {
		e := t.parts[i].expr
		if e == nil {
			continue
		}
		var deps []int
		for _, q := range t.parts[i:] {
			if q.expr == nil {
				continue
			}
			for _, v := range q.expr.vars {
				if before[v.index] && !slices.Contains(deps, v.index) {
					deps = append(deps, v.index)
				}
			}
		}
		t.parts[i].deps = deps
		t.repeats = t.repeats || deps != nil
		for _, v := range e.vars {
			// A variable twice in one expression ({?a}{&a} merged) is a
			// repeat too.
			t.repeats = t.repeats || before[v.index] && !slices.Contains(deps, v.index)
			before[v.index] = true
		}
	}
}

func (t *Template) parseExpr(body string) (*expr, error) {
	if body == "" {
		return nil, errors.New("empty expression")
	}
	e := &expr{sep: ','}
	switch c := body[0]; c {
	case '+', '#', '.', '/', ';', '?', '&':
		e.op = c
		body = body[1:]
	case '=', ',', '!', '@', '|':
		return nil, fmt.Errorf("reserved operator %q", c)
	}
	switch e.op {
	case '+':
		e.reserved = true
	case '#':
		e.first, e.reserved = '#', true
	case '.':
		e.first, e.sep = '.', '.'
	case '/':
		e.first, e.sep = '/', '/'
	case ';':
		e.first, e.sep, e.named = ';', ';', true
	case '?':
		e.first, e.sep, e.named = '?', '&', true
	case '&':
		e.first, e.sep, e.named = '&', '&', true
	}
	for spec := range strings.SplitSeq(body, ",") {
		v, err := t.parseVarspec(spec)
		if err != nil {
			return nil, err
		}
		e.vars = append(e.vars, v)
		t.items++
	}
	return e, nil
}

func (t *Template) parseVarspec(spec string) (varspec, error) {
	var v varspec
	switch i := strings.IndexAny(spec, ":*"); {
	case i < 0:
		v.name = spec
	case spec[i] == '*':
		if i != len(spec)-1 {
			return v, fmt.Errorf("malformed variable %q", spec)
		}
		v.name, v.explode = spec[:i], true
	default:
		n, err := strconv.Atoi(spec[i+1:])
		if err != nil || n < 1 || n > 9999 || spec[i+1] == '0' || spec[i+1] == '+' {
			return v, fmt.Errorf("malformed prefix modifier in %q", spec)
		}
		v.name, v.prefix = spec[:i], n
	}
	if !validVarname(v.name) {
		return v, fmt.Errorf("malformed variable name %q", v.name)
	}
	v.index = -1
	for i, n := range t.names {
		if n == v.name {
			v.index = i
		}
	}
	if v.index < 0 {
		v.index = len(t.names)
		t.names = append(t.names, v.name)
		t.prefixed = append(t.prefixed, false)
	}
	t.prefixed[v.index] = t.prefixed[v.index] || v.prefix > 0
	t.wide = t.wide || v.prefix > maxModelPrefix
	return v, nil
}

// validVarname reports whether s is an RFC 6570 varname:
// varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded.
func validVarname(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case c == '.':
			if s[i-1] == '.' {
				return false
			}
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func joinLiterals(parts []part) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.lit)
	}
	return b.String()
}

// Expand returns the URI the template gives for vars, following RFC 6570:
// a missing variable, or a List or Pairs with no items, is undefined and
// expands to nothing. Values are encoded as UTF-8 and percent-encoded;
// reserved expansion ({+x} and {#x}) lets a pct-encoded triplet in a value
// through as it is (RFC 6570 §3.2.3: "admin%2F" stays admin%2F), which
// Match then decodes ("admin/"): use ExpandURI for a URI Match must give
// the value back from. Literal text is copied, but for characters a URI
// may not hold, which are percent-encoded (see the package doc). It returns an
// error, and no URI, only for a value the template cannot expand: a List
// or Pairs given to a variable with a prefix modifier ({keys:1}; RFC 6570
// §2.4.1 makes prefixes inapplicable to composite values, and a template
// does not say a variable's kind, so Parse cannot refuse it, and Match
// never binds a composite to such a variable), a String without exactly
// one item, Pairs with an odd number of items, or a value that is not
// valid UTF-8.
func (t *Template) Expand(vars map[string]Value) (string, error) {
	return t.expand(vars, false)
}

// ExpandURI is Expand for the URI a server hands out for an instance: its
// reserved expansions ({+x} and {#x}) percent-encode the characters that
// would give the URI another shape than the template's, '?' and '#'
// (which would start a query or fragment of their own) and '[' and ']'
// (which RFC 3986 allows only in an IP literal), as Expand does for the
// other operators. So file:///{+path} with path "docs/C#.md" gives
// file:///docs/C%23.md, where Expand gives file:///docs/C#.md, a fragment
// of file:///docs/C. It encodes every '%' in a value, in {+x} and {#x}
// too, where Expand lets a pct-encoded triplet through: a file named
// "50%41.md" is file:///50%2541.md, not the URI of a file named "50A.md".
// Match gives back the values ExpandURI was given. It returns the errors
// Expand returns.
func (t *Template) ExpandURI(vars map[string]Value) (string, error) {
	return t.expand(vars, true)
}

// expand is Expand, or, if shaped, ExpandURI.
func (t *Template) expand(vars map[string]Value, shaped bool) (string, error) {
	var b strings.Builder
	for _, p := range t.src {
		if p.expr == nil {
			b.WriteString(p.lit)
			continue
		}
		if err := p.expr.expand(&b, vars, shaped); err != nil {
			return "", fmt.Errorf("uritemplate: %q: %w", t.raw, err)
		}
	}
	return b.String(), nil
}

// expand writes e's expansion for vars to b (RFC 6570, appendix A); if
// shaped, as ExpandURI says.
func (e *expr) expand(b *strings.Builder, vars map[string]Value, shaped bool) error {
	first := true
	for _, v := range e.vars {
		val, ok := vars[v.name]
		if !ok || val.Kind != String && len(val.Items) == 0 {
			continue // undefined
		}
		switch {
		case val.Kind != String && val.Kind != List && val.Kind != Pairs:
			return fmt.Errorf("variable %q has an unknown kind %d", v.name, val.Kind)
		case val.Kind == String && len(val.Items) != 1:
			return fmt.Errorf("string %q must have exactly one item", v.name)
		case val.Kind == Pairs && len(val.Items)%2 != 0:
			return fmt.Errorf("%q has an odd number of pair items", v.name)
		case val.Kind != String && v.prefix > 0:
			return fmt.Errorf("prefix modifier on %q, which is not a string", v.name)
		}
		for _, item := range val.Items {
			if !utf8.ValidString(item) {
				return fmt.Errorf("%q is not valid UTF-8", v.name)
			}
		}
		if first {
			if e.first != 0 {
				b.WriteByte(e.first)
			}
			first = false
		} else {
			b.WriteByte(e.sep)
		}
		e.expandValue(b, v, val, shaped)
	}
	return nil
}

func (e *expr) expandValue(b *strings.Builder, v varspec, val Value, shaped bool) {
	// ifemp is what a named empty value gets after its name.
	ifemp := ""
	if e.op == '?' || e.op == '&' {
		ifemp = "="
	}
	switch {
	case val.Kind == String:
		s := val.Items[0]
		if v.prefix > 0 {
			s = truncate(s, v.prefix)
		}
		if e.named {
			b.WriteString(v.name)
			if s == "" {
				b.WriteString(ifemp)
				return
			}
			b.WriteByte('=')
		}
		e.escape(b, s, shaped)
	case !v.explode:
		if e.named {
			b.WriteString(v.name)
			b.WriteByte('=')
		}
		for i, item := range val.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			e.escape(b, item, shaped)
		}
	case val.Kind == List:
		for i, item := range val.Items {
			if i > 0 {
				b.WriteByte(e.sep)
			}
			if e.named {
				b.WriteString(v.name)
				if item == "" {
					b.WriteString(ifemp)
					continue
				}
				b.WriteByte('=')
			}
			e.escape(b, item, shaped)
		}
	default: // exploded Pairs
		for i := 0; i < len(val.Items); i += 2 {
			if i > 0 {
				b.WriteByte(e.sep)
			}
			e.escape(b, val.Items[i], shaped)
			if e.named && val.Items[i+1] == "" {
				b.WriteString(ifemp)
				continue
			}
			b.WriteByte('=')
			e.escape(b, val.Items[i+1], shaped)
		}
	}
}

// truncate returns the first n characters of s.
func truncate(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// escape writes s to b, percent-encoding as UTF-8 every byte that is not
// unreserved or, for {+x} and {#x}, reserved (but, if shaped, '?', '#',
// '[' and ']').
func (e *expr) escape(b *strings.Builder, s string, shaped bool) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && (unreserved[c] || e.reserved && reservedChars[c] && !(shaped && shapeChars[c])) {
			b.WriteByte(c)
			continue
		}
		if c == '%' && e.reserved && !shaped && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			// RFC 6570 §3.2.3: reserved expansion lets a pct-encoded
			// triplet through as it is.
			b.WriteString(s[i : i+3])
			i += 2
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
}

// shapeChars are the reserved characters ExpandURI encodes even in {+x}
// and {#x}.
var shapeChars = [128]bool{'?': true, '#': true, '[': true, ']': true}

var unreserved, reservedChars = func() (u, r [128]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~") {
		u[c] = true
	}
	for _, c := range []byte(":/?#[]@!$&'()*+,;=") {
		r[c] = true
	}
	return u, r
}()
