package uri

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"file:///tmp/a.txt", nil},
		{"test://static-text", nil},
		{"https://example.com:8443/a/b?x=1&y=2#frag", nil},
		{"urn:isbn:0451450523", nil},
		{"db://users/42", nil},
		{"file:///notes%20and%20more.md", nil},
		{"users://ada%20l/profile", nil},    // RFC 3986 reg-name allows escapes
		{"mailto:someone@example.com", nil}, // '@' outside an authority is not userinfo
		{"x-y.z+w:opaque", nil},
		{"", ErrEmpty},
		{"relative/path", ErrNoScheme},
		{"/abs/path", ErrNoScheme},
		{"://nothing", ErrBadScheme},
		{"1abc://x", ErrBadScheme},
		{"a_b://x", ErrBadScheme},
		{"postgres://user:pass@db.example.com/app", ErrUserinfo},
		{"https://token@example.com/", ErrUserinfo},
		{"file:///a b", ErrBadChar},
		{"file:///caf\u00e9", ErrBadChar},
		{"file:///a\x00b", ErrBadChar},
		{"file:///a\\b", ErrBadChar},
		{"file:///a\nb", ErrBadChar},
		{"file:///a<b>", ErrBadChar},
		{"file:///100%", ErrBadEscape},
		{"file:///%zz", ErrBadEscape},
		{"file:///%4", ErrBadEscape},
		{"a:b#c#d", ErrFragment},
		{"a:" + strings.Repeat("x", DefaultMaxLength), ErrTooLong},
	} {
		err := Check(tc.in, 0)
		if tc.want == nil {
			if err != nil {
				t.Errorf("Check(%q) = %v, want nil", tc.in, err)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("Check(%q) = %v, want %v", tc.in, err, tc.want)
		}
	}
}

func TestCheckCustomLimit(t *testing.T) {
	if err := Check("a:bcdef", 7); err != nil {
		t.Fatalf("7-byte URI at limit 7: %v", err)
	}
	if err := Check("a:bcdefg", 7); !errors.Is(err, ErrTooLong) {
		t.Fatalf("8-byte URI at limit 7: got %v, want ErrTooLong", err)
	}
}

func TestCheckAllocatesNothing(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { _ = Check("file:///some/long/path/to/a%20file.txt?x=1#top", 0) })
	if allocs != 0 {
		t.Fatalf("Check allocates %v times per call, want 0", allocs)
	}
}

// FuzzCheck asserts that Check never panics and that every URI it accepts
// is also an absolute URI without userinfo to net/url. The one difference
// allowed: RFC 3986 lets a host hold percent-escapes (custom schemes put
// template variables there, as in db://{table}/{id}); net/url refuses most.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"file:///tmp/a.txt", "test://template/1/data", "postgres://u:p@h/db",
		"a:b", "file:///%41", "x://h/p?q#f", "%", "a:%", "::", "a://@", "a:#",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Check(s, 0) != nil {
			return
		}
		u, err := url.Parse(s)
		if err != nil && strings.Contains(err.Error(), "invalid URL escape") {
			return
		}
		if err != nil {
			t.Fatalf("Check accepted %q, url.Parse refused it: %v", s, err)
		}
		if u.Scheme == "" {
			t.Fatalf("Check accepted %q without a scheme", s)
		}
		if u.User != nil {
			t.Fatalf("Check accepted %q with userinfo", s)
		}
	})
}

func TestCheckIPLiteral(t *testing.T) {
	if err := Check("http://[::1]:8080/x", 0); err != nil {
		t.Fatalf("IPv6 literal: %v", err)
	}
	for _, s := range []string{"A://[", "a:/x[1]", "http://h/[x]", "http://[::1"} {
		if err := Check(s, 0); !errors.Is(err, ErrBadChar) {
			t.Errorf("Check(%q) = %v, want ErrBadChar", s, err)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	good := []string{"", "l", "log", "log:", "log://", "log://prod/", "log://prod/a%", "log://prod/a%2", "log://prod/a%2F",
		"file:///", "db://users/4", "x:?q=", "x://h:8"}
	for _, p := range good {
		if err := CheckPrefix(p, 0); err != nil {
			t.Errorf("CheckPrefix(%q) = %v, want nil", p, err)
		}
	}
	bad := map[string]error{
		"1x":              ErrBadScheme,
		"l g":             ErrBadScheme,
		"/x":              ErrNoScheme,
		"log://prod/ a":   ErrBadChar,
		"log://prod/a%zz": ErrBadEscape,
		"log://prod/%g":   ErrBadEscape,
		"pg://user:pw@":   ErrUserinfo,
		"x://a#b#":        ErrFragment,
	}
	for p, want := range bad {
		if err := CheckPrefix(p, 0); !errors.Is(err, want) {
			t.Errorf("CheckPrefix(%q) = %v, want %v", p, err, want)
		}
	}
	if err := CheckPrefix("x://"+strings.Repeat("a", 20), 10); !errors.Is(err, ErrTooLong) {
		t.Errorf("CheckPrefix of a long prefix = %v, want ErrTooLong", err)
	}
	// Every prefix of a good URI is a good prefix.
	for _, u := range []string{"file:///notes/caf%C3%A9.md?v=3#top", "db://users/42", "x:y"} {
		for i := range len(u) + 1 {
			if err := CheckPrefix(u[:i], 0); err != nil {
				t.Errorf("CheckPrefix(%q), a prefix of %q, = %v", u[:i], u, err)
			}
		}
	}
}

func TestEncode(t *testing.T) {
	for in, want := range map[string]string{
		"notes://gamma%20ray": "notes://gamma%20ray",
		"notes://gamma ray":   "notes://gamma%20ray",
		"file:///café.md":     "file:///caf%C3%A9.md",
		"x://a%zz":            "x://a%25zz",
		"x://100%":            "x://100%25",
		"x://a\x00b":          "x://a%00b",
		"":                    "",
	} {
		if got := Encode(in); got != want {
			t.Errorf("Encode(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzPrefixAndEncode checks CheckPrefix and Encode against Check: every
// prefix of a URI Check accepts is a prefix CheckPrefix accepts, a prefix
// CheckPrefix refuses starts no URI Check accepts (tried with a few
// endings), Encode leaves a good URI alone, and Encode's result holds
// only bytes a URI may hold.
func FuzzPrefixAndEncode(f *testing.F) {
	for _, s := range []string{
		"file:///tmp/a.txt", "notes://gamma ray", "x://a%zz", "x://100%", "caf\xc3\xa9:x", "log://prod/",
		"pg://u:p@h", "a:%4", "x://a#b#c", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Check(s, 0) == nil {
			for i := range len(s) + 1 {
				if err := CheckPrefix(s[:i], 0); err != nil {
					t.Fatalf("CheckPrefix(%q), a prefix of the good URI %q: %v", s[:i], s, err)
				}
			}
			if e := Encode(s); e != s {
				t.Fatalf("Encode changed the good URI %q to %q", s, e)
			}
		}
		if CheckPrefix(s, 0) != nil {
			for _, end := range []string{"", "x", "/", "0", "00", ":x", "//h/"} {
				if Check(s+end, 0) == nil {
					t.Fatalf("CheckPrefix refused %q, but %q is a good URI", s, s+end)
				}
			}
		}
		e := Encode(s)
		for i := 0; i < len(e); i++ {
			c := e[i]
			if !isURIChar(c) && c != '%' && c != '#' && c != '[' && c != ']' {
				t.Fatalf("Encode(%q) = %q holds %q", s, e, c)
			}
		}
	})
}
