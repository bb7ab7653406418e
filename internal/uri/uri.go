// Package uri checks that a string is an absolute RFC 3986 URI fit to name
// an MCP resource.
//
// It is a single-pass check over the bytes of the string: no allocation on
// success, and a reason a client can act on when the URI is refused.
package uri

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// DefaultMaxLength is the length cap, in bytes, used when the caller gives
// none. Resource URIs are identifiers, not payloads; 4 KiB leaves room for
// long file paths and template variables while bounding the work any
// request can cause.
const DefaultMaxLength = 4096

// Sentinel reasons a URI is refused. Check returns an error wrapping one of
// them, so callers can tell the cases apart with errors.Is.
var (
	ErrEmpty     = errors.New("URI is empty")
	ErrTooLong   = errors.New("URI is too long")
	ErrNoScheme  = errors.New("URI is not absolute: it has no scheme")
	ErrBadScheme = errors.New("URI scheme is malformed")
	ErrBadChar   = errors.New("URI contains a character RFC 3986 does not allow")
	ErrBadEscape = errors.New("URI contains a malformed percent-escape")
	ErrUserinfo  = errors.New("URI carries userinfo (credentials) in its authority")
	ErrFragment  = errors.New("URI has more than one '#'")
)

// Check reports whether s is an absolute URI as RFC 3986 section 4.3 defines
// it (a scheme followed by ':'), made only of characters the RFC allows, with
// well-formed percent-escapes, no userinfo in its authority and at most one
// fragment delimiter, and at most maxLen bytes long (DefaultMaxLength when
// maxLen <= 0).
//
// It returns nil for a good URI, and otherwise an error wrapping one of the
// Err values above whose message says what is wrong and where. It never
// panics, whatever s holds.
func Check(s string, maxLen int) error {
	if maxLen <= 0 {
		maxLen = DefaultMaxLength
	}
	if s == "" {
		return ErrEmpty
	}
	if len(s) > maxLen {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLong, len(s), maxLen)
	}
	colon := schemeEnd(s)
	switch {
	case colon < 0:
		return ErrNoScheme
	case colon == 0 || !isAlpha(s[0]):
		return fmt.Errorf("%w: it must start with a letter", ErrBadScheme)
	}
	for i := 1; i < colon; i++ {
		if c := s[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return fmt.Errorf("%w: %q is not allowed in a scheme", ErrBadScheme, c)
		}
	}
	authStart, authEnd := authority(s, colon)
	hashes := 0
	for i := colon + 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '[' || c == ']':
			// Brackets delimit an IP literal and belong in the host only.
			if i < authStart || i >= authEnd {
				return fmt.Errorf("%w: %q at byte %d (percent-encode it)", ErrBadChar, c, i)
			}
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return fmt.Errorf("%w at byte %d", ErrBadEscape, i)
			}
			i += 2
		case c == '#':
			hashes++
			if hashes > 1 {
				return fmt.Errorf("%w (byte %d)", ErrFragment, i)
			}
		case !isURIChar(c):
			return fmt.Errorf("%w: %q at byte %d (percent-encode it)", ErrBadChar, c, i)
		}
	}
	host := s[authStart:authEnd]
	if strings.IndexByte(host, '@') >= 0 {
		return ErrUserinfo
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && host[0] != '[' {
		for _, c := range []byte(host[i+1:]) {
			if !isDigit(c) {
				return fmt.Errorf("%w: the port must be digits", ErrBadChar)
			}
		}
	}
	if strings.IndexByte(host, '[') >= 0 || strings.IndexByte(host, ']') >= 0 {
		// Rare: an IP literal. Leave its grammar to net/url.
		if _, err := url.Parse(s); err != nil {
			return fmt.Errorf("%w: malformed IP literal in the host", ErrBadChar)
		}
	}
	return nil
}

// schemeEnd returns the index of the ':' that ends the scheme, or -1 when
// no ':' comes before the first '/', '?' or '#'.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			return i
		case '/', '?', '#':
			return -1
		}
	}
	return -1
}

// authority returns the byte range of the authority that follows "scheme://"
// in s, or an empty range when the URI has none.
func authority(s string, colon int) (start, end int) {
	start = colon + 1
	if len(s) < start+2 || s[start] != '/' || s[start+1] != '/' {
		return start, start
	}
	start += 2
	for end = start; end < len(s); end++ {
		switch s[end] {
		case '/', '?', '#':
			return start, end
		}
	}
	return start, end
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// isURIChar reports whether c may appear literally in a URI: an unreserved
// or reserved character of RFC 3986 section 2 ('%' and '#' are handled by
// the caller).
func isURIChar(c byte) bool {
	if isAlpha(c) || isDigit(c) {
		return true
	}
	switch c {
	case '-', '.', '_', '~', // unreserved
		':', '/', '?', '@', // gen-delims (less '#', '[' and ']')
		'!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=': // sub-delims
		return true
	}
	return false
}

// CheckPrefix reports whether some URI that Check accepts starts with p:
// whether p could begin a URI a client sends, such as "log://prod/". The
// empty prefix begins every URI. It returns nil if so, and otherwise an
// error wrapping one of the Err values above (never ErrEmpty, ErrNoScheme
// for a prefix that may yet reach its ':', or ErrBadEscape for an escape
// cut short at its end).
func CheckPrefix(p string, maxLen int) error {
	if maxLen <= 0 {
		maxLen = DefaultMaxLength
	}
	if p == "" {
		return nil
	}
	if len(p) > maxLen {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLong, len(p), maxLen)
	}
	if schemeEnd(p) < 0 && strings.IndexAny(p, "/?#") < 0 {
		// The scheme is not finished: p must be a scheme's start.
		if !isAlpha(p[0]) {
			return fmt.Errorf("%w: it must start with a letter", ErrBadScheme)
		}
		for i := 1; i < len(p); i++ {
			if c := p[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
				return fmt.Errorf("%w: %q is not allowed in a scheme", ErrBadScheme, c)
			}
		}
		return nil
	}
	// An authority p cuts short may yet gain a ':' or a ']': its port and
	// IP literal are not finished, so only its characters are checked.
	if start, end := authority(p, schemeEnd(p)); end == len(p) && start < end && schemeEnd(p) > 0 {
		p = p[:start] + strings.Map(func(r rune) rune {
			if r == ':' || r == '[' || r == ']' {
				return 'x'
			}
			return r
		}, p[start:])
	}
	// Finish an escape p cuts short, then check p as a URI: whatever
	// follows can only add to it.
	switch {
	case strings.HasSuffix(p, "%"):
		p += "00"
	case len(p) >= 2 && p[len(p)-2] == '%' && isHex(p[len(p)-1]):
		p += "0"
	}
	return Check(p, len(p))
}

// Encode returns s with every byte that may not appear in a URI as it is
// percent-encoded: spaces, non-ASCII bytes, controls, and a '%' that does
// not begin a well-formed escape. Escapes and characters a URI may hold
// are left as they are, so that Encode(s) == s for every s Check accepts
// but for a second '#', brackets outside the host, userinfo and an
// over-long s, which Encode does not repair.
func Encode(s string) string {
	keep := func(i int) bool {
		c := s[i]
		return isURIChar(c) || c == '#' || c == '[' || c == ']' ||
			c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
	}
	first := 0
	for first < len(s) && keep(first) {
		first++
	}
	if first == len(s) {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:first])
	for i := first; i < len(s); i++ {
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
