package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// malformedURIs are the strings that are not URIs the audit reads.
var malformedURIs = []string{"not a uri", "%%%", "x://a b"}

// notFoundCode is the code of a resource not found at version.
func notFoundCode(version string) int64 {
	if version >= "2026-07-28" {
		return -32602
	}
	return -32002
}

// otherEra returns the era of eras that is not version.
func otherEra(version string) string {
	for _, v := range eras {
		if v != version {
			return v
		}
	}
	return version
}

// notFoundError is the error of a resource not found at version, its
// data naming uri.
func notFoundError(version, uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: notFoundCode(version), Message: "Resource not found", Data: data}
}

// notFoundServer returns plainServer holding the text resource test://a,
// answering a read of anything else as answer says: the URI the audit
// made up holds "does-not-exist", the others are malformedURIs.
func notFoundServer(answer func(uri string) (mcp.Result, error)) *mcp.Server {
	s := plainServer()
	s.AddResource(&mcp.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "a"}}}, nil
	})
	forge(s, "resources/read", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		uri := req.GetParams().(*mcp.ReadResourceParams).URI
		if uri == "test://a" {
			return next(ctx, "resources/read", req)
		}
		return answer(uri)
	})
	return s
}

// madeUp reports whether uri is the one the audit made up.
func madeUp(uri string) bool { return strings.Contains(uri, "does-not-exist") }

// targets returns the targets of r's findings of rule id, sorted.
func targets(r *audit.Report, id string) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Rule.ID == id {
			out = append(out, f.Target)
		}
	}
	slices.Sort(out)
	return out
}

// A plain go-sdk server answers an unknown URI with its own
// ResourceNotFoundError: -32602 with data {"uri": ...} at every version
// (MCPGODEBUG=customresnotfounderrcode=1 aside), which is 2026-07-28's
// code but not 2025-11-25's -32002; and a malformed URI with the same
// error, which is right.
func TestNotFoundGoSDK(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			r := run(t, connect(t, listServer("test://a"), version, nil), nil)
			if version < "2026-07-28" {
				assert.Equal(t, []string{"notfound.code"}, rulesIn(r, "notfound."), "%s", r)
				seen := findingsOf(r, "notfound.code")
				require.Len(t, seen, 1)
				assert.Regexp(t, `^test://mcpres-audit\.invalid/does-not-exist-[0-9a-f]{16}: answered with error -32602 \(Resource not found\), want -32002 at protocol 2025-11-25$`, seen[0])
			} else {
				assert.Empty(t, rulesIn(r, "notfound."), "%s", r)
			}
		})
	}
}

// Each rule of reads of what does not exist fires, alone among them, on
// a server that breaks it, in the eras where it is broken.
func TestNotFoundRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		answer func(version, uri string) (mcp.Result, error)
		want   map[string][]string // by version; nil: none in either
	}{
		{"the era's code, data naming the URI, -32602 for a malformed URI", func(version, uri string) (mcp.Result, error) {
			if madeUp(uri) {
				return nil, notFoundError(version, uri)
			}
			return nil, &jsonrpc.Error{Code: -32602, Message: "invalid URI"}
		}, nil},
		{"the era's not-found code for a malformed URI too", func(version, uri string) (mcp.Result, error) {
			return nil, notFoundError(version, uri)
		}, nil},
		{"empty contents for what does not exist", func(string, string) (mcp.Result, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
		}, map[string][]string{"2025-11-25": {"notfound.error", "read.malformed-uri"}, "2026-07-28": {"notfound.error", "read.malformed-uri"}}},
		{"the other era's code", func(version, uri string) (mcp.Result, error) {
			if madeUp(uri) {
				return nil, notFoundError(otherEra(version), uri)
			}
			return nil, &jsonrpc.Error{Code: -32602, Message: "invalid URI"}
		}, map[string][]string{"2025-11-25": {"notfound.code"}, "2026-07-28": {"error.reserved-code"}}}, // 2026-07-28 forbids -32002: one finding
		{"contents for what does not exist: it does, then", func(string, string) (mcp.Result, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://x", MIMEType: "text/plain", Text: "?"}}}, nil
		}, map[string][]string{"2025-11-25": {"read.malformed-uri"}, "2026-07-28": {"read.malformed-uri"}}},
		{"internal error for what does not exist", func(_, uri string) (mcp.Result, error) {
			if madeUp(uri) {
				return nil, &jsonrpc.Error{Code: -32603, Message: "internal error"}
			}
			return nil, &jsonrpc.Error{Code: -32602, Message: "invalid URI"}
		}, map[string][]string{"2025-11-25": {"notfound.code"}, "2026-07-28": {"notfound.code"}}},
		{"no data", func(version, uri string) (mcp.Result, error) {
			return nil, &jsonrpc.Error{Code: notFoundCode(version), Message: "Resource not found"}
		}, map[string][]string{"2025-11-25": {"notfound.data"}, "2026-07-28": {"notfound.data"}}},
		{"data naming another URI", func(version, _ string) (mcp.Result, error) {
			return nil, notFoundError(version, "test://elsewhere")
		}, map[string][]string{"2025-11-25": {"notfound.data"}, "2026-07-28": {"notfound.data"}}},
		{"contents for a malformed URI", func(version, uri string) (mcp.Result, error) {
			if madeUp(uri) {
				return nil, notFoundError(version, uri)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "?"}}}, nil
		}, map[string][]string{"2025-11-25": {"read.malformed-uri"}, "2026-07-28": {"read.malformed-uri"}}},
		{"internal error for a malformed URI", func(version, uri string) (mcp.Result, error) {
			if madeUp(uri) {
				return nil, notFoundError(version, uri)
			}
			return nil, &jsonrpc.Error{Code: -32603, Message: "internal error"}
		}, map[string][]string{"2025-11-25": {"notfound.malformed-uri"}, "2026-07-28": {"notfound.malformed-uri"}}},
		{"-32002 for a malformed URI", func(version, uri string) (mcp.Result, error) {
			if madeUp(uri) {
				return nil, notFoundError(version, uri)
			}
			return nil, &jsonrpc.Error{Code: -32002, Message: "Resource not found"}
		}, map[string][]string{"2026-07-28": {"error.reserved-code"}}}, // before, -32002 says not found, which is true
	} {
		for _, version := range eras {
			t.Run(c.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				s := notFoundServer(func(uri string) (mcp.Result, error) { return c.answer(version, uri) })
				r := run(t, connect(t, s, version, nil), nil)
				assert.Equal(t, c.want[version], rulesIn(r, "notfound.", "read.", "error."), "%s", r)
			})
		}
	}
}

// A finding names what was read: the URI made up, in the scheme of the
// first listed resource; the strings that are not URIs make one finding,
// which names each.
func TestNotFoundTargets(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			s := notFoundServer(func(string) (mcp.Result, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
			})
			r := run(t, connect(t, s, version, nil), nil)
			got := targets(r, "notfound.error")
			require.Len(t, got, 1, "%s", r)
			assert.Regexp(t, `^test://mcpres-audit\.invalid/does-not-exist-[0-9a-f]{16}$`, got[0])
			seen := findingsOf(r, "read.malformed-uri")
			require.Len(t, seen, 1, "%s", r)
			for _, bad := range malformedURIs {
				assert.Contains(t, seen[0], strconv.Quote(bad))
			}
			assert.True(t, r.Failed(), "read.malformed-uri is a MUST")
		})
	}
}

// Contents for the URI the audit made up say the server serves it: the
// not-found rules are skipped, not broken.
func TestNotFoundServed(t *testing.T) {
	t.Parallel()
	s := notFoundServer(func(uri string) (mcp.Result, error) {
		if madeUp(uri) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "anything"}}}, nil
		}
		return nil, &jsonrpc.Error{Code: -32602, Message: "invalid URI"}
	})
	r := run(t, connect(t, s, "2026-07-28", nil), nil)
	assert.Empty(t, rulesIn(r, "notfound.", "read."), "%s", r)
	assert.Contains(t, r.Unchecked["notfound.error"], "which the audit made up")
}

// At 2025-06-18, whose page says -32602 where 2026-07-28 says the code
// was -32002, either is taken.
func TestNotFound20250618(t *testing.T) {
	t.Parallel()
	for _, code := range []int64{-32002, -32602} {
		s := notFoundServer(func(uri string) (mcp.Result, error) {
			if madeUp(uri) {
				return nil, &jsonrpc.Error{Code: code, Message: "Resource not found", Data: json.RawMessage(fmt.Sprintf(`{"uri": %q}`, uri))}
			}
			return nil, &jsonrpc.Error{Code: -32602, Message: "invalid URI"}
		})
		r := run(t, connect(t, s, "2025-06-18", nil), nil)
		assert.Empty(t, rulesIn(r, "notfound.", "read.", "error."), "%d: %s", code, r)
	}
}

// Without a listed resource, the made-up URI takes the scheme of a
// listed template; with neither, the check is skipped.
func TestNotFoundScheme(t *testing.T) {
	t.Parallel()
	t.Run("template", func(t *testing.T) {
		t.Parallel()
		s := plainServer()
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "tmpl://items/{id}", Name: "item", MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			})
		var mu sync.Mutex
		var read []string
		forge(s, "resources/read", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
			mu.Lock()
			read = append(read, req.GetParams().(*mcp.ReadResourceParams).URI)
			mu.Unlock()
			return next(ctx, "resources/read", req)
		})
		r := run(t, connect(t, s, eras[len(eras)-1], nil), nil)
		assert.Empty(t, rulesIn(r, "notfound."), "%s", r)
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, read)
		assert.Regexp(t, `^tmpl://mcpres-audit\.invalid/does-not-exist-`, read[0])
		assert.Equal(t, malformedURIs, read[1:4])
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		r := run(t, connect(t, plainServer(), eras[len(eras)-1], nil), nil)
		assert.Empty(t, rulesIn(r, "notfound."), "%s", r)
		assert.Contains(t, r.Skipped, "not found: no listed resource or template to take a scheme from")
	})
}
