package audit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Signatures of the image formats the read tests send.
var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01")
	jpegBytes = []byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0}
)

// readsServer returns plainServer holding res, whose read returns
// contents.
func readsServer(res *mcp.Resource, contents ...*mcp.ResourceContents) *mcp.Server {
	s := plainServer()
	s.AddResource(res, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: contents}, nil
	})
	return s
}

// forgeRead makes s answer a read of uri with answer, bypassing go-sdk's
// handler and its checks.
func forgeRead(s *mcp.Server, uri string, answer func() (mcp.Result, error)) {
	forge(s, "resources/read", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		if req.GetParams().(*mcp.ReadResourceParams).URI == uri {
			return answer()
		}
		return next(ctx, "resources/read", req)
	})
}

// rawRead is a read result that goes on the wire as raw JSON: a result
// go-sdk's types cannot even hold, such as a blob that is not base64.
type rawRead struct {
	*mcp.ReadResourceResult
	raw string
}

// MarshalJSON returns the raw JSON.
func (r rawRead) MarshalJSON() ([]byte, error) { return []byte(r.raw), nil }

// A registry serving text, JSON, a PNG and a template's listed instances
// breaks no rule of reads or of reads of what does not exist, in either
// era.
func TestReadsClean(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			reg, err := resource.NewRegistry(&resource.Options{Logger: quiet})
			require.NoError(t, err)
			t.Cleanup(func() { reg.Close() })
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://readme.txt", Name: "readme", MIMEType: "text/plain", Size: 5}, resource.Text("hello")))
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://config.json", Name: "config", MIMEType: "application/json"}, resource.Text(`{"ok": true}`)))
			require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://logo.png", Name: "logo", MIMEType: "image/png", Size: int64(len(pngBytes))}, resource.Bytes(pngBytes)))
			ids := []string{"1", "2"}
			require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "items://{id}", Name: "item", MIMEType: "application/json"},
				func(_ context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
					return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: fmt.Sprintf(`{"id": %q}`, vars.Get("id"))}}}, nil
				},
				resource.WithInstances(func(_ context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
					var items []cursor.Item[*mcp.Resource]
					for _, id := range ids {
						if id > after && len(items) < limit {
							uri, err := reg.Expand("items://{id}", "id", id)
							if err != nil {
								return nil, err
							}
							items = append(items, cursor.Item[*mcp.Resource]{Key: id, Value: &mcp.Resource{URI: uri, Name: "item " + id, MIMEType: "application/json"}})
						}
					}
					return items, nil
				})))
			server, err := reg.NewServer(&mcp.Implementation{Name: "clean"}, &mcp.ServerOptions{Logger: quiet})
			require.NoError(t, err)
			r := run(t, connect(t, server, version, nil), nil)
			assert.Empty(t, rulesIn(r, "read."), "%s", r)
			assert.Empty(t, rulesIn(r, "notfound."), "%s", r)
			assert.Equal(t, 5, r.Reads, "three static resources and two instances: %s", r)
		})
	}
}

// Each rule of reads fires, alone among them, on a plain go-sdk server
// that breaks it, in both eras.
func TestReadRules(t *testing.T) {
	t.Parallel()
	text := func(uri, mimeType string) *mcp.Resource {
		return &mcp.Resource{URI: uri, Name: "r", MIMEType: mimeType}
	}
	for _, c := range []struct {
		name   string
		server func() *mcp.Server
		want   []string
	}{
		{"clean text", func() *mcp.Server {
			return readsServer(text("test://a", "text/plain"), &mcp.ResourceContents{URI: "test://a", MIMEType: "text/plain", Text: "hello"})
		}, nil},
		{"an empty text as an empty blob", func() *mcp.Server {
			return readsServer(text("test://a", "text/plain"), &mcp.ResourceContents{URI: "test://a", MIMEType: "text/plain", Blob: []byte{}})
		}, nil},
		{"a listed resource that cannot be read", func() *mcp.Server {
			s := plainServer()
			s.AddResource(text("test://a", "text/plain"), func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return nil, &jsonrpc.Error{Code: -32603, Message: "disk on fire"}
			})
			return s
		}, []string{"read.listed"}},
		{"no contents: a resource that exists and is empty", func() *mcp.Server {
			s := readsServer(text("test://a", "text/plain"))
			forgeRead(s, "test://a", func() (mcp.Result, error) { return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil })
			return s
		}, nil},
		{"a null content", func() *mcp.Server {
			s := readsServer(text("test://a", "text/plain"))
			forgeRead(s, "test://a", func() (mcp.Result, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{nil}}, nil
			})
			return s
		}, []string{"read.contents"}},
		{"a single content with another URI", func() *mcp.Server {
			return readsServer(text("test://a", "text/plain"), &mcp.ResourceContents{URI: "test://b", MIMEType: "text/plain", Text: "hello"})
		}, []string{"read.single-uri"}},
		{"a single content with a fragment of the URI", func() *mcp.Server {
			return readsServer(text("test://a", "text/plain"), &mcp.ResourceContents{URI: "test://a#part", MIMEType: "text/plain", Text: "hello"})
		}, nil},
		{"two contents with other URIs: a directory, say", func() *mcp.Server {
			return readsServer(text("test://a", "text/plain"),
				&mcp.ResourceContents{URI: "test://a/1", MIMEType: "text/plain", Text: "one"},
				&mcp.ResourceContents{URI: "test://a/2", MIMEType: "text/plain", Text: "two"})
		}, nil},
		{"a content without uri", func() *mcp.Server {
			s := readsServer(text("test://a", "text/plain"))
			forgeRead(s, "test://a", func() (mcp.Result, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{MIMEType: "text/plain", Text: "hello"}}}, nil
			})
			return s
		}, []string{"read.content-uri"}},
		{"a content without mimeType", func() *mcp.Server {
			// go-sdk fills in the listed type: forge the answer.
			s := readsServer(text("test://a", "text/plain"))
			forgeRead(s, "test://a", func() (mcp.Result, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://a", Text: "hello"}}}, nil
			})
			return s
		}, []string{"read.content-mime"}},
		{"both text and blob", func() *mcp.Server {
			return readsServer(text("test://a", "text/plain"), &mcp.ResourceContents{URI: "test://a", MIMEType: "text/plain", Text: "hello", Blob: []byte("hello")})
		}, []string{"read.text-or-blob"}},
		{"neither text nor blob, no type anywhere", func() *mcp.Server {
			return readsServer(text("test://a", ""), &mcp.ResourceContents{URI: "test://a"})
		}, []string{"read.content-mime", "read.text-or-blob"}},
		{"a blob that is not base64", func() *mcp.Server {
			s := readsServer(text("test://a", "image/png"))
			forgeRead(s, "test://a", func() (mcp.Result, error) {
				return rawRead{&mcp.ReadResourceResult{}, `{"contents": [{"uri": "test://a", "mimeType": "image/png", "blob": "not base64!"}]}`}, nil
			})
			return s
		}, []string{"read.blob-encoding"}},
		{"text/plain that is not UTF-8", func() *mcp.Server {
			// A JSON string is UTF-8 by construction (go-sdk would turn
			// the bytes into U+FFFD): bytes that are not arrive as a blob.
			return readsServer(text("test://a", "text/plain"), &mcp.ResourceContents{URI: "test://a", MIMEType: "text/plain", Blob: []byte("caf\xe9 cr\xe8me")})
		}, []string{"read.true-type"}},
		{"application/json that does not parse", func() *mcp.Server {
			return readsServer(text("test://a", "application/json"), &mcp.ResourceContents{URI: "test://a", MIMEType: "application/json", Text: `{"name": "broken",`})
		}, []string{"read.true-type"}},
		{"image/png that is a JPEG", func() *mcp.Server {
			return readsServer(text("test://a", "image/png"), &mcp.ResourceContents{URI: "test://a", MIMEType: "image/png", Blob: jpegBytes})
		}, []string{"read.true-type"}},
		{"image/png sent as text", func() *mcp.Server {
			return readsServer(text("test://a", "image/png"), &mcp.ResourceContents{URI: "test://a", MIMEType: "image/png", Text: "PNG"})
		}, []string{"read.true-type"}},
		{"a type that is not a media type", func() *mcp.Server {
			return readsServer(text("test://a", ""), &mcp.ResourceContents{URI: "test://a", MIMEType: "text", Text: "hello"})
		}, []string{"read.true-type"}},
		{"UTF-8 text sent as a blob", func() *mcp.Server {
			return readsServer(text("test://a", "text/plain"), &mcp.ResourceContents{URI: "test://a", MIMEType: "text/plain", Blob: []byte("hello")})
		}, []string{"read.text-as-text"}},
		{"JSON sent as a blob that does not parse", func() *mcp.Server {
			return readsServer(text("test://a", "application/json"), &mcp.ResourceContents{URI: "test://a", MIMEType: "application/json", Blob: []byte(`{"a":`)})
		}, []string{"read.text-as-text", "read.true-type"}},
		{"a type other than the listed one", func() *mcp.Server {
			return readsServer(text("test://a", "text/plain"), &mcp.ResourceContents{URI: "test://a", MIMEType: "text/markdown", Text: "# hello"})
		}, []string{"read.agrees-with-list"}},
		{"a size other than the listed one", func() *mcp.Server {
			return readsServer(&mcp.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain", Size: 3}, &mcp.ResourceContents{URI: "test://a", MIMEType: "text/plain", Text: "hello"})
		}, []string{"read.agrees-with-list"}},
		{"the listed type, a parameter and case aside", func() *mcp.Server {
			return readsServer(&mcp.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain", Size: 5}, &mcp.ResourceContents{URI: "test://a", MIMEType: "Text/Plain; charset=utf-8", Text: "hello"})
		}, nil},
	} {
		for _, version := range eras {
			t.Run(c.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				r := run(t, connect(t, c.server(), version, nil), nil)
				assert.Equal(t, c.want, rulesIn(r, "read."), "%s", r)
				assert.Equal(t, 1, r.Reads)
				for _, id := range c.want {
					for _, f := range findingsOf(r, id) {
						assert.True(t, strings.HasPrefix(f, "test://a: "), "the finding names the resource read: %s", f)
					}
				}
			})
		}
	}
}

// Options.Reads limits the reads to the first listed resources, in list
// order; AllReads reads them all.
func TestReadsLimit(t *testing.T) {
	t.Parallel()
	s := plainServer()
	var mu sync.Mutex
	var read []string
	for i := range 5 {
		s.AddResource(&mcp.Resource{URI: fmt.Sprintf("test://%d", i), Name: "r", MIMEType: "text/plain"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			mu.Lock()
			defer mu.Unlock()
			read = append(read, req.Params.URI)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "x"}}}, nil
		})
	}
	cs := connect(t, s, eras[len(eras)-1], nil)
	r := run(t, cs, &audit.Options{Reads: 2})
	assert.Equal(t, 2, r.Reads)
	mu.Lock()
	// Later steps may read a resource again (subscriptions do).
	require.GreaterOrEqual(t, len(read), 2)
	assert.Equal(t, []string{"test://0", "test://1"}, read[:2], "the first two listed are read, in order")
	assert.NotContains(t, read, "test://2", "no other is")
	mu.Unlock()
	r = run(t, cs, &audit.Options{Reads: audit.AllReads})
	assert.Equal(t, 5, r.Reads)
}

// A finding of a read says what was seen: the declared type and what
// the bytes are.
func TestReadSeen(t *testing.T) {
	t.Parallel()
	s := readsServer(&mcp.Resource{URI: "test://logo.png", Name: "logo", MIMEType: "image/png"},
		&mcp.ResourceContents{URI: "test://logo.png", MIMEType: "image/png", Blob: jpegBytes})
	r := run(t, connect(t, s, eras[len(eras)-1], nil), nil)
	seen := findingsOf(r, "read.true-type")
	require.Len(t, seen, 1, "%s", r)
	assert.Contains(t, seen[0], `test://logo.png: declared "image/png"`)
	assert.Contains(t, seen[0], "signature")
	assert.False(t, r.Failed(), "read.true-type is ADVICE: the schema requires nothing of the type")
	assert.True(t, r.FailedAt(audit.Advice))
}
