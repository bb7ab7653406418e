// Package origin is the rule of the Origin header on the streamable HTTP
// endpoint: which web pages may call it. A request without the header
// (a client that is not a browser) may; so may a page of the request's
// own origin, or of one the server allows. Everything else may not: a
// page of another origin, "null", and whatever is not an origin.
//
// Package serve applies the rule at its edge, and checks its
// Options.AllowedOrigins with it.
package origin

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Any is the allowed origin that allows every request, whatever its
// Origin header.
const Any = "*"

// The reasons Check refuses a request. Its errors wrap one of them.
var (
	// ErrMalformed: the Origin header is not one origin ("null", a URL
	// with a path, two headers, an empty one).
	ErrMalformed = errors.New("not an origin")
	// ErrForeign: the origin is neither the request's own nor allowed.
	ErrForeign = errors.New("neither the request's own origin nor an allowed one")
)

// A Policy is the set of origins allowed besides a request's own. The
// zero Policy allows none.
type Policy struct {
	any     bool
	allowed map[string]bool // in canonical form
}

// NewPolicy returns the Policy that allows the origins in allowed: each
// Any, or "scheme://host[:port]". It returns an error for each entry that
// is neither, joined, each naming field and the entry's index (such as
// `serve: Options.AllowedOrigins[1]: …`).
func NewPolicy(allowed []string, field string) (*Policy, error) {
	p := &Policy{}
	var errs []error
	for i, s := range allowed {
		if s == Any {
			p.any = true
			continue
		}
		o, err := parse(s)
		if err == nil && o == "null" {
			err = errors.New(`"null" is the origin of sandboxed pages and local files, which any page can make: allow "*" to allow it`)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
			continue
		}
		if p.allowed == nil {
			p.allowed = make(map[string]bool, len(allowed))
		}
		p.allowed[o] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// Check returns nil if req may be served: it has no Origin header, the
// policy allows every origin, or the origin is the request's own or an
// allowed one. Otherwise its error wraps ErrMalformed or ErrForeign.
//
// The request's own origin is the Host header's, with scheme https if
// req came over TLS, and http or https if not: a proxy in front may
// have ended TLS, and net/http's CrossOriginProtection does not compare
// schemes at all.
func (p *Policy) Check(req *http.Request) error {
	values, present := req.Header["Origin"]
	if !present || p.any {
		return nil
	}
	if len(values) != 1 {
		return fmt.Errorf("%w: %d Origin headers", ErrMalformed, len(values))
	}
	o, err := parse(values[0])
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	case o == "null":
		return fmt.Errorf("%w: %q", ErrMalformed, values[0])
	case p.allowed[o] || own(o, req):
		return nil
	}
	return fmt.Errorf("%w: %q, on host %q", ErrForeign, values[0], req.Host)
}

// own reports whether o, in canonical form, is req's own origin.
func own(o string, req *http.Request) bool {
	scheme, _, _ := strings.Cut(o, "://")
	if scheme != "https" && (scheme != "http" || req.TLS != nil) {
		return false
	}
	host, err := parse(scheme + "://" + req.Host)
	return err == nil && host == o
}

// parse returns the origin s, "scheme://host" or "scheme://host:port", in
// canonical form: scheme and host in lower case, without the default
// port of http (80) or https (443). "null" is returned as is. An error
// says why s is not an origin.
func parse(s string) (string, error) {
	if s == "null" {
		return s, nil
	}
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%q is not an origin: %s; want scheme://host[:port], such as %q", s, why, "https://app.example.com")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return bad("it does not parse as a URL")
	case u.Scheme == "" || u.Opaque != "" || u.Host == "":
		return bad("it has no scheme://host")
	case u.User != nil:
		return bad("it has user information")
	case u.Path != "" || u.RawPath != "":
		return bad("it has a path")
	case u.RawQuery != "" || u.ForceQuery:
		return bad("it has a query")
	case u.Fragment != "" || strings.Contains(s, "#"):
		return bad("it has a fragment")
	case strings.HasSuffix(u.Host, ":"):
		return bad("its port is empty")
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if !hostName(host, strings.HasPrefix(u.Host, "[")) {
		return bad("its host is not a DNS name or an IP address")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return bad("its port is not a number from 1 to 65535")
		}
		port = strconv.Itoa(n)
		if u.Scheme == "http" && n == 80 || u.Scheme == "https" && n == 443 {
			port = ""
		}
	}
	if port != "" {
		return u.Scheme + "://" + net.JoinHostPort(host, port), nil
	}
	if strings.Contains(host, ":") { // an IPv6 address
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host, nil
}

// hostName reports whether host, in lower case, is made of the bytes of
// a DNS name (in its ASCII form) or an IP address: IPv6 if bracketed.
func hostName(host string, bracketed bool) bool {
	if host == "" {
		return false
	}
	for _, c := range []byte(host) {
		ok := 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || bracketed && c == ':'
		if !ok {
			return false
		}
	}
	return true
}
