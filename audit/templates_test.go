package audit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cleanRegistry returns a registry with a static resource and a template
// whose variable it completes, and the server it is mounted on.
func cleanRegistry(t *testing.T) (*resource.Registry, *mcp.Server) {
	t.Helper()
	reg, err := resource.NewRegistry(&resource.Options{Logger: quiet})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.Add(&mcp.Resource{URI: "notes://today.txt", Name: "today", MIMEType: "text/plain"}, resource.Text("today")))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://day/{date}", Name: "day", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: vars.Get("date")}}}, nil
		},
		resource.WithCompleter("date", func(context.Context, string, map[string]string) ([]string, error) {
			var dates []string
			for d := range 150 { // more than one answer holds
				dates = append(dates, fmt.Sprintf("2026-%03d", d))
			}
			return dates, nil
		})))
	server, err := reg.NewServer(&mcp.Implementation{Name: "clean"}, &mcp.ServerOptions{Logger: quiet})
	require.NoError(t, err)
	return reg, server
}

// skipped reports whether r skipped a check whose reason contains s.
func skipped(r *audit.Report, s string) bool {
	return slices.ContainsFunc(r.Skipped, func(reason string) bool { return strings.Contains(reason, s) })
}

// completingServer returns a server like plainServer, with one resource
// and the template "x://{a}", that answers every completion with
// complete.
func completingServer(complete func(*mcp.CompleteParams) (*mcp.CompleteResult, error)) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "v0"}, &mcp.ServerOptions{
		Logger:             quiet,
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return complete(req.Params)
		},
	})
	addText(s, "x://a")
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "x://{a}", Name: "a", MIMEType: "text/plain"}, textHandler)
	return s
}

// completeA answers a completion of the variable a with values, total and
// hasMore, and of any other variable with invalid params.
func completeA(values []string, total int, hasMore bool) func(*mcp.CompleteParams) (*mcp.CompleteResult, error) {
	return func(p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
		if p.Argument.Name != "a" {
			return nil, &jsonrpc.Error{Code: -32602, Message: "no such variable"}
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: total, HasMore: hasMore}}, nil
	}
}

// addText adds a text resource at uri to s.
func addText(s *mcp.Server, uri string) {
	s.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/plain"}, textHandler)
}

// textHandler reads any URI as a line of text.
func textHandler(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "text"}}}, nil
}

// A registry's templates parse and its completions are bounded and
// honest, completing more than one answer holds.
func TestTemplatesClean(t *testing.T) {
	t.Parallel()
	for _, version := range eras {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			_, server := cleanRegistry(t)
			r := run(t, connect(t, server, version, nil), nil)
			assert.Empty(t, rulesIn(r, "template.", "complete."), "%s", r)
			assert.Equal(t, 1, r.Templates)
			assert.False(t, skipped(r, "completion"), "completions were checked: %q", r.Skipped)
		})
	}
}

// Each breakage of a template or completion rule is found, and only it.
func TestTemplatesBroken(t *testing.T) {
	t.Parallel()
	var many []string
	for i := range 101 {
		many = append(many, fmt.Sprint(i))
	}
	tests := []struct {
		name   string
		server func() *mcp.Server
		want   []string
	}{
		{"syntax", func() *mcp.Server {
			s := plainServer()
			addText(s, "x://a")
			forge(s, "resources/templates/list", func(context.Context, mcp.Request, mcp.MethodHandler) (mcp.Result, error) {
				return &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{{URITemplate: "x://{a", Name: "a"}}}, nil
			})
			return s
		}, []string{"template.syntax"}},
		{"max-values", func() *mcp.Server { return completingServer(completeA(many, 0, false)) }, []string{"complete.max-values"}},
		{"max-values-with-total", func() *mcp.Server { return completingServer(completeA(many, 101, false)) }, []string{"complete.max-values"}},
		{"total", func() *mcp.Server { return completingServer(completeA([]string{"1", "2", "3"}, 1, false)) }, []string{"complete.total"}},
		{"has-more", func() *mcp.Server { return completingServer(completeA([]string{"1", "2", "3"}, 10, false)) }, []string{"complete.has-more"}},
		{"honest", func() *mcp.Server { return completingServer(completeA([]string{"1", "2", "3"}, 10, true)) }, nil},
		{"unknown-completed", func() *mcp.Server {
			return completingServer(func(*mcp.CompleteParams) (*mcp.CompleteResult, error) {
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"x"}, Total: 1}}, nil
			})
		}, []string{"complete.unknown-argument"}},
		{"unknown-empty", func() *mcp.Server { // no suggestions: a fine answer
			return completingServer(func(p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
				if p.Argument.Name != "a" {
					return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
				}
				return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"1"}, Total: 1}}, nil
			})
		}, nil},
		{"unknown-any-code", func() *mcp.Server { // no code is named for it
			s := completingServer(completeA([]string{"1"}, 1, false))
			forge(s, "completion/complete", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
				if req.GetParams().(*mcp.CompleteParams).Argument.Name != "a" {
					return nil, &jsonrpc.Error{Code: -32603, Message: "internal"}
				}
				return next(ctx, "completion/complete", req)
			})
			return s
		}, nil},
		{"completion-fails", func() *mcp.Server { // an error for a real variable breaks nothing
			return completingServer(func(*mcp.CompleteParams) (*mcp.CompleteResult, error) {
				return nil, &jsonrpc.Error{Code: -32602, Message: "nothing to complete"}
			})
		}, nil},
	}
	for _, tt := range tests {
		for _, version := range eras {
			t.Run(tt.name+"/"+version, func(t *testing.T) {
				t.Parallel()
				r := run(t, connect(t, tt.server(), version, nil), &audit.Options{Wait: 100 * time.Millisecond})
				assert.Equal(t, tt.want, rulesIn(r, "template.", "complete."), "%s", r)
			})
		}
	}
}

// A server that does not advertise completions has its templates parsed
// and no completion asked for.
func TestTemplatesNoCompletions(t *testing.T) {
	t.Parallel()
	s := plainServer()
	addText(s, "x://a")
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "x://{a}", Name: "a"}, textHandler)
	asked := false
	forge(s, "completion/complete", func(ctx context.Context, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
		asked = true
		return next(ctx, "completion/complete", req)
	})
	r := run(t, connect(t, s, "2025-11-25", nil), nil)
	assert.Empty(t, rulesIn(r, "template.", "complete."), "%s", r)
	assert.True(t, skipped(r, "does not advertise completions"), "%q", r.Skipped)
	assert.False(t, asked)
}
