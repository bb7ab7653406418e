package origin

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Which requests a Policy lets through, by their Origin header (nil: no
// header), their Host header and whether they came over TLS.
func TestCheck(t *testing.T) {
	allowing, err := NewPolicy([]string{"https://App.Example.com:443", "http://localhost:5173", "chrome-extension://abcdef", "http://[::1]:3000"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	any, err := NewPolicy([]string{"https://app.example.com", Any}, "test")
	if err != nil {
		t.Fatal(err)
	}
	none := &Policy{}
	for _, tc := range []struct {
		name   string
		policy *Policy
		origin []string
		host   string
		tls    bool
		want   error
	}{
		{"no Origin header", none, nil, "127.0.0.1:8080", false, nil},
		{"own origin", none, []string{"http://127.0.0.1:8080"}, "127.0.0.1:8080", false, nil},
		{"own origin, another case", none, []string{"http://MCP.example.com"}, "mcp.Example.com", false, nil},
		{"own origin, default port in Host", none, []string{"http://mcp.example.com"}, "mcp.example.com:80", false, nil},
		{"own origin, default port in Origin", none, []string{"https://mcp.example.com:443"}, "mcp.example.com", false, nil},
		{"own origin over IPv6", none, []string{"http://[::1]:8080"}, "[::1]:8080", false, nil},
		{"https page, TLS ended by a proxy", none, []string{"https://mcp.example.com"}, "mcp.example.com", false, nil},
		{"https page over TLS", none, []string{"https://mcp.example.com"}, "mcp.example.com", true, nil},
		{"http page, server over TLS", none, []string{"http://mcp.example.com"}, "mcp.example.com", true, ErrForeign},
		{"another host", none, []string{"http://attacker.example"}, "127.0.0.1:8080", false, ErrForeign},
		{"another port", none, []string{"http://127.0.0.1:8081"}, "127.0.0.1:8080", false, ErrForeign},
		{"localhost is not 127.0.0.1", none, []string{"http://localhost:8080"}, "127.0.0.1:8080", false, ErrForeign},
		{"a host that ends like ours", none, []string{"http://evil127.0.0.1:8080"}, "127.0.0.1:8080", false, ErrForeign},
		{"another scheme", none, []string{"ftp://127.0.0.1:8080"}, "127.0.0.1:8080", false, ErrForeign},
		{"no Host header", none, []string{"http://127.0.0.1:8080"}, "", false, ErrForeign},
		{"null", none, []string{"null"}, "127.0.0.1:8080", false, ErrMalformed},
		{"empty", none, []string{""}, "127.0.0.1:8080", false, ErrMalformed},
		{"two headers", none, []string{"http://127.0.0.1:8080", "http://127.0.0.1:8080"}, "127.0.0.1:8080", false, ErrMalformed},
		{"a path", none, []string{"http://127.0.0.1:8080/"}, "127.0.0.1:8080", false, ErrMalformed},
		{"a query", none, []string{"http://127.0.0.1:8080?a"}, "127.0.0.1:8080", false, ErrMalformed},
		{"a fragment", none, []string{"http://127.0.0.1:8080#a"}, "127.0.0.1:8080", false, ErrMalformed},
		{"user information", none, []string{"http://u@127.0.0.1:8080"}, "127.0.0.1:8080", false, ErrMalformed},
		{"a host alone", none, []string{"127.0.0.1:8080"}, "127.0.0.1:8080", false, ErrMalformed},
		{"an empty port", none, []string{"http://127.0.0.1:"}, "127.0.0.1:", false, ErrMalformed},
		{"port out of range", none, []string{"http://127.0.0.1:70000"}, "127.0.0.1:70000", false, ErrMalformed},
		{"allowed", allowing, []string{"https://app.example.com"}, "mcp.example.com", false, nil},
		{"allowed, with its port", allowing, []string{"http://localhost:5173"}, "127.0.0.1:8080", false, nil},
		{"allowed, IPv6", allowing, []string{"http://[::1]:3000"}, "127.0.0.1:8080", false, nil},
		{"allowed, another scheme", allowing, []string{"chrome-extension://abcdef"}, "127.0.0.1:8080", false, nil},
		{"allowed host, another port", allowing, []string{"http://localhost:5174"}, "127.0.0.1:8080", false, ErrForeign},
		{"allowed host, another scheme", allowing, []string{"http://app.example.com"}, "mcp.example.com", false, ErrForeign},
		{"own origin beside allowed ones", allowing, []string{"http://127.0.0.1:8080"}, "127.0.0.1:8080", false, nil},
		{"null beside allowed ones", allowing, []string{"null"}, "127.0.0.1:8080", false, ErrMalformed},
		{"any: another origin", any, []string{"http://attacker.example"}, "127.0.0.1:8080", false, nil},
		{"any: null", any, []string{"null"}, "127.0.0.1:8080", false, nil},
	} {
		req := httptest.NewRequest(http.MethodPost, "http://example.invalid/mcp", nil)
		req.Host = tc.host
		if tc.origin != nil {
			req.Header["Origin"] = tc.origin
		}
		if tc.tls {
			req.TLS = &tls.ConnectionState{}
		}
		err := tc.policy.Check(req)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: Origin %q, Host %q: got %v, want %v", tc.name, tc.origin, tc.host, err, tc.want)
		}
	}
}

// NewPolicy names each entry that is not an origin, with its index.
func TestNewPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed []string
		want    []string // in the error; none if nil
	}{
		{"nil", nil, nil},
		{"origins", []string{"https://app.example.com", "http://localhost:5173", "HTTP://[::1]"}, nil},
		{"any", []string{"*"}, nil},
		{"a path", []string{"https://app.example.com/"}, []string{`f[0]: "https://app.example.com/" is not an origin: it has a path; want scheme://host[:port]`}},
		{"null", []string{"null"}, []string{`f[0]: "null" is the origin of sandboxed pages`}},
		{"empty", []string{""}, []string{`f[0]: "" is not an origin: it has no scheme://host`}},
		{"a host alone", []string{"app.example.com"}, []string{`f[0]: "app.example.com" is not an origin: it has no scheme://host`}},
		{"a pattern", []string{"https://*.example.com"}, []string{`f[0]: "https://*.example.com" is not an origin`}},
		{"two bad ones", []string{"https://ok.example", "x", "https://a/b"}, []string{`f[1]: "x"`, `f[2]: "https://a/b"`}},
	} {
		p, err := NewPolicy(tc.allowed, "f")
		if tc.want == nil {
			if err != nil || p == nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}
}
