package uritemplate_test

import (
	"testing"

	"github.com/mcpres/mcpres/uritemplate"
)

// ExpandURI keeps the template's shape: a reserved expansion's '?', '#',
// '[' and ']' are encoded, and Match gives the values back.
func TestExpandURI(t *testing.T) {
	for _, tc := range []struct {
		tmpl, value, expand, uri string
	}{
		{"file:///{+path}", "docs/C#.md", "file:///docs/C#.md", "file:///docs/C%23.md"},
		{"file:///{+path}", "a?b=c", "file:///a?b=c", "file:///a%3Fb=c"},
		{"file:///{+path}", "pages/[id].tsx", "file:///pages/[id].tsx", "file:///pages/%5Bid%5D.tsx"},
		{"file:///{+path}", "a b/c:d@e;f", "file:///a%20b/c:d@e;f", "file:///a%20b/c:d@e;f"},
		{"x://h/p{#frag}", "a#b?c", "x://h/p#a#b?c", "x://h/p#a%23b%3Fc"},
		{"x://h/{id}", "a#b", "x://h/a%23b", "x://h/a%23b"},
	} {
		tmpl := uritemplate.MustParse(tc.tmpl)
		vars := map[string]uritemplate.Value{tmpl.Varnames()[0]: uritemplate.StringValue(tc.value)}
		got, err := tmpl.Expand(vars)
		if err != nil || got != tc.expand {
			t.Errorf("%s Expand(%q) = %q, %v; want %q", tc.tmpl, tc.value, got, err, tc.expand)
		}
		got, err = tmpl.ExpandURI(vars)
		if err != nil || got != tc.uri {
			t.Errorf("%s ExpandURI(%q) = %q, %v; want %q", tc.tmpl, tc.value, got, err, tc.uri)
			continue
		}
		m, ok := tmpl.Match(got)
		if !ok || m.Get(tmpl.Varnames()[0]) != tc.value {
			t.Errorf("%s Match(%q) = %q, %v; want %q", tc.tmpl, got, m.Get(tmpl.Varnames()[0]), ok, tc.value)
		}
	}
	if _, err := uritemplate.MustParse("x://{+a}").ExpandURI(map[string]uritemplate.Value{"a": uritemplate.StringValue("\xff")}); err == nil {
		t.Error("ExpandURI of invalid UTF-8: no error")
	}
}
