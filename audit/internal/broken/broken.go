// Package broken builds MCP servers that break the audit's rules on
// purpose, for the audit's tests and the mcpaudit command's: Base breaks
// none (but go-sdk's own not-found code before 2026-07-28), Breakers
// break one rule each on it, and Several breaks a few at once.
package broken

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"

	"github.com/mcpres/mcpres/internal/protocol"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Several returns the server that breaks several rules at once.
func Several() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "broken", Version: "v0"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	server.AddResource(&mcp.Resource{URI: "https://user:secret@example.com/notes", Name: "notes", MIMEType: "text/plain"}, textRead("hello"))
	server.AddResource(&mcp.Resource{URI: "data://config.json", Name: "config", MIMEType: "application/json"},
		read(&mcp.ResourceContents{URI: "data://config.json", MIMEType: "application/json", Text: `{"name": "broken",`}))
	jpeg := []byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0}
	server.AddResource(&mcp.Resource{URI: "data://logo.png", Name: "logo", MIMEType: "image/png"},
		read(&mcp.ResourceContents{URI: "data://logo.png", MIMEType: "image/png", Blob: jpeg}))
	Forge(server, protocol.MethodRead, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		res, err := next(ctx, protocol.MethodRead, req)
		if err != nil {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
		}
		return res, nil
	})
	return server
}

// Base returns a server that breaks no rule but go-sdk's not-found
// code at 2025-11-25: two text resources, a template whose variable it
// completes, and subscriptions to what exists only.
func Base() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "broken", Version: "v0"}, &mcp.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
		SubscribeHandler: func(_ context.Context, req *mcp.SubscribeRequest) error {
			if strings.Contains(req.Params.URI, "does-not-exist") { // the audit's made-up URI
				return &jsonrpc.Error{Code: -32602, Message: "no such resource"}
			}
			return nil
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			if req.Params.Argument.Name != "id" {
				return nil, &jsonrpc.Error{Code: -32602, Message: "no such variable"}
			}
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"1", "2"}, Total: 2}}, nil
		},
	})
	s.AddResource(res("test://a", "a"), textRead("hello"))
	s.AddResource(res("test://b", "b"), textRead("world"))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{id}", Name: "t", MIMEType: "text/plain"}, textRead("t"))
	return s
}

// Breakers break one rule each, on a Base server. The rules of
// notifications break only when the test makes a change (with
// Server.ResourceUpdated, Server.AddResource, or the tools of
// testdata/broken); subscribe.unsubscribed-silent only before 2026-07-28,
// where unsubscribing is a request the server can ignore.
var Breakers = map[string]func(s *mcp.Server){
	"list.ends": func(s *mcp.Server) {
		listPages(s, map[string]*mcp.ListResourcesResult{
			"":   {Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: "k1"},
			"k1": {Resources: []*mcp.Resource{res("test://b", "b")}, NextCursor: "k1"},
		})
	},
	"list.no-repeats": func(s *mcp.Server) {
		listPages(s, map[string]*mcp.ListResourcesResult{
			"":   {Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: "k1"},
			"k1": {Resources: []*mcp.Resource{res("test://a", "a")}},
		})
	},
	"list.stable": func(s *mcp.Server) {
		n := 0
		Forge(s, protocol.MethodListResources, func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
			if req.GetParams().(*mcp.ListResourcesParams).Cursor != "" {
				return nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"}
			}
			n++
			return &mcp.ListResourcesResult{Resources: []*mcp.Resource{res([]string{"test://a", "test://b"}[n%2], "x")}}, nil
		})
	},
	"cursor.invalid": func(s *mcp.Server) {
		Forge(s, protocol.MethodListResources, func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
			if req.GetParams().(*mcp.ListResourcesParams).Cursor == "" {
				return &mcp.ListResourcesResult{Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: "k1"}, nil
			}
			return &mcp.ListResourcesResult{Resources: []*mcp.Resource{res("test://b", "b")}}, nil
		})
	},
	"cursor.forgeable": func(s *mcp.Server) { // cursors are offsets: any number is a position
		all := []*mcp.Resource{res("test://a", "a"), res("test://b", "b")}
		Forge(s, protocol.MethodListResources, func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
			from := 0
			if cur := req.GetParams().(*mcp.ListResourcesParams).Cursor; cur != "" {
				n, err := strconv.Atoi(cur)
				if err != nil || n < 0 {
					return nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"}
				}
				from = min(n, len(all))
			}
			page := &mcp.ListResourcesResult{Resources: all[from:min(from+1, len(all))]}
			if from+1 < len(all) {
				page.NextCursor = strconv.Itoa(from + 1)
			}
			return page, nil
		})
	},
	"cursor.opaque": func(s *mcp.Server) {
		c := base64.StdEncoding.EncodeToString([]byte("after test://a"))
		listPages(s, map[string]*mcp.ListResourcesResult{
			"": {Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: c},
			c:  {Resources: []*mcp.Resource{res("test://b", "b")}},
		})
	},
	"list.uri": func(s *mcp.Server) {
		listPages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{res("test://a", "a"), res("not a uri", "x")}}})
	},
	"list.uri-credentials": func(s *mcp.Server) { s.AddResource(res("https://u:p@example.com/x", "x"), textRead("x")) },
	"list.name": func(s *mcp.Server) {
		listPages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{res("test://a", "")}}})
	},
	"list.uri-template": func(s *mcp.Server) {
		templatesAs(s, &mcp.ResourceTemplate{Name: "t"})
	},
	"read.listed": func(s *mcp.Server) {
		listPages(s, map[string]*mcp.ListResourcesResult{"": {Resources: []*mcp.Resource{res("test://a", "a"), res("test://gone", "gone")}}})
	},
	"read.contents": func(s *mcp.Server) { readAs(s, "test://b", nil) },
	"read.single-uri": func(s *mcp.Server) {
		readAs(s, "test://b", &mcp.ResourceContents{URI: "test://elsewhere", MIMEType: "text/plain", Text: "x"})
	},
	"read.blob-encoding": func(s *mcp.Server) {
		Forge(s, protocol.MethodRead, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
			if req.GetParams().(*mcp.ReadResourceParams).URI == "test://b" {
				return badBlob{&mcp.ReadResourceResult{}}, nil
			}
			return next(ctx, protocol.MethodRead, req)
		})
	},
	"read.content-uri":  func(s *mcp.Server) { readAs(s, "test://b", &mcp.ResourceContents{MIMEType: "text/plain", Text: "x"}) },
	"read.content-mime": func(s *mcp.Server) { readAs(s, "test://b", &mcp.ResourceContents{URI: "test://b", Text: "x"}) },
	"read.text-or-blob": func(s *mcp.Server) {
		readAs(s, "test://b", &mcp.ResourceContents{URI: "test://b", MIMEType: "text/plain", Text: "x", Blob: []byte("y")})
	},
	"read.true-type": func(s *mcp.Server) {
		s.AddResource(&mcp.Resource{URI: "test://b", Name: "b", MIMEType: "application/json"},
			read(&mcp.ResourceContents{URI: "test://b", MIMEType: "application/json", Text: `{"a":`}))
	},
	"read.text-as-text": func(s *mcp.Server) {
		readAs(s, "test://b", &mcp.ResourceContents{URI: "test://b", MIMEType: "text/plain", Blob: []byte("plain text")})
	},
	"read.agrees-with-list": func(s *mcp.Server) {
		readAs(s, "test://b", &mcp.ResourceContents{URI: "test://b", MIMEType: "text/markdown", Text: "# x"})
	},
	"notfound.error": func(s *mcp.Server) {
		notFoundAs(s, func(string) (mcp.Result, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
		})
	},
	"notfound.code": func(s *mcp.Server) {
		notFoundAs(s, func(string) (mcp.Result, error) { return nil, &jsonrpc.Error{Code: -32603, Message: "internal"} })
	},
	"notfound.data": func(s *mcp.Server) {
		notFoundAs(s, func(version string) (mcp.Result, error) {
			return nil, &jsonrpc.Error{Code: notFoundCode(version), Message: "not found"}
		})
	},
	"notfound.malformed-uri": func(s *mcp.Server) {
		malformedAs(s, func() (mcp.Result, error) { return nil, &jsonrpc.Error{Code: -32603, Message: "internal"} })
	},
	"read.malformed-uri": func(s *mcp.Server) {
		malformedAs(s, func() (mcp.Result, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://a", MIMEType: "text/plain", Text: "hello"}}}, nil
		})
	},
	"error.reserved-code": func(s *mcp.Server) {
		notFoundAs(s, func(string) (mcp.Result, error) {
			return nil, &jsonrpc.Error{Code: -32029, Message: "rate limited", Data: json.RawMessage(`{"uri": "x"}`)}
		})
	},
	"list.changed":       func(s *mcp.Server) { drop(s, protocol.NotificationListChanged) }, // the list changes, untold
	"subscribe.delivers": func(s *mcp.Server) { drop(s, protocol.NotificationResourceUpdated) },
	"subscribe.unsubscribed-silent": func(s *mcp.Server) { // before 2026-07-28: unsubscribing keeps the subscription
		Forge(s, protocol.MethodUnsubscribe, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
			req.GetParams().(*mcp.UnsubscribeParams).URI = "test://never-subscribed"
			return next(ctx, protocol.MethodUnsubscribe, req)
		})
	},
	"template.syntax": func(s *mcp.Server) { templatesAs(s, &mcp.ResourceTemplate{URITemplate: "test://t/{id", Name: "t"}) },
	"complete.max-values": func(s *mcp.Server) {
		var values []string
		for i := range 101 {
			values = append(values, fmt.Sprint(i))
		}
		completeAs(s, values, 101, false)
	},
	"complete.total":    func(s *mcp.Server) { completeAs(s, []string{"1", "2", "3"}, 1, false) },
	"complete.has-more": func(s *mcp.Server) { completeAs(s, []string{"1", "2", "3"}, 10, false) },
	"complete.unknown-argument": func(s *mcp.Server) {
		Forge(s, protocol.MethodComplete, func(context.Context, mcp.Request, mcp.MethodHandler) (mcp.Result, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"x"}}}, nil
		})
	},
	"cache.present": func(s *mcp.Server) {
		Forge(s, protocol.MethodRead, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
			if req.GetParams().(*mcp.ReadResourceParams).URI == "test://b" {
				return noHints{&mcp.ReadResourceResult{}}, nil
			}
			return next(ctx, protocol.MethodRead, req)
		})
	},
	"cache.same-scope": func(s *mcp.Server) {
		first := &mcp.ListResourcesResult{Resources: []*mcp.Resource{res("test://a", "a")}, NextCursor: "k1"}
		second := &mcp.ListResourcesResult{Resources: []*mcp.Resource{res("test://b", "b")}}
		first.CacheScope, second.CacheScope = "public", "private"
		listPages(s, map[string]*mcp.ListResourcesResult{"": first, "k1": second})
	},
	"cache.hints": func(s *mcp.Server) {
		Forge(s, protocol.MethodRead, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
			r, err := next(ctx, protocol.MethodRead, req)
			if rr, ok := r.(*mcp.ReadResourceResult); ok && rr != nil {
				rr.CacheScope = "shared"
			}
			return r, err
		})
	},
}

func notFoundCode(version string) int64 {
	if version >= protocol.NotFoundInvalidParamsSince {
		return -32602
	}
	return -32002
}

func res(uri, name string) *mcp.Resource {
	return &mcp.Resource{URI: uri, Name: name, MIMEType: "text/plain"}
}

func textRead(text string) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
	}
}

func read(contents ...*mcp.ResourceContents) mcp.ResourceHandler {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: contents}, nil
	}
}

// Forge makes s answer method with answer instead of its own handler:
// a way to make a server break a rule go-sdk would not let it break. A
// list or read result answer gives without a cacheScope gets "public",
// as go-sdk's server gives the results of its own handlers, so that a
// forged answer breaks no rule of caching it does not mean to.
func Forge(s *mcp.Server, method string, answer func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error)) {
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, m string, req mcp.Request) (mcp.Result, error) {
			if m != method {
				return next(ctx, m, req)
			}
			res, err := answer(ctx, req, next)
			var h *mcp.Cacheable
			switch r := res.(type) {
			case *mcp.ListResourcesResult:
				if r != nil {
					h = &r.Cacheable
				}
			case *mcp.ListResourceTemplatesResult:
				if r != nil {
					h = &r.Cacheable
				}
			case *mcp.ReadResourceResult:
				if r != nil {
					h = &r.Cacheable
				}
			}
			if h != nil && h.CacheScope == "" {
				h.CacheScope = "public"
			}
			return res, err
		}
	})
}

// listPages answers resources/list with pages by cursor; any other cursor
// is -32602.
func listPages(s *mcp.Server, pages map[string]*mcp.ListResourcesResult) {
	Forge(s, protocol.MethodListResources, func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
		if p, ok := pages[req.GetParams().(*mcp.ListResourcesParams).Cursor]; ok {
			return p, nil
		}
		return nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"}
	})
}

// templatesAs answers resources/templates/list with t alone.
func templatesAs(s *mcp.Server, t *mcp.ResourceTemplate) {
	Forge(s, protocol.MethodListTemplates, func(_ context.Context, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
		if req.GetParams().(*mcp.ListResourceTemplatesParams).Cursor != "" {
			return nil, &jsonrpc.Error{Code: -32602, Message: "invalid cursor"}
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{t}}, nil
	})
}

// readAs answers a read of uri with contents.
func readAs(s *mcp.Server, uri string, contents ...*mcp.ResourceContents) {
	Forge(s, protocol.MethodRead, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		if req.GetParams().(*mcp.ReadResourceParams).URI == uri {
			return &mcp.ReadResourceResult{Contents: contents}, nil
		}
		return next(ctx, protocol.MethodRead, req)
	})
}

// notFoundAs answers a read of a URI the base server does not hold (but
// not of a string that is not a URI).
func notFoundAs(s *mcp.Server, answer func(version string) (mcp.Result, error)) {
	Forge(s, protocol.MethodRead, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		uri := req.GetParams().(*mcp.ReadResourceParams).URI
		if uri == "test://a" || uri == "test://b" || strings.HasPrefix(uri, "test://t/") || !isURI(uri) {
			return next(ctx, protocol.MethodRead, req)
		}
		return answer(req.GetSession().(*mcp.ServerSession).InitializeParams().ProtocolVersion)
	})
}

// drop makes s send no notification of method.
func drop(s *mcp.Server, method string) {
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, m string, req mcp.Request) (mcp.Result, error) {
			if m == method {
				return nil, nil
			}
			return next(ctx, m, req)
		}
	})
}

// malformedAs answers a read of a string that is not a URI.
func malformedAs(s *mcp.Server, answer func() (mcp.Result, error)) {
	Forge(s, protocol.MethodRead, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		if !isURI(req.GetParams().(*mcp.ReadResourceParams).URI) {
			return answer()
		}
		return next(ctx, protocol.MethodRead, req)
	})
}

// isURI reports whether s looks like a URI to the breakers: a scheme and
// no space.
func isURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && !strings.ContainsRune(s, ' ')
}

// badBlob is a read result whose one content's blob is not base64, which
// go-sdk would never send.
type badBlob struct{ *mcp.ReadResourceResult }

// MarshalJSON writes the result with a blob that is not base64.
func (badBlob) MarshalJSON() ([]byte, error) {
	return []byte(`{"contents": [{"uri": "test://b", "mimeType": "application/octet-stream", "blob": "not base64!"}]}`), nil
}

// noHints is a read result of test://b without caching hints, which
// go-sdk's server would never send.
type noHints struct{ *mcp.ReadResourceResult }

// MarshalJSON writes the result without ttlMs and cacheScope.
func (noHints) MarshalJSON() ([]byte, error) {
	return []byte(`{"contents": [{"uri": "test://b", "mimeType": "text/plain", "text": "world"}]}`), nil
}

func completeAs(s *mcp.Server, values []string, total int, hasMore bool) {
	Forge(s, protocol.MethodComplete, func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		if req.GetParams().(*mcp.CompleteParams).Argument.Name != "id" {
			return next(ctx, protocol.MethodComplete, req)
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: total, HasMore: hasMore}}, nil
	})
}
