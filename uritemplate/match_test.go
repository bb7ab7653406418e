package uritemplate_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpres/mcpres/uritemplate"
)

// noMatch marks a URI the template must not match.
var noMatch map[string]uritemplate.Value

type matchCase struct {
	template, uri string
	want          map[string]uritemplate.Value // noMatch for none
}

func runMatchCases(t *testing.T, cases []matchCase) {
	t.Helper()
	for _, c := range cases {
		tmpl, err := uritemplate.Parse(c.template)
		require.NoError(t, err, c.template)
		m, ok := tmpl.Match(c.uri)
		if c.want == nil {
			assert.False(t, ok, "%s must not match %q; got %v", c.template, c.uri, m.Map())
			continue
		}
		if assert.True(t, ok, "%s must match %q", c.template, c.uri) {
			assert.Equal(t, c.want, m.Map(), "%s matching %q", c.template, c.uri)
		}
	}
}

// Match gives back what expansion wrote, where a template could split a
// URI several ways.
func TestMatchRoundTrips(t *testing.T) {
	runMatchCases(t, []matchCase{
		// A {;…} with an exploded variable leaves a later expression
		// its text, where the values would expand otherwise.
		{"x://~/{;a*,c:1}{;b:1}", "x://~/;c=v;b", vals("c", "v", "b", "")},
		{"x://~/{;a*,c:1}{;b:1}", "x://~/;k=1;c=v;b=w", vals("a", pv("k", "1"), "c", "v", "b", "w")},
		{"x://{;c*,a:1,b:1}{.x*}", "x://;a=v;b.1.2", vals("a", "v", "b", "", "x", lv("1", "2"))},
		{"x://{?a*,c,b*}", "x://?c=1&K=v", vals("c", "1", "b", pv("K", "v"))},
		// In one expression too: the items of {.b*} are Pairs, as
		// expansion writes k=v, where a List's would be k%3Dv.
		{"x://{.b*,c:1,a}", "x://.k=v.h.x.y", vals("b", pv("k", "v"), "c", "h", "a", "x.y")},
		// A parameter the first {;…} does not name belongs to a later one;
		// a {;…} takes no parameter it does not name.
		{"x://r{;a}{;c}", "x://r;a=1;c=2", vals("a", "1", "c", "2")},
		{"x://r{;a}{;c}", "x://r;c=2;a=1", noMatch},
		{"x://r{;a}{;c}", "x://r;a=1;c=2;z=3", noMatch},
		// Exploded maps in two query expressions: the first takes every
		// pair, which expands back to the same query.
		{"x://r{?a*}{&b*}", "x://r?k=1&m=2", map[string]uritemplate.Value{"a": uritemplate.PairsValue("k", "1", "m", "2")}},
		// An encoded '/' is never in an expansion of {+dir}: it is name's.
		{"x://{+dir}{/name}", "x://d/e/a%2Fb", vals("dir", "d/e", "name", "a/b")},
		{"x://{+dir}{/name}", "x://d/e/a", vals("dir", "d/e/a")},
		// Where no split avoids it, a client's encoded '/' is accepted.
		{"x://{+dir}{/name}", "x://%2Fd", vals("dir", "/d")},
		{"file:///{+path}", "file:///a%2Fb", vals("path", "a/b")},
	})
}

func TestMatchQuery(t *testing.T) {
	runMatchCases(t, []matchCase{
		// Any order, each optional, unknown parameters ignored (in a
		// query: a {;…} takes only parameters it names).
		{"x://s{?a,b}", "x://s?a=1&b=2", vals("a", "1", "b", "2")},
		{"x://s{?a,b}", "x://s?b=2&a=1", vals("a", "1", "b", "2")},
		{"x://s{?a,b}", "x://s?a=1", vals("a", "1")},
		{"x://s{?a,b}", "x://s?b=2", vals("b", "2")},
		{"x://s{?a,b}", "x://s", vals()},
		{"x://s{?a,b}", "x://s?", vals()},
		{"x://s{?a,b}", "x://s?c=3&b=2&d&&e=", vals("b", "2")},
		{"x://s{?a,b}", "x://s?c=3", vals()},
		// Unknown parameters are not decoded: a bad escape in one does
		// not matter.
		{"x://s{?a}", "x://s?a=1&z=%FF", vals("a", "1")},
		// The first of a repeated parameter wins.
		{"x://s{?a}", "x://s?a=1&a=2", vals("a", "1")},
		{"x://s{?a}", "x://s?a", vals("a", "")},
		{"x://s{?a}", "x://s?a=", vals("a", "")},
		{"x://s{?a}", "x://s?a=b=c", vals("a", "b=c")},
		// A ',' only a list gives: not a scalar (see
		// TestMatchListsAndScalars).
		{"x://s{?a}", "x://s?a=1,2", noMatch},
		{"x://s{?a}", "x://s?a=1%2C2", vals("a", "1,2")},
		{"x://s{?a}", "x://s?a=%20%26", vals("a", " &")},
		{"x://s{?a}", "x://s?a=/b?c", vals("a", "/b?c")},
		{"x://s{?a}", "x://s?a=1#f", noMatch},
		{"x://s{?a}", "x://s?a=%FF", noMatch},
		{"x://s{?a*}", "x://s?a=1&a=%FF", noMatch},
		{"x://{a}{?a*}", "x://1?a=1", vals("a", "1")},
		{"x://{a}{?a*}", "x://1,2?a=1&a=2", noMatch},
		{"x://{a}{?a*}", "x://1?a=1&a=2", noMatch},
		{"x://s{?a}", "x://s&a=1", noMatch},
		{"x://s{?a}", "x://sa=1", noMatch},
		// {&…} after {?…} joins the same query: any order; it may start
		// the query where the {?…} variables are undefined, as expansion
		// has it.
		{"x://s{?a}{&b,c}", "x://s?c=3&b=2&a=1", vals("a", "1", "b", "2", "c", "3")},
		{"x://s{?a}{&b}", "x://s?b=2", vals("b", "2")},
		{"x://s{?a}{&b}", "x://s&b=2", vals("b", "2")},
		// A query that starts with '&' is the {&…}'s alone: the {?…}'s
		// variables are undefined, as in the expansion that gave it.
		{"x://s{?a}{&b}", "x://s&a=1&b=2", vals("b", "2")},
		{"x://s{?k*}{&k2*}", "x://s&K=0&L=1", vals("k2", pv("K", "0", "L", "1"))},
		{"x://s{?k*}{&k2*}", "x://s?K=0&L=1", vals("k", pv("K", "0", "L", "1"))},
		{"x://s{?a}{&a}", "x://s&a=1", noMatch},
		{"x://s{?a}{&a}", "x://s?a=1&a=1", vals("a", "1")},
		// A {&…} after a literal query.
		{"x://s?fixed=yes{&x}", "x://s?fixed=yes&x=1024", vals("x", "1024")},
		{"x://s?fixed=yes{&x}", "x://s?fixed=yes&y=1&x=2", vals("x", "2")},
		{"x://s?fixed=yes{&x}", "x://s?fixed=yes", vals()},
		{"x://s?fixed=yes{&x}", "x://s?x=2&fixed=yes", noMatch},
		// Exploded query variables.
		{"x://s{?list*}", "x://s?list=a&other=1&list=b", vals("list", lv("a", "b"))},
		{"x://s{?list*}", "x://s?list=a", vals("list", lv("a"))},
		{"x://s{?a,keys*}", "x://s?a=1&k=v&z=&w", vals("a", "1", "keys", pv("k", "v", "z", "", "w", ""))},
		{"x://s{?keys*}", "x://s?k%20=%20v", vals("keys", pv("k ", " v"))},
		{"x://s{?keys*}", "x://s?%FF=1", noMatch},
		// Path-style parameters, any order too.
		{"x:{;a,b}", "x:;b=2;a=1", vals("a", "1", "b", "2")},
		{"x:{;a,b}", "x:;b;a=1", vals("a", "1", "b", "")},
		{"x:{;a,b}", "x:;a;c=3", noMatch},
		{"x:{;list*}", "x:;list=a;list=b", vals("list", lv("a", "b"))},
		{"x:{;keys*}", "x:;a=1;b=2", vals("keys", pv("a", "1", "b", "2"))},
		{"x:{;a}", "x:;a=1/b", noMatch},
		{"x:{;a}", "x:a=1", noMatch},
		// {x} takes sub-delimiters, but not the ';' or '&' that starts a
		// {;…} or {&…} right after it, which its expansion never holds.
		{"x://{id}{;v}", "x://item;v=2", vals("id", "item", "v", "2")},
		{"x://{id}{;v}", "x://item;w=2", noMatch},
		{"x://{id}{b}{;v}", "x://item;v=2", vals("id", "item", "b", "", "v", "2")},
		{"x://{id};{v}", "x://a;b;c", vals("id", "a;b", "v", "c")},
		{"x://{id}{&v}", "x://item&v=2", vals("id", "item", "v", "2")},
		{"x://{id}", "x://item;v=2&w=3", vals("id", "item;v=2&w=3")},
		{"x://{/p}{;v}", "x:///a;v=1", vals("p", "a", "v", "1")},
		{"x://{?q}{/p}", "x://?q=1/a", vals("q", "1", "p", "a")},
	})
}

func TestMatchSimple(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"x://{a}/{b}", "x://1/2", vals("a", "1", "b", "2")},
		// {x} stops at '/', '?' and '#'.
		{"x://{a}/{b}", "x://1/2/3", noMatch},
		{"x://{a}", "x://a/b", noMatch},
		{"x://{a}", "x://a?b", noMatch},
		{"x://{a}", "x://a#b", noMatch},
		{"db://{table}/{id}", "db://users/42/extra", noMatch},
		{"x://{a}", "x://a%2Fb%3F%23", vals("a", "a/b?#")},
		// An unencoded ',' separates list items, which {a} does not
		// match; an encoded one is part of the string.
		{"x://{a}", "x://a,b", noMatch},
		{"x://{a}", "x://a,", noMatch},
		{"x://{a}", "x://a%2Cb", vals("a", "a,b")},
		// Sub-delimiters and other reserved characters clients leave
		// unencoded are taken.
		{"x://{a}", "x://O'Brien", vals("a", "O'Brien")},
		{"x://{a}", "x://it's(1)!*~", vals("a", "it's(1)!*~")},
		{"x://{a}", "x://a=b&c;d:e@f$g+h[i]", vals("a", "a=b&c;d:e@f$g+h[i]")},
		{"x://{a}", "x://", vals("a", "")},
		// Characters that are not URI characters are not.
		{"x://{a}", "x://a b", noMatch},
		{"x://{a}", "x://é", noMatch},
		{"x://{a}", "x://a\"b", noMatch},
		{"x://{a}", "x://a{b}", noMatch},
		// Literals are compared exactly.
		{"x://a/{b}", "x://A/1", noMatch},
		{"x://a/{b}", "x://%61/1", noMatch},
		{"x://a", "x://a", vals()},
		{"x://a", "x://a/", noMatch},
		{"x://a", "x://", noMatch},
		{"", "", vals()},
		{"", "x", noMatch},
		{"{a}", "", vals("a", "")},
		// Non-ASCII literals, as written.
		// A literal a URI may not hold is matched as expansion writes it,
		// percent-encoded with upper-case digits; the raw character, which
		// no URI holds, does not match.
		{"x://é/{a}", "x://%C3%A9/1", vals("a", "1")},
		{"x://é/{a}", "x://é/1", noMatch},
		{"x://é/{a}", "x://%c3%a9/1", noMatch},
	})
}

func TestMatchReserved(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"file:///{+path}", "file:///a/b/c.txt", vals("path", "a/b/c.txt")},
		{"file:///{+path}", "file:///", vals("path", "")},
		{"file:///{+path}", "file:///a%20b/%C3%A9", vals("path", "a b/é")},
		{"file:///{+path}", "file:///a%2Fb", vals("path", "a/b")},
		// Nothing later needs the '?' or '#': {+path} takes them.
		{"file:///{+path}", "file:///a/b?q=1#f", vals("path", "a/b?q=1#f")},
		// A later {?q} needs the '?'.
		{"file:///{+path}{?q}", "file:///a/b?q=1", vals("path", "a/b", "q", "1")},
		{"file:///{+path}{?q}", "file:///a/b", vals("path", "a/b")},
		{"file:///{+path}{?q}", "file:///a/b?r=1", vals("path", "a/b")},
		{"file:///{+path}{?q}{&r}", "file:///a?r=2&q=1", vals("path", "a", "q", "1", "r", "2")},
		// ... or a later literal '?', or a {#…} the '#'.
		{"x:{+a}?v={b}", "x:/p/q?v=1", vals("a", "/p/q", "b", "1")},
		{"x:{+a}{#f}", "x:/p#frag", vals("a", "/p", "f", "frag")},
		{"x:{+a}{#f}", "x:/p#a#b", vals("a", "/p", "f", "a#b")},
		// A later literal: the longest run that lets it match.
		{"x:{+a}/z", "x:1/2/z", vals("a", "1/2")},
		{"x:{+a}/z", "x:1/2/z/z", vals("a", "1/2/z")},
		{"{+base}index", "http://example.com/home/index", vals("base", "http://example.com/home/")},
		// Fragments take everything after the '#'.
		{"x:{#f}", "x:#a/b?c#d", vals("f", "a/b?c#d")},
		{"x:{#f}", "x:#", vals("f", "")},
		{"x:{#f}", "x:", vals()},
		{"x:{#f}", "x:a", noMatch},
		// Several variables split on ','; the last takes the rest, ','
		// included, as a String.
		{"x:{+a,b}", "x:/1,/2", vals("a", "/1", "b", "/2")},
		{"x:{#a,b}/here", "x:#/1,2/here", vals("a", "/1", "b", "2")},
		{"x:{+a,b}", "x:/1,/2,/3", vals("a", "/1", "b", "/2,/3")},
	})
}

func TestMatchExplode(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"x:{/list*}", "x:/a/b/c", vals("list", lv("a", "b", "c"))},
		{"x:{/list*}", "x:/a", vals("list", lv("a"))},
		{"x:{/list*}", "x:/a%2Fb/c", vals("list", lv("a/b", "c"))},
		{"x:{/list*}", "x:/a//", vals("list", lv("a", "", ""))},
		{"x:{/list*}", "x:", vals()},
		{"x:{/list*}", "x:a", noMatch},
		{"x:{/list*}", "x:/a?b", noMatch},
		// key=value items are Pairs, if they all are.
		{"x:{/keys*}", "x:/a=1/b=2", vals("keys", pv("a", "1", "b", "2"))},
		{"x:{/keys*}", "x:/a=1", vals("keys", pv("a", "1"))},
		{"x:{/keys*}", "x:/a=/b=c=d", vals("keys", pv("a", "", "b", "c=d"))},
		{"x:{/keys*}", "x:/%61%3D=%3D", vals("keys", pv("a=", "="))},
		{"x:{/list*}", "x:/a/b=c", vals("list", lv("a", "b=c"))},
		{"x:{.ext*}", "x:.tar.gz", vals("ext", lv("tar", "gz"))},
		{"x:{.keys*}", "x:.a=1.b=2", vals("keys", pv("a", "1", "b", "2"))},
		{"x:{list*}", "x:a,b", vals("list", lv("a", "b"))},
		{"x:{keys*}", "x:a=1,b=2", vals("keys", pv("a", "1", "b", "2"))},
		{"x:{+list*}", "x:/a,/b", vals("list", lv("/a", "/b"))},
		{"logs://{service}{/parts*}", "logs://svc/a/b", vals("service", "svc", "parts", lv("a", "b"))},
		{"logs://{service}{/parts*}", "logs://svc", vals("service", "svc")},
		// An exploded variable takes what the others leave.
		{"x:{/list*,last}", "x:/a/b/c", vals("list", lv("a", "b"), "last", "c")},
		{"x:{/first,list*}", "x:/a/b/c", vals("first", "a", "list", lv("b", "c"))},
		{"x:{/a}{/b*}", "x:/1/2/3", vals("a", "1", "b", lv("2", "3"))},
		// A {/x} not exploded holds one segment: no items may be left
		// over.
		{"x:{/a}", "x:/1/2", noMatch},
		{"x:{/a,b}", "x:/1/2/3", noMatch},
	})
}

func TestMatchPrefix(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"x:{a:3}", "x:abc", vals("a", "abc")},
		{"x:{a:3}", "x:ab", vals("a", "ab")},
		{"x:{a:3}", "x:", vals("a", "")},
		{"x:{a:3}", "x:abcd", noMatch},
		// Characters, not bytes.
		{"x:{a:3}", "x:%C3%A9%C3%A9%C3%A9", vals("a", "ééé")},
		{"x:{a:3}", "x:%C3%A9%C3%A9%C3%A9a", noMatch},
		{"x:{a:3}", "x:a%2Cb", vals("a", "a,b")},
		// A prefix applies to strings: a list never matches it.
		{"x:{a:3}", "x:a,b", noMatch},
		{"x:{a:3}{b}", "x:abcdef", vals("a", "abc", "b", "def")},
		{"x:{?a:2}", "x:?a=ab", vals("a", "ab")},
		{"x:{?a:2}", "x:?a=abc", noMatch},
		{"x:{/a:1,b}", "x:/v/value", vals("a", "v", "b", "value")},
		// A variable used twice must have one value; a prefix may cut one
		// use short, and the match keeps the whole value.
		{"x:{a}/{a}", "x:1/1", vals("a", "1")},
		{"x:{a}/{a}", "x:1/2", noMatch},
		{"x:{a}/{a}", "x:1/12", noMatch},
		{"x:{a}/{a}", "x:12/1", noMatch},
		{"x:{a}/{a}", "x:1%2C2/1%2C2", vals("a", "1,2")},
		{"x:{a}/{a}", "x:1,2/1,2", noMatch},
		{"x:{a}/{a}", "x:1,2/1", noMatch},
		{"x:{a}/{a}", "x:1,2/1,2,3", noMatch},
		{"x:{a}/{a}", "x:1,2/1,3", noMatch},
		// An exploded use gives a List of one item where another gives
		// a String: the same items are the same value. A use not
		// exploded matches scalars only, so a variable used both ways
		// is a String.
		{"x:{/a*}/{a}", "x:/x/x", vals("a", "x")},
		{"x:{a}{/a*}", "x:x/x", vals("a", "x")},
		{"x:{/a*}/{a}", "x:/x/y/x,y", noMatch},
		{"x:{/a*}/{a}", "x:/x=1/x,1", noMatch},
		{"x:{a}{/a*}", "x:x,1/x=1", noMatch},
		{"x:{/a*}/{a}", "x:/x,y/x%2Cy", vals("a", "x,y")},
		// A variable used twice is defined in both uses or in neither:
		// a List for {/a*} would expand to ?a=x,y in {?a}, which
		// matches scalars only.
		{"x:{/a*}{?a}", "x:/x/y", noMatch},
		{"x:{/a*}{?a}", "x:/x/y?a=x,y", noMatch},
		{"x:{/a*}{?a}", "x:/x?a=x", vals("a", "x")},
		{"x:{/a*}{?a}", "x:", vals()},
		{"x:{#a*}/{a}", "x:#/", vals("a", "")},
		{"x:{/a*}/{a}", "x:/x/y", noMatch},
		{"x:{a:2}{b}-{a}", "x:abcd-abc", vals("a", "abc", "b", "cd")},
		{"x:{a}/{b}{c}{d}-{a}", "x:1/xyz-2", noMatch},
		{"x:{a}/{b}{c}{d}-{a}", "x:1/xyz-1", vals("a", "1", "b", "xyz", "c", "", "d", "")},
		{"x:{a:3}/{a}", "x:abc/abcdef", vals("a", "abcdef")},
		{"x:{a}/{a:3}", "x:abcdef/abc", vals("a", "abcdef")},
		{"x:{a:3}/{a}", "x:abc/abc", vals("a", "abc")},
		{"x:{a:3}/{a}", "x:ab/ab", vals("a", "ab")},
		{"x:{a:3}/{a}", "x:abc/abd", noMatch},
		// "ab" is all of a: {a:3} would give "abc" for "abcdef".
		{"x:{a:3}/{a}", "x:ab/abcdef", noMatch},
		{"x:{a:3}/{a:5}", "x:abc/abcde", vals("a", "abcde")},
		{"x:{a:5}/{a:3}", "x:abcde/abc", vals("a", "abcde")},
		{"x:{a:3}/{a:5}", "x:abc/abd", noMatch},
		{"x:{a:3}/{a:5}", "x:ab/abcd", noMatch},
		// A variable with a prefix anywhere is a string everywhere.
		{"x:{#a:1}{a}", "x:1,2", noMatch},
		{"x:{#a:1}{a}", "x:12", noMatch},
		{"x:{#a:1}{a}", "x:#112", vals("a", "12")},
		{"x:{a}{#a:1}", "x:,", noMatch},
		{"{/var:1,var}", "/v/value", vals("var", "value")},
		{"{/var:1,var}", "/w/value", noMatch},
		// The second {a} must equal the first: the earlier split of
		// "xy" must give way.
		{"x:{a}{b}-{a}", "x:xy-x", vals("a", "x", "b", "y")},
		{"x:{a}{b}-{a}", "x:xy-", vals("a", "", "b", "xy")},
		{"x:{a}{b}-{a}", "x:xy-y", noMatch},
		{"x:{a}{b}{c}-{a}", "x:xyz-x", vals("a", "x", "b", "yz", "c", "")},
		{"x:{a}{b}{c}-{b}", "x:xyz-y", vals("a", "x", "b", "y", "c", "z")},
	})
}

// TestMatchListsAndScalars checks that a variable not exploded matches
// scalars only: expansion encodes the ',' of a string given to it, but for
// {+x} and {#x}, so an unencoded ',' in its text can only come from a
// list, and the URI does not match. An encoded ',' is part of a String;
// {+x} and {#x} take ',' into a String; exploded variables give lists.
func TestMatchListsAndScalars(t *testing.T) {
	// Each operator that encodes ',' in a string, with the URI that
	// gives team the text in place of %s, and the other values it binds.
	for _, op := range []struct {
		template, uri string
		other         []any
	}{
		{"t://teams/{team}/notes", "t://teams/%s/notes", nil},
		{"t://teams{/team}/notes", "t://teams/%s/notes", nil},
		{"t://teams/x{.team}", "t://teams/x.%s", nil},
		{"t://teams{;team}", "t://teams;team=%s", nil},
		{"t://teams{?team}", "t://teams?team=%s", nil},
		{"t://teams?x=1{&team}", "t://teams?x=1&team=%s", nil},
		{"t://teams{?x}{&team}", "t://teams?x=1&team=%s", []any{"x", "1"}},
	} {
		uri := func(text string) string { return strings.Replace(op.uri, "%s", text, 1) }
		want := func(team string) map[string]uritemplate.Value {
			return vals(append([]any{"team", team}, op.other...)...)
		}
		runMatchCases(t, []matchCase{
			{op.template, uri("red"), want("red")},
			{op.template, uri("red,blue"), noMatch},
			{op.template, uri(",blue"), noMatch},
			{op.template, uri("red,"), noMatch},
			{op.template, uri(","), noMatch},
			{op.template, uri(",,"), noMatch},
			{op.template, uri("red,blue,green"), noMatch},
			{op.template, uri("red%2Cblue"), want("red,blue")},
			{op.template, uri("red%2cblue"), want("red,blue")},
			{op.template, uri("%2C"), want(",")},
			// The empty string stays a value.
			{op.template, uri(""), want("")},
		})
	}
	runMatchCases(t, []matchCase{
		// A named variable takes the first item with its name, scalar
		// or not: a list there is not skipped for a later item, nor
		// passed over in one.
		{"t://teams{?team}", "t://teams?team=red,blue&team=green", noMatch},
		{"t://teams{?team}", "t://teams?team=red&team=blue,green", noMatch},
		{"t://teams{?team}", "t://teams?team=red&team=blue", vals("team", "red")},
		{"t://teams{;team}", "t://teams;team=red,blue;team=green", noMatch},
		// Unknown parameters may hold anything.
		{"t://teams{?team}", "t://teams?team=red&other=a,b", vals("team", "red")},
		// Several variables in one expression: ',' separates them in
		// {a,b}, but no variable takes one.
		{"x:{a,b}", "x:1,2", vals("a", "1", "b", "2")},
		{"x:{a,b}", "x:1,2,3", noMatch},
		{"x:{a,b}", "x:,", vals("a", "", "b", "")},
		{"x:{a,b}", "x:,,", noMatch},
		{"x:{/a,b}", "x:/1,2/3", noMatch},
		{"x:{/a,b}", "x:/1/2,3", noMatch},
		{"x:{.a,b}", "x:.1.2,3", noMatch},
		{"x:{;a,b}", "x:;a=1;b=2,3", noMatch},
		{"x:{?a,b}", "x:?a=1,2&b=3", noMatch},
		// A ',' in a literal is the literal's.
		{"x:{a},{b}", "x:1,2", vals("a", "1", "b", "2")},
		{"x:{a},{b}", "x:1,2,3", noMatch},
		{"x:{a},{+b}", "x:1,2,3", vals("a", "1", "b", "2,3")},
		// A prefix modifier: strings only, as before.
		{"x:{a:3}", "x:a,b", noMatch},
		// {+x} and {#x}: the text is one String, ',' included.
		{"x:{+a}", "x:red,blue", vals("a", "red,blue")},
		{"x:{+a}", "x:,blue", vals("a", ",blue")},
		{"x:{+a}", "x:red,", vals("a", "red,")},
		{"x:{+a}", "x:,", vals("a", ",")},
		{"x:{+a}", "x:red%2Cblue", vals("a", "red,blue")},
		{"t://teams/{+team}/notes", "t://teams/red,blue/notes", vals("team", "red,blue")},
		{"x:{#a}", "x:#red,blue", vals("a", "red,blue")},
		{"x:{#a}", "x:#,", vals("a", ",")},
		{"x:{+a,b}", "x:1,2,3", vals("a", "1", "b", "2,3")},
		{"x:{#a,b}", "x:#,2,", vals("a", "", "b", "2,")},
		// Exploded variables give lists and pairs, as before.
		{"x:{a*}", "x:red,blue", vals("a", lv("red", "blue"))},
		{"x:{a*}", "x:,blue", vals("a", lv("", "blue"))},
		{"x:{a*}", "x:red", vals("a", lv("red"))},
		{"x:{a*}", "x:k=1,j=2", vals("a", pv("k", "1", "j", "2"))},
		{"x:{+a*}", "x:/r,/b", vals("a", lv("/r", "/b"))},
		{"x:{#a*}", "x:#r,b", vals("a", lv("r", "b"))},
		{"x:{/a*}", "x:/red/blue", vals("a", lv("red", "blue"))},
		{"x:{/a*}", "x:/red,blue", vals("a", lv("red,blue"))},
		{"x:{.a*}", "x:.red.blue", vals("a", lv("red", "blue"))},
		{"x:{;a*}", "x:;a=red;a=blue", vals("a", lv("red", "blue"))},
		{"x:{?a*}", "x:?a=red&a=blue", vals("a", lv("red", "blue"))},
		{"x:{?a*}", "x:?a=red,blue", vals("a", lv("red,blue"))},
		{"x:{&a*}", "x:&a=red&a=blue", vals("a", lv("red", "blue"))},
		{"x:{?k*}", "x:?r=1&b=2", vals("k", pv("r", "1", "b", "2"))},
		{"t://teams/{team*}/notes", "t://teams/red,blue/notes", vals("team", lv("red", "blue"))},
	})
}

func TestMatchMultipleVariables(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"x:{a,b}", "x:1,2", vals("a", "1", "b", "2")},
		{"x:{a,b}", "x:1", vals("a", "1")},
		{"x:{a,b}", "x:1,", vals("a", "1", "b", "")},
		{"x:{a,b}", "x:,2", vals("a", "", "b", "2")},
		// The last variable takes the rest, which must hold no more
		// ',': a variable not exploded matches no list.
		{"x:{a,b}", "x:1,2,3", noMatch},
		{"x:{a,b}", "x:1,2%2C3", vals("a", "1", "b", "2,3")},
		{"x:{a,b,c}", "x:%2C,%2C,%2C", vals("a", ",", "b", ",", "c", ",")},
		{"x:{.a,b}", "x:.1.2", vals("a", "1", "b", "2")},
		{"x:{.a,b}", "x:.1", vals("a", "1")},
		// '.' is unreserved, never encoded: the last variable's value
		// may hold it.
		{"x:{.a,b}", "x:.1.2.3", vals("a", "1", "b", "2.3")},
		{"file{.ext}", "file.tar.gz", vals("ext", "tar.gz")},
		{"x:{.a}", "x:.1,2", noMatch},
		{"x:{/a,b}", "x:/1/2", vals("a", "1", "b", "2")},
		{"x:{/a,b}", "x:/1", vals("a", "1")},
		{"x:{/a,b}", "x:/1/", vals("a", "1", "b", "")},
		{"x:{/a,b}", "x:/1,2/3", noMatch},
		{"x:{x,hello,y}", "x:1024,Hello%20World%21,768", vals("x", "1024", "hello", "Hello World!", "y", "768")},
		{"x:{a}{/b,c,d}{?g,h}{&i,j}{#e,f}", "x:1/2/3/4?h=8&g=7&j=10&i=9#5,6",
			vals("a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6", "g", "7", "h", "8", "i", "9", "j", "10")},
	})
}

// TestMatchUndefinedBesidePrefix checks that expansions that leave out
// a variable next to one with a prefix modifier match back to values that
// expand to them again (issue 22, point 1): expansion drops an undefined
// variable with its separator, so the items of {/a:4,b} need not be a's
// first, and {.…} leaves its separator unencoded in a value, so the
// items need not be one a variable.
func TestMatchUndefinedBesidePrefix(t *testing.T) {
	for _, c := range []struct {
		template string
		vars     map[string]uritemplate.Value // expanded with ExpandURI
		uri      string                       // the expansion
		want     map[string]uritemplate.Value // Match's values
	}{
		{"x://{/a:4,b}", vals("b", "hello"), "x:///hello", vals("b", "hello")},
		{"x://{a:3,b}", vals("b", "hello"), "x://hello", vals("b", "hello")},
		{"x://{.b,a:2}", vals("a", "é", "b", "x.y"), "x://.x.y.%C3%A9", vals("a", "é", "b", "x.y")},
		// Any variable may be the one left out.
		{"x://{/a:1,b,c:1}", vals("b", "hello"), "x:///hello", vals("b", "hello")},
		{"x://{/a:1,b,c:1}", vals("a", "h", "b", "hello"), "x:///h/hello", vals("a", "h", "b", "hello")},
		{"x://{/a:1,b:1,c}", vals("c", "hello"), "x:///hello", vals("c", "hello")},
		{"x://{a:2,b:2,c:2}", vals("c", "cc"), "x://cc", vals("a", "cc")},
		{"x://{+a:2,b}", vals("b", "x,y"), "x://x,y", vals("a", "x", "b", "y")},
		{"x://{+a:2,b}", vals("b", "xyz,w"), "x://xyz,w", vals("b", "xyz,w")},
		{"x://{#a:1,b:3}", vals("a", "x", "b", "y,z"), "x://#x,y,z", vals("a", "x", "b", "y,z")},
		{"x://{.a:1,b:1}", vals("a", "."), "x://..", vals("a", "", "b", "")},
		{"x://{.a,b:2}", vals("a", "x.y.z", "b", "é"), "x://.x.y.z.%C3%A9", vals("a", "x.y.z", "b", "é")},
		// An exploded variable takes as many items as the others leave.
		{"x://{/a:1,b*}", vals("b", lv("xy", "z")), "x:///xy/z", vals("b", lv("xy", "z"))},
	} {
		tmpl := uritemplate.MustParse(c.template)
		uri, err := tmpl.ExpandURI(c.vars)
		require.NoError(t, err)
		require.Equal(t, c.uri, uri, "%s expands %v", c.template, c.vars)
		m, ok := tmpl.Match(uri)
		if !assert.True(t, ok, "%s must match %q", c.template, uri) {
			continue
		}
		assert.Equal(t, c.want, m.Map(), "%s matching %q", c.template, uri)
		back, err := tmpl.ExpandURI(m.Map())
		assert.NoError(t, err)
		assert.Equal(t, uri, back, "%s: the values %q matches to", c.template, uri)
	}
	// A prefix modifier still bounds the value where no variable is
	// left out.
	runMatchCases(t, []matchCase{
		{"x://{/a:4,b}", "x:///hello/x", noMatch},
		{"x://{a:3,b}", "x://hello,x", noMatch},
		{"x://{.b:1,a:2}", "x://.x.y.%C3%A9", noMatch},
	})
}

// TestMatchRepeatedUndefined checks that a variable the template uses
// more than once is defined, with one value, in every use or in none,
// as in any expansion (issue 22, point 2).
func TestMatchRepeatedUndefined(t *testing.T) {
	runMatchCases(t, []matchCase{
		{"x://{a}{?a}", "x://1", noMatch},
		{"x://{a}{?a}", "x://1?a=1", vals("a", "1")},
		{"x://{a}{?a}", "x://?a=", vals("a", "")},
		{"x://{a}{?a}", "x://", vals()},
		{"x://{a}{?a}", "x://?a=1", noMatch},
		{"x://{/a}{/a}", "x:///v", noMatch},
		{"x://{/a}{/a}", "x:///v/v", vals("a", "v")},
		{"x://{/a,b}{?a}", "x:///v", vals("b", "v")},
		{"x://{/a,b}{?a}", "x:///v?a=v", vals("a", "v")},
		{"x://{/a,b}{?a}", "x:///v/w?a=v", vals("a", "v", "b", "w")},
		{"x://{/a,b}{?a}", "x:///v/w", noMatch},
		{"x://{/a,a}", "x:///v", noMatch},
		{"x://{/a,a}", "x:///v/v", vals("a", "v")},
		{"x://{a:2}{/a}", "x://he/hello", vals("a", "hello")},
		{"x://{a:2}{/a}", "x://he", noMatch},
		{"x://{a:2}{/a}", "x:///hello", noMatch},
		{"x://{;a}{?a*}", "x://;a=1", noMatch},
		{"x://{;a}{?a*}", "x://;a=1?a=1", vals("a", "1")},
		// A's value here is in the path, but {?a:2} leaves it out, so
		// the path is b's.
		{"file:///b{/a,b*}{?a:2}", "file:///b/%3D/a%2Cb", vals("b", lv("=", "a,b"))},
		{"file:///b{/a,b*}{?a:2}{/q}", "file:///b/%3D/a%2Cb", vals("b", lv("=", "a,b"))},
		{"file:///b{/a,b*}{?a:2}{/q}", "file:///b/%3D/a%2Cb?a=%3D", vals("a", "=", "b", lv("a,b"))},
	})
}

// TestMatchRepeatedForms checks variables used more than once in forms
// that write one value differently, each from a case FuzzRouter found:
// every URI is an expansion of the values given, which match back to
// values that expand to it.
func TestMatchRepeatedForms(t *testing.T) {
	runMatchCases(t, []matchCase{
		// A variable with a prefix modifier is a String, which an
		// exploded use writes as one not exploded does.
		{"x://{b:1,a:1,a*}a", "x://v,va", vals("a", "v")},
		{"x:{a:1}{/a*}", "x:v/v", vals("a", "v")},
		{"x:{a:1}{/a*}", "x:v/v/w", noMatch},
		// So is a variable used not exploded, whose ',' {+b*} leaves
		// unencoded.
		{"x://{b}{+b*,a}", "x://%3D-a%2Cb=-a,b", vals("b", "=-a,b")},
		{"x://{b}{+b*,a}", "x://%3D=,=-a,b", vals("b", "=", "a", "=-a,b")},
		// {.a*} and {+a*} may split a value where it holds their
		// separator: the other use tells where the value's items end.
		{"x://{.a*}/{/a*}", "x://.x.y//x.y", vals("a", lv("x.y"))},
		{"x://{.a*}/{/a*}", "x://.x.y//x/y", vals("a", lv("x", "y"))},
		{"x://{.a*}/{+a*}", "x://.x%2Cy.z/x,y.z", vals("a", lv("x,y.z"))},
		{"x://{.a*}/{+a*}", "x://.x.y/x,y", vals("a", lv("x", "y"))},
		{"x://{.a*}/{+a*}", "x://.x.y/x,z", noMatch},
		// {+c*} leaves '=' unencoded in a List's item, which would read
		// as a pair.
		{"x://{/c*}{+c*}", "x:///%3D=", vals("c", lv("="))},
		// A name used twice in one named expression has an item for
		// each use, in turn.
		{"x://{;a:1,a}", "x://;a=5;a=50%25", vals("a", "50%")},
		{"x://{;a:1,a}", "x://;a=5;a=6", noMatch},
		{"x://{?a*,a}", "x://?a=v&a=v", vals("a", "v")},
		{"x://{?k*}{&k*}", "x://?K=1&K=1", vals("k", pv("K", "1"))},
		{"x://{?k*}{&k*}", "x://?K=1", noMatch},
		// What ExpandURI writes first: it encodes the '#' of a value
		// of {#b}, so x://#v# is b "v" and f "", not b "v#".
		{"x://{#b:4}{#f}", "x://#v#", vals("b", "v", "f", "")},
		{"x://{#b:4}{#f}", "x://#v%23", vals("b", "v#")},
	})
}

func TestMatchDecoding(t *testing.T) {
	runMatchCases(t, []matchCase{
		// Exactly once.
		{"x:{a}", "x:%2520", vals("a", "%20")},
		{"x:{a}", "x:%25", vals("a", "%")},
		{"x:{+a}", "x:%252F", vals("a", "%2F")},
		{"x:{/a*}", "x:/%2541/%25", vals("a", lv("%41", "%"))},
		{"x:{?a}", "x:?a=%2526", vals("a", "%26")},
		// UTF-8, any case of hex digit.
		{"x:{a}", "x:%C3%A9", vals("a", "é")},
		{"x:{a}", "x:%c3%a9", vals("a", "é")},
		{"x:{a}", "x:%F0%9F%98%80", vals("a", "😀")},
		{"x:{a}", "x:%00", vals("a", "\x00")},
		// Invalid escapes.
		{"x:{a}", "x:%zz", noMatch},
		{"x:{a}", "x:%2", noMatch},
		{"x:{a}", "x:abc%", noMatch},
		{"x:{a}", "x:%%41", noMatch},
		{"x:{a}", "x:%4g", noMatch},
		{"x:{+a}", "x:/%2", noMatch},
		{"x:{?a}", "x:?a=%2", noMatch},
		// Invalid UTF-8.
		{"x:{a}", "x:%FF", noMatch},
		{"x:{a}", "x:%C3%28", noMatch},
		{"x:{a}", "x:%C3", noMatch},
		{"x:{a}", "x:%ED%A0%80", noMatch}, // a surrogate
		{"x:{a}", "x:%C0%AF", noMatch},    // overlong
		{"x:{a}", "x:a,%FF", noMatch},
		{"x:{/a*}", "x:/a/%FF", noMatch},
		{"x:{/k*}", "x:/%FF=1", noMatch},
		{"x:{/k*}", "x:/a=%FF", noMatch},
		{"x:{#a}", "x:#%C3%28", noMatch},
		// Raw bytes that are not URI characters.
		{"x:{a}", "x:\xff", noMatch},
		{"x:{+a}", "x:\xc3\xa9", noMatch},
	})
}

// TestMatchRoundTrip expands values with every operator, with ExpandURI,
// and checks Match gives them back: values with characters each operator
// encodes or not.
func TestMatchRoundTrip(t *testing.T) {
	values := []string{"a", "O'Brien", "a b", "50%", "%41", "caf\u00e9", "中文", "😀", "a/b", "a?b#c", "a,b", "a=b&c", "a;b", "a.b", "-._~", ":@!$'()*+", "\x00\x7f", "%2520"}
	for _, template := range []string{"x:{v}", "x:{v}/z", "x:{/v}", "x:{/v}/z", "x:{;v}", "x:{?v}", "x:{&v}", "x:{v}{?w}", "x:{;v}{#w}", "x:{.v}", "x:{.v}/z"} {
		tmpl := uritemplate.MustParse(template)
		for _, v := range values {
			in := vals("v", v, "w", v)
			uri, err := tmpl.ExpandURI(in)
			require.NoError(t, err)
			m, ok := tmpl.Match(uri)
			if assert.True(t, ok, "%s: %q", template, uri) {
				for _, name := range tmpl.Varnames() {
					assert.Equal(t, v, m.Get(name), "%s: %q", template, uri)
				}
			}
		}
	}
	// {+v} and {#v} leave reserved characters unencoded: they take ',' as
	// their own; ExpandURI encodes '?' and '#', which belong to a later
	// {?w}.
	for _, template := range []string{"x:{+v}", "x:{#v}", "x:{+v}{?w}"} {
		tmpl := uritemplate.MustParse(template)
		for _, v := range values {
			uri, err := tmpl.ExpandURI(vals("v", v, "w", v))
			require.NoError(t, err)
			m, ok := tmpl.Match(uri)
			if assert.True(t, ok, "%s: %q", template, uri) {
				assert.Equal(t, v, m.Get("v"), "%s: %q", template, uri)
			}
		}
	}
}

// Expand lets a pct-encoded triplet through in reserved expansion, as RFC
// 6570 §3.2.3 says, and Match decodes it; ExpandURI encodes the '%'.
func TestReservedTriplets(t *testing.T) {
	for _, c := range []struct{ template, value, expand, expandURI, match string }{
		{"x:{+v}", "admin%2F", "x:admin%2F", "x:admin%252F", "admin/"},
		{"x:{#v}", "%41%c3%A9", "x:#%41%c3%A9", "x:#%2541%25c3%25A9", "Aé"},
		{"x:{+v}", "50%", "x:50%25", "x:50%25", "50%"},
		{"x:{+v}", "%4", "x:%254", "x:%254", "%4"},
		{"x:{v}", "%41", "x:%2541", "x:%2541", "%41"},
	} {
		tmpl := uritemplate.MustParse(c.template)
		got, err := tmpl.Expand(vals("v", c.value))
		require.NoError(t, err)
		assert.Equal(t, c.expand, got, "%s Expand %q", c.template, c.value)
		got, err = tmpl.ExpandURI(vals("v", c.value))
		require.NoError(t, err)
		assert.Equal(t, c.expandURI, got, "%s ExpandURI %q", c.template, c.value)
		if m, ok := tmpl.Match(got); assert.True(t, ok, got) {
			assert.Equal(t, c.value, m.Get("v"), "%s: Match(ExpandURI)", c.template)
		}
		if m, ok := tmpl.Match(c.expand); assert.True(t, ok, c.expand) {
			assert.Equal(t, c.match, m.Get("v"), "%s: Match(Expand)", c.template)
		}
	}
}

// TestMatchPathological runs templates that would make a naive
// backtracking matcher take exponential time, with URIs that hold the
// literals they need (so that the quick check does not reject them) yet
// do not match; the test's time limit is the real check.
func TestMatchPathological(t *testing.T) {
	long := strings.Repeat("a", 1000)
	for _, c := range []struct {
		template, uri string
		ok            bool
	}{
		{"x:{a}{b}{c}{d}{e}{f}{g}{h}/", "x:" + long + "//", false},
		{"x:{a}{b}{c}{d}{e}{f}{g}{h}/", "x:" + long + "/", true},
		{"x:{+a}{+b}{+c}{+d}/{+e}!", "x:" + strings.Repeat("a/", 500) + " !", false},
		{"x:{/a*}{/b*}{/c*}{?d}{.e}!", "x:" + strings.Repeat("/a", 500) + "!#!", false},
		{"x:{/a*}{/b*}{/c*}!", "x:" + strings.Repeat("/a=b", 250) + "?!", false},
		{"x:{?a*}{&b*}{#c}!", "x:?" + strings.Repeat("a=b&", 250) + "#\\!", false},
		// With a variable used twice, the rest of the template depends on
		// what was bound before: Match gives up after a bounded number
		// of tries, long before this URI needs.
		{"x:{a}{b}{a}{b}", "x:" + strings.Repeat("ab", 10), true},
		{"x:{a}{b}{a}{b}", "x:" + strings.Repeat("ab", 500), false},
		{"x:{a}{b}{c}{d}{a}/", "x:" + long + "//", false},
		// Several variables of one expression may take its items in
		// many ways: Match tries them without trying each anew for
		// every split.
		{"x:{.a,b:1}{c}!", "x:" + strings.Repeat(".a", 2000) + "/!", false},
		{"x:{.a,b:1}{c}!", "x:" + strings.Repeat(".a", 2000) + "!", true},
		{"x:{.a,b,c,d,e,f,g,h:1}!", "x:" + strings.Repeat(".a", 2000) + ".%!", false},
		{"x:{+a,b:2}{c}!", "x:" + strings.Repeat(",a", 2000) + "/!", true},
		{"x:{/a,b,c,d}{/a,b}{?a}", "x:" + strings.Repeat("/a", 2000) + "?a=b", false},
	} {
		_, ok := uritemplate.MustParse(c.template).Match(c.uri)
		assert.Equal(t, c.ok, ok, c.template)
	}
}
