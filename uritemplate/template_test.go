package uritemplate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpres/mcpres/uritemplate"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		template string
		names    []string
		prefix   string
	}{
		{"", nil, ""},
		{"file:///etc/hosts", nil, "file:///etc/hosts"},
		{"file:///{+path}", []string{"path"}, "file:///"},
		{"db://{table}/{id}{?fields,limit}", []string{"table", "id", "fields", "limit"}, "db://"},
		{"{x}", []string{"x"}, ""},
		{"x:{a}/{a:3}{&a}", []string{"a"}, "x:"},
		{"x:{a.b,c_d,e%20f,G9}", []string{"a.b", "c_d", "e%20f", "G9"}, "x:"},
		{"x:{a*}{b:1}{c:9999}", []string{"a", "b", "c"}, "x:"},
		{"x:{?a}{&b}{&c}", []string{"a", "b", "c"}, "x:"},
		{"caf%C3%A9:é/{x}", []string{"x"}, "caf%C3%A9:%C3%A9/"},
		{"x:a'b!{x}", []string{"x"}, "x:a'b!"},
	} {
		tmpl, err := uritemplate.Parse(c.template)
		require.NoError(t, err, c.template)
		assert.Equal(t, c.template, tmpl.String())
		if c.names == nil {
			assert.Empty(t, tmpl.Varnames(), c.template)
		} else {
			assert.Equal(t, c.names, tmpl.Varnames(), c.template)
		}
		assert.Equal(t, c.prefix, tmpl.Prefix(), c.template)
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{
		"{",
		"x:{a",
		"x:a}",
		"{}",
		"{{x}}",
		"{x}}",
		"{=x}", "{,x}", "{!x}", "{@x}", "{|x}", // reserved operators
		"{x,}", "{,}", "{+}", "{?}",
		"{.x.}", "{x..y}", "{.x}{..y}",
		"{x y}", "{ x}", "{x-y}", "{x/y}", "{é}",
		"{x*3}", "{x**}", "{x:}", "{x:0}", "{x:03}", "{x:10000}", "{x:-1}", "{x:+1}", "{x:3*}", "{x:3:4}", "{x*:3}",
		"{x%2}", "{x%zz}",
		"a b", "a<b", "a\"b", "a^b", "a`b", "a|b", "a\\b",
		"a%2", "a%zz", "%",
		"a\xffb", "{x}\xc3",
	} {
		tmpl, err := uritemplate.Parse(bad)
		assert.Error(t, err, "%q", bad)
		assert.Nil(t, tmpl, "%q", bad)
		assert.Panics(t, func() { uritemplate.MustParse(bad) }, "%q", bad)
	}
	assert.NotPanics(t, func() { uritemplate.MustParse("x:{y}") })
}

func TestExpand(t *testing.T) {
	for _, c := range []struct {
		template string
		vars     map[string]uritemplate.Value
		want     string
	}{
		// Non-ASCII values are percent-encoded as UTF-8.
		{"x:{a}", vals("a", "é"), "x:%C3%A9"},
		{"x:{a}", vals("a", "Ā"), "x:%C4%80"},
		{"x:{a}", vals("a", "中"), "x:%E4%B8%AD"},
		{"x:{a}", vals("a", "😀"), "x:%F0%9F%98%80"},
		{"x:{+a}", vals("a", "é/ü?"), "x:%C3%A9/%C3%BC?"},
		{"x:{#a}", vals("a", "a b#c"), "x:#a%20b#c"},
		// A prefix counts characters, not bytes.
		{"x:{a:1}", vals("a", "éa"), "x:%C3%A9"},
		{"x:{a:2}", vals("a", "a😀b"), "x:a%F0%9F%98%80"},
		{"x:{a:9}", vals("a", "short"), "x:short"},
		// '%' is always encoded, so that Match gives the value back.
		{"x:{+a}", vals("a", "%41"), "x:%41"}, // RFC 6570 §3.2.3: a triplet passes
		{"x:{+a}", vals("a", "%4"), "x:%254"},
		{"x:{a}", vals("a", "%20"), "x:%2520"},
		// Exploded pairs with an empty value.
		{"x:{/keys*}", vals("keys", pv("a", "", "b", "1")), "x:/a=/b=1"},
		{"x:{?keys*}", vals("keys", pv("a", "")), "x:?a="},
		{"x:{;keys*}", vals("keys", pv("a", "")), "x:;a"},
		{"x:{keys}", vals("keys", pv("a", "")), "x:a,"},
		// Keys are encoded like values.
		{"x:{?keys*}", vals("keys", pv("a b", "1")), "x:?a%20b=1"},
		{"x:{/keys*}", vals("keys", pv("a/b", "c/d")), "x:/a%2Fb=c%2Fd"},
		// Named lists.
		{"x:{?list*}", vals("list", lv("a", "")), "x:?list=a&list="},
		{"x:{;list*}", vals("list", lv("a", "")), "x:;list=a;list"},
		// Empty lists and pairs are undefined; a missing variable too.
		{"x:{a}{/b}{?c}", vals("a", lv(), "b", pv()), "x:"},
		{"x:{a,b}", vals("b", "2"), "x:2"},
		// A {&…} after a {?…} expands as written, even with the {?…}
		// undefined.
		{"x:{?a}{&b}", vals("b", "2"), "x:&b=2"},
		{"x:{?a}{&b}", vals("a", "1", "b", "2"), "x:?a=1&b=2"},
		// Literals are copied, but for characters a URI may not hold,
		// which are percent-encoded (RFC 6570, section 3.1); a triplet
		// already encoded stays as written.
		{"caf%C3%A9:é/{x}", vals("x", "1"), "caf%C3%A9:%C3%A9/1"},
		{"café/{var}", vals("var", "value"), "caf%C3%A9/value"},
	} {
		tmpl := uritemplate.MustParse(c.template)
		got, err := tmpl.Expand(c.vars)
		require.NoError(t, err, c.template)
		assert.Equal(t, c.want, got, "%s %v", c.template, c.vars)
	}
}

func TestExpandErrors(t *testing.T) {
	for _, c := range []struct {
		template string
		vars     map[string]uritemplate.Value
	}{
		{"{x:3}", vals("x", lv("a", "b"))},
		{"{x:3}", vals("x", pv("a", "b"))},
		{"{x}", vals("x", uritemplate.Value{Kind: uritemplate.String})},
		{"{x}", vals("x", uritemplate.Value{Kind: uritemplate.String, Items: []string{"a", "b"}})},
		{"{x}", vals("x", pv("a", "b", "c"))},
		{"{x}", vals("x", uritemplate.Value{Kind: 9, Items: []string{"a"}})},
		{"{x}", vals("x", "a\xffb")},
		{"{x}", vals("x", lv("a", "\xc3"))},
		{"{x*}", vals("x", pv("\xc3", "a"))},
	} {
		_, err := uritemplate.MustParse(c.template).Expand(c.vars)
		assert.Error(t, err, "%s %v", c.template, c.vars)
	}
}

func TestValues(t *testing.T) {
	tmpl := uritemplate.MustParse("x:{a}/{b*}{/c*}{?d,e}")
	m, ok := tmpl.Match("x:1/2,3/p/q?e")
	require.True(t, ok)
	// Not exploded, b matches scalars only.
	_, ok = uritemplate.MustParse("x:{a}/{b}{/c*}{?d,e}").Match("x:1/2,3/p/q?e")
	assert.False(t, ok)
	assert.Same(t, tmpl, m.Template())

	assert.Equal(t, "1", m.Get("a"))
	assert.Equal(t, "", m.Get("b"), "a List is not a String")
	assert.Equal(t, "", m.Get("d"), "unbound")
	assert.Equal(t, "", m.Get("e"), "bound to the empty string")
	assert.Equal(t, "", m.Get("nope"))

	assert.Equal(t, []string{"1"}, m.List("a"))
	assert.Equal(t, []string{"2", "3"}, m.List("b"))
	assert.Equal(t, []string{"p", "q"}, m.List("c"))
	assert.Nil(t, m.List("d"))
	assert.Equal(t, []string{""}, m.List("e"))

	v, ok := m.Lookup("b")
	assert.True(t, ok)
	assert.Equal(t, lv("2", "3"), v)
	v, ok = m.Lookup("d")
	assert.False(t, ok)
	assert.Equal(t, uritemplate.Value{}, v)
	_, ok = m.Lookup("nope")
	assert.False(t, ok)

	assert.True(t, m.Has("e"))
	assert.False(t, m.Has("d"))
	assert.False(t, m.Has("nope"))
	assert.Equal(t, 4, m.Len())
	assert.Equal(t, vals("a", "1", "b", lv("2", "3"), "c", lv("p", "q"), "e", ""), m.Map())

	m, ok = uritemplate.MustParse("x:{/k*}").Match("x:/a=1/b=")
	require.True(t, ok)
	assert.Equal(t, []string{"a", "1", "b", ""}, m.List("k"))
	assert.Equal(t, "", m.Get("k"))

	var zero uritemplate.Values
	assert.Nil(t, zero.Template())
	assert.Equal(t, "", zero.Get("a"))
	assert.Nil(t, zero.List("a"))
	assert.False(t, zero.Has("a"))
	_, ok = zero.Lookup("a")
	assert.False(t, ok)
	assert.Equal(t, 0, zero.Len())
	assert.Empty(t, zero.Map())

	for k, s := range map[uritemplate.Kind]string{uritemplate.String: "String", uritemplate.List: "List", uritemplate.Pairs: "Pairs", 7: "Kind(?)"} {
		assert.Equal(t, s, k.String())
	}
}
