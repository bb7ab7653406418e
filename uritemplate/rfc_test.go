package uritemplate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpres/mcpres/uritemplate"
)

// Short constructors for the test tables.
func sv(s string) uritemplate.Value     { return uritemplate.StringValue(s) }
func lv(s ...string) uritemplate.Value  { return uritemplate.ListValue(s...) }
func pv(kv ...string) uritemplate.Value { return uritemplate.PairsValue(kv...) }
func vals(kv ...any) map[string]uritemplate.Value {
	m := make(map[string]uritemplate.Value, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case string:
			m[kv[i].(string)] = sv(v)
		case uritemplate.Value:
			m[kv[i].(string)] = v
		}
	}
	return m
}

// rfcVars are the variables of RFC 6570, section 3.2 (section 1.2 uses a
// subset of them, with the same values). undef is left out: undefined.
var rfcVars = map[string]uritemplate.Value{
	"count":      lv("one", "two", "three"),
	"dom":        lv("example", "com"),
	"dub":        sv("me/too"),
	"hello":      sv("Hello World!"),
	"half":       sv("50%"),
	"var":        sv("value"),
	"who":        sv("fred"),
	"base":       sv("http://example.com/home/"),
	"path":       sv("/foo/bar"),
	"list":       lv("red", "green", "blue"),
	"keys":       pv("semi", ";", "dot", ".", "comma", ","),
	"v":          sv("6"),
	"x":          sv("1024"),
	"y":          sv("768"),
	"empty":      sv(""),
	"empty_keys": pv(), // an empty associative array: undefined
}

type rfcCase struct {
	section  string
	template string
	want     string // the expansion with rfcVars, as the RFC gives it
	// matched, if not nil, is what Match gives back where it cannot be
	// rfcVars restricted to the template's defined variables; why says
	// why.
	matched map[string]uritemplate.Value
	why     string
	// notPreimage is set where the matched values do not even expand back
	// to want.
	notPreimage bool
	// noMatch is set where Match must not match want at all; why says
	// why.
	noMatch bool
}

var rfcCases = []rfcCase{
	// Section 1.2, level 1.
	{section: "1.2", template: "{var}", want: "value"},
	{section: "1.2", template: "{hello}", want: "Hello%20World%21"},
	// Level 2.
	{section: "1.2", template: "{+var}", want: "value"},
	{section: "1.2", template: "{+hello}", want: "Hello%20World!"},
	{section: "1.2", template: "{+path}/here", want: "/foo/bar/here"},
	{section: "1.2", template: "here?ref={+path}", want: "here?ref=/foo/bar"},
	{section: "1.2", template: "X{#var}", want: "X#value"},
	{section: "1.2", template: "X{#hello}", want: "X#Hello%20World!"},
	// Level 3.
	{section: "1.2", template: "map?{x,y}", want: "map?1024,768"},
	{section: "1.2", template: "{x,hello,y}", want: "1024,Hello%20World%21,768"},
	{section: "1.2", template: "{+x,hello,y}", want: "1024,Hello%20World!,768"},
	{section: "1.2", template: "{+path,x}/here", want: "/foo/bar,1024/here"},
	{section: "1.2", template: "{#x,hello,y}", want: "#1024,Hello%20World!,768"},
	{section: "1.2", template: "{#path,x}/here", want: "#/foo/bar,1024/here"},
	{section: "1.2", template: "X{.var}", want: "X.value"},
	{section: "1.2", template: "X{.x,y}", want: "X.1024.768"},
	{section: "1.2", template: "{/var}", want: "/value"},
	{section: "1.2", template: "{/var,x}/here", want: "/value/1024/here"},
	{section: "1.2", template: "{;x,y}", want: ";x=1024;y=768"},
	{section: "1.2", template: "{;x,y,empty}", want: ";x=1024;y=768;empty"},
	{section: "1.2", template: "{?x,y}", want: "?x=1024&y=768"},
	{section: "1.2", template: "{?x,y,empty}", want: "?x=1024&y=768&empty="},
	{section: "1.2", template: "?fixed=yes{&x}", want: "?fixed=yes&x=1024"},
	{section: "1.2", template: "{&x,y,empty}", want: "&x=1024&y=768&empty="},
	// Level 4.
	{section: "1.2", template: "{var:3}", want: "val", matched: vals("var", "val"), why: prefixWhy},
	{section: "1.2", template: "{var:30}", want: "value"},
	{section: "1.2", template: "{list}", want: "red,green,blue", noMatch: true, why: listWhy},
	{section: "1.2", template: "{list*}", want: "red,green,blue"},
	{section: "1.2", template: "{keys}", want: "semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "1.2", template: "{keys*}", want: "semi=%3B,dot=.,comma=%2C"},
	{section: "1.2", template: "{+path:6}/here", want: "/foo/b/here", matched: vals("path", "/foo/b"), why: prefixWhy},
	{section: "1.2", template: "{+list}", want: "red,green,blue", matched: vals("list", "red,green,blue"), why: reservedListWhy},
	{section: "1.2", template: "{+list*}", want: "red,green,blue"},
	{section: "1.2", template: "{+keys}", want: "semi,;,dot,.,comma,,", matched: vals("keys", "semi,;,dot,.,comma,,"), why: reservedListWhy},
	{section: "1.2", template: "{+keys*}", want: "semi=;,dot=.,comma=,", matched: vals("keys", reservedKeysExploded), why: reservedKeysWhy},
	{section: "1.2", template: "{#path:6}/here", want: "#/foo/b/here", matched: vals("path", "/foo/b"), why: prefixWhy},
	{section: "1.2", template: "{#list}", want: "#red,green,blue", matched: vals("list", "red,green,blue"), why: reservedListWhy},
	{section: "1.2", template: "{#list*}", want: "#red,green,blue"},
	{section: "1.2", template: "{#keys}", want: "#semi,;,dot,.,comma,,", matched: vals("keys", "semi,;,dot,.,comma,,"), why: reservedListWhy},
	{section: "1.2", template: "{#keys*}", want: "#semi=;,dot=.,comma=,", matched: vals("keys", reservedKeysExploded), why: reservedKeysWhy},
	{section: "1.2", template: "X{.var:3}", want: "X.val", matched: vals("var", "val"), why: prefixWhy},
	{section: "1.2", template: "X{.list}", want: "X.red,green,blue", noMatch: true, why: listWhy},
	{section: "1.2", template: "X{.list*}", want: "X.red.green.blue"},
	{section: "1.2", template: "X{.keys}", want: "X.semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "1.2", template: "X{.keys*}", want: "X.semi=%3B.dot=..comma=%2C", matched: vals("keys", dotKeysExploded), why: dotKeysWhy, notPreimage: true},
	{section: "1.2", template: "{/var:1,var}", want: "/v/value"},
	{section: "1.2", template: "{/list}", want: "/red,green,blue", noMatch: true, why: listWhy},
	{section: "1.2", template: "{/list*}", want: "/red/green/blue"},
	{section: "1.2", template: "{/list*,path:4}", want: "/red/green/blue/%2Ffoo", matched: vals("list", rfcVars["list"], "path", "/foo"), why: prefixWhy},
	{section: "1.2", template: "{/keys}", want: "/semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "1.2", template: "{/keys*}", want: "/semi=%3B/dot=./comma=%2C"},
	{section: "1.2", template: "{;hello:5}", want: ";hello=Hello", matched: vals("hello", "Hello"), why: prefixWhy},
	{section: "1.2", template: "{;list}", want: ";list=red,green,blue", noMatch: true, why: listWhy},
	{section: "1.2", template: "{;list*}", want: ";list=red;list=green;list=blue"},
	{section: "1.2", template: "{;keys}", want: ";keys=semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "1.2", template: "{;keys*}", want: ";semi=%3B;dot=.;comma=%2C"},
	{section: "1.2", template: "{?var:3}", want: "?var=val", matched: vals("var", "val"), why: prefixWhy},
	{section: "1.2", template: "{?list}", want: "?list=red,green,blue", noMatch: true, why: listWhy},
	{section: "1.2", template: "{?list*}", want: "?list=red&list=green&list=blue"},
	{section: "1.2", template: "{?keys}", want: "?keys=semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "1.2", template: "{?keys*}", want: "?semi=%3B&dot=.&comma=%2C"},
	{section: "1.2", template: "{&var:3}", want: "&var=val", matched: vals("var", "val"), why: prefixWhy},
	{section: "1.2", template: "{&list}", want: "&list=red,green,blue", noMatch: true, why: listWhy},
	{section: "1.2", template: "{&list*}", want: "&list=red&list=green&list=blue"},
	{section: "1.2", template: "{&keys}", want: "&keys=semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "1.2", template: "{&keys*}", want: "&semi=%3B&dot=.&comma=%2C"},

	// Section 3.2.1, variable expansion.
	{section: "3.2.1", template: "{count}", want: "one,two,three", noMatch: true, why: listWhy},
	{section: "3.2.1", template: "{count*}", want: "one,two,three"},
	{section: "3.2.1", template: "{/count}", want: "/one,two,three", noMatch: true, why: listWhy},
	{section: "3.2.1", template: "{/count*}", want: "/one/two/three"},
	{section: "3.2.1", template: "{;count}", want: ";count=one,two,three", noMatch: true, why: listWhy},
	{section: "3.2.1", template: "{;count*}", want: ";count=one;count=two;count=three"},
	{section: "3.2.1", template: "{?count}", want: "?count=one,two,three", noMatch: true, why: listWhy},
	{section: "3.2.1", template: "{?count*}", want: "?count=one&count=two&count=three"},
	{section: "3.2.1", template: "{&count*}", want: "&count=one&count=two&count=three"},

	// Section 3.2.2, simple string expansion.
	{section: "3.2.2", template: "{var}", want: "value"},
	{section: "3.2.2", template: "{hello}", want: "Hello%20World%21"},
	{section: "3.2.2", template: "{half}", want: "50%25"},
	{section: "3.2.2", template: "O{empty}X", want: "OX"},
	{section: "3.2.2", template: "O{undef}X", want: "OX", matched: vals("undef", ""), why: undefWhy},
	{section: "3.2.2", template: "{x,y}", want: "1024,768"},
	{section: "3.2.2", template: "{x,hello,y}", want: "1024,Hello%20World%21,768"},
	{section: "3.2.2", template: "?{x,empty}", want: "?1024,"},
	{section: "3.2.2", template: "?{x,undef}", want: "?1024"},
	{section: "3.2.2", template: "?{undef,y}", want: "?768", matched: vals("undef", "768"), why: positionalWhy},
	{section: "3.2.2", template: "{var:3}", want: "val", matched: vals("var", "val"), why: prefixWhy},
	{section: "3.2.2", template: "{var:30}", want: "value"},
	{section: "3.2.2", template: "{list}", want: "red,green,blue", noMatch: true, why: listWhy},
	{section: "3.2.2", template: "{list*}", want: "red,green,blue"},
	{section: "3.2.2", template: "{keys}", want: "semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "3.2.2", template: "{keys*}", want: "semi=%3B,dot=.,comma=%2C"},

	// Section 3.2.3, reserved expansion.
	{section: "3.2.3", template: "{+var}", want: "value"},
	{section: "3.2.3", template: "{+hello}", want: "Hello%20World!"},
	{section: "3.2.3", template: "{+half}", want: "50%25"},
	{section: "3.2.3", template: "{base}index", want: "http%3A%2F%2Fexample.com%2Fhome%2Findex"},
	{section: "3.2.3", template: "{+base}index", want: "http://example.com/home/index"},
	{section: "3.2.3", template: "O{+empty}X", want: "OX"},
	{section: "3.2.3", template: "O{+undef}X", want: "OX", matched: vals("undef", ""), why: undefWhy},
	{section: "3.2.3", template: "{+path}/here", want: "/foo/bar/here"},
	{section: "3.2.3", template: "here?ref={+path}", want: "here?ref=/foo/bar"},
	// Two expressions side by side, both able to hold "value": the
	// earlier takes the longest run that lets the rest match, leaving
	// var empty. The split is a valid one: it expands back to the URI.
	{section: "3.2.3", template: "up{+path}{var}/here", want: "up/foo/barvalue/here", matched: vals("path", "/foo/barvalue", "var", ""), why: "greedy"},
	{section: "3.2.3", template: "{+x,hello,y}", want: "1024,Hello%20World!,768"},
	{section: "3.2.3", template: "{+path,x}/here", want: "/foo/bar,1024/here"},
	{section: "3.2.3", template: "{+path:6}/here", want: "/foo/b/here", matched: vals("path", "/foo/b"), why: prefixWhy},
	{section: "3.2.3", template: "{+list}", want: "red,green,blue", matched: vals("list", "red,green,blue"), why: reservedListWhy},
	{section: "3.2.3", template: "{+list*}", want: "red,green,blue"},
	{section: "3.2.3", template: "{+keys}", want: "semi,;,dot,.,comma,,", matched: vals("keys", "semi,;,dot,.,comma,,"), why: reservedListWhy},
	{section: "3.2.3", template: "{+keys*}", want: "semi=;,dot=.,comma=,", matched: vals("keys", reservedKeysExploded), why: reservedKeysWhy},

	// Section 3.2.4, fragment expansion.
	{section: "3.2.4", template: "{#var}", want: "#value"},
	{section: "3.2.4", template: "{#hello}", want: "#Hello%20World!"},
	{section: "3.2.4", template: "{#half}", want: "#50%25"},
	{section: "3.2.4", template: "foo{#empty}", want: "foo#"},
	{section: "3.2.4", template: "foo{#undef}", want: "foo"},
	{section: "3.2.4", template: "{#x,hello,y}", want: "#1024,Hello%20World!,768"},
	{section: "3.2.4", template: "{#path,x}/here", want: "#/foo/bar,1024/here"},
	{section: "3.2.4", template: "{#path:6}/here", want: "#/foo/b/here", matched: vals("path", "/foo/b"), why: prefixWhy},
	{section: "3.2.4", template: "{#list}", want: "#red,green,blue", matched: vals("list", "red,green,blue"), why: reservedListWhy},
	{section: "3.2.4", template: "{#list*}", want: "#red,green,blue"},
	{section: "3.2.4", template: "{#keys}", want: "#semi,;,dot,.,comma,,", matched: vals("keys", "semi,;,dot,.,comma,,"), why: reservedListWhy},
	{section: "3.2.4", template: "{#keys*}", want: "#semi=;,dot=.,comma=,", matched: vals("keys", reservedKeysExploded), why: reservedKeysWhy},

	// Section 3.2.5, label expansion with dot-prefix.
	{section: "3.2.5", template: "{.who}", want: ".fred"},
	{section: "3.2.5", template: "{.who,who}", want: ".fred.fred"},
	{section: "3.2.5", template: "{.half,who}", want: ".50%25.fred"},
	{section: "3.2.5", template: "www{.dom*}", want: "www.example.com"},
	{section: "3.2.5", template: "X{.var}", want: "X.value"},
	{section: "3.2.5", template: "X{.empty}", want: "X."},
	{section: "3.2.5", template: "X{.undef}", want: "X"},
	{section: "3.2.5", template: "X{.var:3}", want: "X.val", matched: vals("var", "val"), why: prefixWhy},
	{section: "3.2.5", template: "X{.list}", want: "X.red,green,blue", noMatch: true, why: listWhy},
	{section: "3.2.5", template: "X{.list*}", want: "X.red.green.blue"},
	{section: "3.2.5", template: "X{.keys}", want: "X.semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "3.2.5", template: "X{.keys*}", want: "X.semi=%3B.dot=..comma=%2C", matched: vals("keys", dotKeysExploded), why: dotKeysWhy, notPreimage: true},
	{section: "3.2.5", template: "X{.empty_keys}", want: "X"},
	{section: "3.2.5", template: "X{.empty_keys*}", want: "X"},

	// Section 3.2.6, path segment expansion.
	{section: "3.2.6", template: "{/who}", want: "/fred"},
	{section: "3.2.6", template: "{/who,who}", want: "/fred/fred"},
	{section: "3.2.6", template: "{/half,who}", want: "/50%25/fred"},
	{section: "3.2.6", template: "{/who,dub}", want: "/fred/me%2Ftoo"},
	{section: "3.2.6", template: "{/var}", want: "/value"},
	{section: "3.2.6", template: "{/var,empty}", want: "/value/"},
	{section: "3.2.6", template: "{/var,undef}", want: "/value"},
	{section: "3.2.6", template: "{/var,x}/here", want: "/value/1024/here"},
	{section: "3.2.6", template: "{/var:1,var}", want: "/v/value"},
	{section: "3.2.6", template: "{/list}", want: "/red,green,blue", noMatch: true, why: listWhy},
	{section: "3.2.6", template: "{/list*}", want: "/red/green/blue"},
	{section: "3.2.6", template: "{/list*,path:4}", want: "/red/green/blue/%2Ffoo", matched: vals("list", rfcVars["list"], "path", "/foo"), why: prefixWhy},
	{section: "3.2.6", template: "{/keys}", want: "/semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "3.2.6", template: "{/keys*}", want: "/semi=%3B/dot=./comma=%2C"},

	// Section 3.2.7, path-style parameter expansion.
	{section: "3.2.7", template: "{;who}", want: ";who=fred"},
	{section: "3.2.7", template: "{;half}", want: ";half=50%25"},
	{section: "3.2.7", template: "{;empty}", want: ";empty"},
	{section: "3.2.7", template: "{;v,empty,who}", want: ";v=6;empty;who=fred"},
	{section: "3.2.7", template: "{;v,bar,who}", want: ";v=6;who=fred"},
	{section: "3.2.7", template: "{;x,y}", want: ";x=1024;y=768"},
	{section: "3.2.7", template: "{;x,y,empty}", want: ";x=1024;y=768;empty"},
	{section: "3.2.7", template: "{;x,y,undef}", want: ";x=1024;y=768"},
	{section: "3.2.7", template: "{;hello:5}", want: ";hello=Hello", matched: vals("hello", "Hello"), why: prefixWhy},
	{section: "3.2.7", template: "{;list}", want: ";list=red,green,blue", noMatch: true, why: listWhy},
	{section: "3.2.7", template: "{;list*}", want: ";list=red;list=green;list=blue"},
	{section: "3.2.7", template: "{;keys}", want: ";keys=semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "3.2.7", template: "{;keys*}", want: ";semi=%3B;dot=.;comma=%2C"},

	// Section 3.2.8, form-style query expansion.
	{section: "3.2.8", template: "{?who}", want: "?who=fred"},
	{section: "3.2.8", template: "{?half}", want: "?half=50%25"},
	{section: "3.2.8", template: "{?x,y}", want: "?x=1024&y=768"},
	{section: "3.2.8", template: "{?x,y,empty}", want: "?x=1024&y=768&empty="},
	{section: "3.2.8", template: "{?x,y,undef}", want: "?x=1024&y=768"},
	{section: "3.2.8", template: "{?var:3}", want: "?var=val", matched: vals("var", "val"), why: prefixWhy},
	{section: "3.2.8", template: "{?list}", want: "?list=red,green,blue", noMatch: true, why: listWhy},
	{section: "3.2.8", template: "{?list*}", want: "?list=red&list=green&list=blue"},
	{section: "3.2.8", template: "{?keys}", want: "?keys=semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "3.2.8", template: "{?keys*}", want: "?semi=%3B&dot=.&comma=%2C"},

	// Section 3.2.9, form-style query continuation.
	{section: "3.2.9", template: "{&who}", want: "&who=fred"},
	{section: "3.2.9", template: "{&half}", want: "&half=50%25"},
	{section: "3.2.9", template: "?fixed=yes{&x}", want: "?fixed=yes&x=1024"},
	{section: "3.2.9", template: "{&x,y,empty}", want: "&x=1024&y=768&empty="},
	{section: "3.2.9", template: "{&var:3}", want: "&var=val", matched: vals("var", "val"), why: prefixWhy},
	{section: "3.2.9", template: "{&list}", want: "&list=red,green,blue", noMatch: true, why: listWhy},
	{section: "3.2.9", template: "{&list*}", want: "&list=red&list=green&list=blue"},
	{section: "3.2.9", template: "{&keys}", want: "&keys=semi,%3B,dot,.,comma,%2C", noMatch: true, why: listWhy},
	{section: "3.2.9", template: "{&keys*}", want: "&semi=%3B&dot=.&comma=%2C"},
}

// Why some matched values differ from rfcVars: expansion loses what would
// tell them apart.
const (
	// A prefix modifier drops the rest of the value: the match holds only
	// what the URI does.
	prefixWhy = "prefix"
	// A list, or an associative array, given to a variable not exploded
	// expands to its items joined by unencoded ','s; a variable not
	// exploded matches scalars only, and a ',' that expansion would have
	// encoded in a string makes the URI not match (see the package doc,
	// Lists and scalars). The expansion is still the RFC's.
	listWhy = "list in a variable not exploded"
	// {+keys*} and {#keys*} leave the ',' of the value "," unencoded, so
	// it reads as one more separator: an item "comma=" and an empty item,
	// which is not a key=value pair, so the items are a List, not Pairs.
	reservedKeysWhy = "reserved keys"
	// {+x} and {#x} take ',' as part of one string (a file name may hold
	// one; expansion leaves ',' as is): a list or an associative array
	// given to one comes back as that string.
	reservedListWhy = "reserved list"
	// {.keys*} leaves the '.' of the value "." unencoded (it is
	// unreserved), so "dot=." reads as "dot=" and an empty item; with an
	// item that is not key=value the items are a List, and a List of
	// items holding '=' expands with '=' encoded: not back to the URI.
	dotKeysWhy = "dot keys"
	// An undefined variable expands as the empty string does, and {x}
	// matches the empty string as "".
	undefWhy = "undefined"
	// Variables in one expression are matched in order: with undef
	// undefined, "768" is the first item and goes to undef.
	positionalWhy = "positional"
)

var (
	reservedKeysExploded = lv("semi=;", "dot=.", "comma=", "")
	dotKeysExploded      = lv("semi=;", "dot=", "", "comma=,")
)

// TestRFC6570 expands every example of RFC 6570 sections 1.2 and 3.2 and
// matches each expansion back, but those that put a list in a variable not
// exploded, which must not match.
func TestRFC6570(t *testing.T) {
	for _, c := range rfcCases {
		t.Run(c.section+"/"+c.template, func(t *testing.T) {
			tmpl, err := uritemplate.Parse(c.template)
			require.NoError(t, err)

			got, err := tmpl.Expand(rfcVars)
			require.NoError(t, err)
			assert.Equal(t, c.want, got, "Expand")

			if c.noMatch {
				require.NotEmpty(t, c.why, "say why the URI does not match")
				m, ok := tmpl.Match(c.want)
				assert.False(t, ok, "Match(%q) gave %v", c.want, m.Map())
				return
			}
			want := c.matched
			if want == nil {
				require.Empty(t, c.why)
				want = map[string]uritemplate.Value{}
				for _, name := range tmpl.Varnames() {
					if v, ok := rfcVars[name]; ok && len(v.Items) > 0 {
						want[name] = v
					}
				}
			} else {
				require.NotEmpty(t, c.why, "say why the match differs")
			}
			m, ok := tmpl.Match(c.want)
			require.True(t, ok, "Match(%q)", c.want)
			assert.Equal(t, want, m.Map(), "Match(%q)", c.want)

			// Whatever the match gives back, ambiguous or not, is a valid
			// reading of the URI: it expands back to it.
			back, err := tmpl.Expand(m.Map())
			require.NoError(t, err)
			if c.notPreimage {
				assert.NotEqual(t, c.want, back)
			} else {
				assert.Equal(t, c.want, back, "Expand(Match(%q))", c.want)
			}
		})
	}
}

// corpusDir holds the public RFC 6570 conformance corpus
// (github.com/uri-templates/uritemplate-test), where the workspace has it
// beside the module. It is optional: TestRFC6570Corpus skips without it.
var corpusDir = filepath.Join("..", "..", "shared", "testdata", "uritemplate-test")

var corpusFiles = []string{"spec-examples.json", "spec-examples-by-section.json", "extended-tests.json", "negative-tests.json"}

// A corpusCase is one test case of the corpus: want lists the acceptable
// expansions, none if the template must be refused.
type corpusCase struct {
	file, group, template string
	vars                  map[string]uritemplate.Value
	want                  []string
}

// loadCorpus reads the corpus from dir; it returns nil if dir is absent.
func loadCorpus(t *testing.T, dir string) []corpusCase {
	t.Helper()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var cases []corpusCase
	for _, file := range corpusFiles {
		data, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		var groups map[string]struct {
			Variables map[string]json.RawMessage
			Testcases [][2]json.RawMessage
		}
		require.NoError(t, json.Unmarshal(data, &groups), file)
		for group, g := range groups {
			vars := make(map[string]uritemplate.Value, len(g.Variables))
			for name, raw := range g.Variables {
				if string(raw) != "null" { // undefined
					vars[name] = corpusValue(t, raw)
				}
			}
			for _, tc := range g.Testcases {
				c := corpusCase{file: file, group: group, vars: vars}
				require.NoError(t, json.Unmarshal(tc[0], &c.template))
				var one string
				switch {
				case string(tc[1]) == "false":
				case json.Unmarshal(tc[1], &one) == nil:
					c.want = []string{one}
				default:
					require.NoError(t, json.Unmarshal(tc[1], &c.want), "%s: %s", file, tc[1])
				}
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// corpusValue converts a corpus variable: a string or number is a String,
// an array a List, an object Pairs in the order written.
func corpusValue(t *testing.T, raw json.RawMessage) uritemplate.Value {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	scalar := func(tok json.Token) string {
		switch tok := tok.(type) {
		case string:
			return tok
		case json.Number:
			return tok.String()
		}
		t.Fatalf("unexpected corpus value %s", raw)
		return ""
	}
	tok, err := dec.Token()
	require.NoError(t, err)
	if tok != json.Delim('[') && tok != json.Delim('{') {
		return sv(scalar(tok))
	}
	items := []string{}
	for dec.More() {
		item, err := dec.Token()
		require.NoError(t, err)
		items = append(items, scalar(item))
	}
	if tok == json.Delim('[') {
		return lv(items...)
	}
	return pv(items...)
}

// corpusExpandDeviation says why Expand may give another expansion than
// the corpus for c, or "" if it must give the corpus's: none, now that
// reserved expansion lets pct-encoded triplets through.
func corpusExpandDeviation(corpusCase, *uritemplate.Template) string { return "" }

var exprRE = regexp.MustCompile(`\{([^}]*)\}`)

// listInScalar reports whether expanding vars with template gives a
// variable not exploded, of an operator that encodes ',' in a string
// (all but + and #), a list or an associative array of more than one
// item: its expansion holds an unencoded ',', and Match must refuse it.
func listInScalar(template string, vars map[string]uritemplate.Value) bool {
	for _, m := range exprRE.FindAllStringSubmatch(template, -1) {
		body := m[1]
		if body != "" && strings.IndexByte("+#", body[0]) >= 0 {
			continue
		}
		body = strings.TrimLeft(body, "./;?&")
		for spec := range strings.SplitSeq(body, ",") {
			if strings.HasSuffix(spec, "*") {
				continue
			}
			if v, ok := vars[spec]; ok && v.Kind != uritemplate.String && len(v.Items) > 1 {
				return true
			}
		}
	}
	return false
}

// TestRFC6570Corpus runs the public RFC 6570 conformance corpus, where
// it is at hand: every template it refuses must be refused (by Parse or
// Expand); every other must expand as it says; every expansion must
// match, and every ExpandURI expansion match back to values that expand
// to it again, but those with a list in a variable not exploded, which
// must not match (listWhy). It logs the counts.
func TestRFC6570Corpus(t *testing.T) {
	cases := loadCorpus(t, corpusDir)
	if cases == nil {
		t.Skipf("no RFC 6570 conformance corpus at %s", corpusDir)
	}
	var expansions, expanded, roundTrips, roundTripped, refused int
	deviations := map[string]int{}
	for _, c := range cases {
		name := c.file + "/" + c.group + "/" + c.template
		tmpl, err := uritemplate.Parse(c.template)
		if c.want == nil {
			expansions++
			if err == nil {
				_, err = tmpl.Expand(c.vars)
			}
			if assert.Error(t, err, "%s: must be refused", name) {
				expanded++
			}
			continue
		}
		if !assert.NoError(t, err, name) {
			continue
		}
		got, err := tmpl.Expand(c.vars)
		if !assert.NoError(t, err, name) {
			continue
		}
		expansions++
		if slices.Contains(c.want, got) {
			expanded++
		} else if why := corpusExpandDeviation(c, tmpl); why != "" {
			deviations[why]++
		} else {
			assert.Contains(t, c.want, got, "%s: Expand", name)
		}

		roundTrips++
		m, ok := tmpl.Match(got)
		if listInScalar(c.template, c.vars) {
			if assert.False(t, ok, "%s: Match(%q) gave %v; want no match (%s)", name, got, m.Map(), listWhy) {
				refused++
			}
			continue
		}
		if !assert.True(t, ok, "%s: Match(%q)", name, got) {
			continue
		}
		// Round trips are ExpandURI's: Expand lets a pct-encoded triplet
		// through in {+x}, which Match decodes.
		uri, err := tmpl.ExpandURI(c.vars)
		if !assert.NoError(t, err, name) {
			continue
		}
		m, ok = tmpl.Match(uri)
		if !assert.True(t, ok, "%s: Match(%q)", name, uri) {
			continue
		}
		back, err := tmpl.ExpandURI(m.Map())
		if assert.NoError(t, err, name) && assert.Equal(t, uri, back, "%s: ExpandURI(Match(%q))", name, uri) {
			roundTripped++
		}
	}
	t.Logf("%s: expansions as the corpus gives them (or refused as it says) %d/%d, other by design %v; "+
		"round trips %d/%d; not matched by design (%s) %d",
		corpusDir, expanded, expansions, deviations, roundTripped, roundTrips, listWhy, refused)
	assert.Equal(t, roundTrips, roundTripped+refused)
}
