package resource_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// textOf is a template read function that answers with its name and the
// variables it was given.
func textOf(name string) resource.TemplateReadFunc {
	return func(_ context.Context, _ *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
		text := name
		for _, v := range vars.Template().Varnames() {
			text += " " + v + "=" + vars.Get(v)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
	}
}

// TestMostSpecificTemplateWins reads overlapping templates over the
// protocol, registered in both orders: the choice never depends on order.
func TestMostSpecificTemplateWins(t *testing.T) {
	t.Parallel()
	templates := []string{"file:///{+path}", "file:///~/{name}", "db://{table}/{id}", "db://{table}/schema", "ids://{id:3}", "ids://{name}"}
	want := map[string]string{
		"ids://abc":            "ids://{id:3} id=abc", // matches only URIs ids://{name} matches
		"ids://abcd":           "ids://{name} name=abcd",
		"file:///~/notes":      "file:///~/{name} name=notes",
		"file:///etc/hosts":    "file:///{+path} path=etc/hosts",
		"file:///~/a/b":        "file:///{+path} path=~/a/b",
		"db://users/schema":    "db://{table}/schema table=users",
		"db://users/42":        "db://{table}/{id} table=users id=42",
		"db://users/my%20id":   "db://{table}/{id} table=users id=my id",
		"file:///~/caf%C3%A9":  "file:///~/{name} name=café",
		"file:///%7E/literal":  "file:///{+path} path=~/literal", // the literal "~" is not "%7E"
		"db://a%2Fb/schema":    "db://{table}/schema table=a/b",
		"file:///~/":           "file:///~/{name} name=",
		"file:///dir/?x=1":     "file:///{+path} path=dir/?x=1",
		"db://users/42/extra":  "", // {id} stops at '/'
		"db://users":           "",
		"file:///~/bad%FFname": "", // invalid UTF-8
	}
	for _, order := range [][]string{templates, reversed(templates)} {
		reg := newRegistry(t, &resource.Options{Logger: quietLogger()})
		for _, tmpl := range order {
			require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: tmpl, Name: tmpl}, textOf(tmpl)))
		}
		h := connect(t, reg, "2026-07-28", nil, nil)
		for uri, text := range want {
			res, err := h.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
			if text == "" {
				assert.Equal(t, "Resource not found", rpcError(t, err).Message, "%s (order %v)", uri, order)
				continue
			}
			require.NoError(t, err, uri)
			assert.Equal(t, text, res.Contents[0].Text, "%s (order %v)", uri, order)
		}
	}
}

func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

func TestAddTemplateRefusesConflicts(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://{table}/{id}", Name: "row"}, textOf("row")))
	err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://{schema}/{key}", Name: "other"}, textOf("other"))
	require.ErrorIs(t, err, uritemplate.ErrConflict)
	assert.Contains(t, err.Error(), "both match db://v/v")

	tr, err := reg.ListResourceTemplates(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, tr.ResourceTemplates, 1, "a refused template is not listed")
	// Replacing a template by its own text is not a conflict.
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://{table}/{id}", Name: "row v2"}, textOf("row v2")))
	res, err := reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "db://t/1"}})
	require.NoError(t, err)
	assert.Equal(t, "row v2 table=t id=1", res.Contents[0].Text)
}

// TestShadowedTemplates: a template that others hide together is
// accepted, reported, and never read.
func TestShadowedTemplates(t *testing.T) {
	t.Parallel()
	reg := newRegistry(t, nil)
	for _, tmpl := range []string{"x://{/a,b}", "x://{/c}", "x:///{d}/{e}", "y://{+p}"} {
		require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: tmpl, Name: tmpl}, textOf(tmpl)))
	}
	assert.Equal(t, []string{"x://{/a,b}"}, reg.ShadowedTemplates())
	for uri, want := range map[string]string{"x:///1": "x://{/c} c=1", "x:///1/2": "x:///{d}/{e} d=1 e=2"} {
		res, err := reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		require.NoError(t, err, uri)
		assert.Equal(t, want, res.Contents[0].Text)
	}
	require.Equal(t, 1, reg.RemoveTemplates("x:///{d}/{e}"))
	assert.Empty(t, reg.ShadowedTemplates())
}

// TestSafePaths sends every traversal form through a template with
// WithSafePaths: each is answered as not found, and the read function
// never runs.
func TestSafePaths(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	reg := newRegistry(t, &resource.Options{Logger: quietLogger()})
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "file:///{+path}", Name: "file"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			calls.Add(1)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: vars.Get("path")}}}, nil
		}, resource.WithSafePaths()))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "logs://{service}{/parts*}", Name: "log"},
		func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
			calls.Add(1)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "log"}}}, nil
		}, resource.WithSafePaths()))
	ctx := context.Background()
	read := func(uri string) error {
		_, err := reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		return err
	}
	for _, uri := range []string{
		"file:///../etc/passwd",
		"file:///a/../../etc/passwd",
		"file:///%2e%2e/etc/passwd",
		"file:///..%2fetc%2fpasswd",
		"file:///a%2F..%2F..%2Fsecret",
		"file:////etc/passwd",
		"file:///%2Fetc/passwd",
		"file:///a%5C..%5Csecret",
		"file:///a%00.txt",
		"logs://api/../../etc",
		"logs://api/2026/%2E%2E",
	} {
		err := read(uri)
		var jerr *jsonrpc.Error
		require.True(t, errors.As(err, &jerr), "%s: %v", uri, err)
		assert.Equal(t, "Resource not found", jerr.Message, uri)
	}
	assert.Zero(t, calls.Load(), "no read function ran for an unsafe path")

	for _, uri := range []string{"file:///notes/a.txt", "file:///notes/..hidden", "file:///a%20b/c", "logs://api/2026/11"} {
		require.NoError(t, read(uri), uri)
	}
	assert.EqualValues(t, 4, calls.Load())
}
